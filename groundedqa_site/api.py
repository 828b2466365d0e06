"""API-wide error shaping: the one place domain errors become HTTP status codes.

Services raise domain errors (``documents.errors`` and the errors of qa and
review built on its kinds); they know nothing of HTTP. The REST framework
calls ``exception_handler`` for anything a view lets through, and answers
with the status of the error's kind and its message as ``detail``.

Django's own error handlers (``handler400/403/404/500`` in the URLconf) answer
the errors no API view handled (an unmatched URL, an exception that escaped) the
same way under /api/, so a client never gets an HTML page there; elsewhere they
render the site's friendly pages (templates/400.html ... 500.html).
"""

from __future__ import annotations

import re

from django.apps import apps
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from documents.errors import (
    Conflict,
    DomainError,
    Forbidden,
    NotFound,
    TooLarge,
    Unavailable,
    Unsupported,
)

# Most specific kinds first: an error may be of two kinds (an upload that is
# too large is also an IngestError, which is Invalid).
_STATUS_BY_KIND: tuple[tuple[type[DomainError], int], ...] = (
    (NotFound, status.HTTP_404_NOT_FOUND),
    (Forbidden, status.HTTP_403_FORBIDDEN),
    (Conflict, status.HTTP_409_CONFLICT),
    (TooLarge, status.HTTP_413_REQUEST_ENTITY_TOO_LARGE),
    (Unsupported, status.HTTP_415_UNSUPPORTED_MEDIA_TYPE),
    (Unavailable, status.HTTP_503_SERVICE_UNAVAILABLE),
)

# One wording per kind of error Django itself raises (docs/api.md lists them). A missing
# object keeps the "No such <thing>." its selector gives; Django's generic lookup says
# "No Corpus matches the given query.", which is rewritten to the same form.
BAD_REQUEST = "Bad request: the server could not read it."
FORBIDDEN = "You do not have permission to perform this action."
SERVER_ERROR = "Server error: the request failed on the server. The server log has the details."
_GENERIC_NOT_FOUND = re.compile(r"^No (\w+) matches the given query\.$")


def status_for(error: DomainError) -> int:
    """The HTTP status of a domain error: its kind's, or 400 for an invalid request."""
    for kind, code in _STATUS_BY_KIND:
        if isinstance(error, kind):
            return code
    return status.HTTP_400_BAD_REQUEST


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return Response({"detail": str(exc)}, status=status_for(exc))
    if isinstance(exc, Http404):
        exc = Http404(not_found_detail(exc))
    return drf_exception_handler(exc, context)


def not_found_detail(exc: Http404) -> str:
    message = str(exc)
    generic = _GENERIC_NOT_FOUND.match(message)
    if generic:
        return f"No such {_verbose_name(generic.group(1))}."
    return message or "No such object."


def _verbose_name(object_name: str) -> str:
    for model in apps.get_models():
        if model._meta.object_name == object_name:
            return str(model._meta.verbose_name)
    return object_name.lower()


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def bad_request(request, exception=None):
    if _is_api(request):
        return JsonResponse({"detail": BAD_REQUEST}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    if _is_api(request):
        return JsonResponse({"detail": FORBIDDEN}, status=403)
    return defaults.permission_denied(request, exception)


def not_found(request, exception=None):
    """404 for URLs no view matched (and Http404 outside the REST views): JSON under /api/."""
    if _is_api(request):
        return JsonResponse({"detail": f"No such resource: {request.path}"}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _is_api(request):
        return JsonResponse({"detail": SERVER_ERROR}, status=500)
    return defaults.server_error(request)
