"""API-wide error shaping: the one place domain errors become HTTP status codes.

Services raise domain errors (``documents.errors`` and the errors of qa and
review built on its kinds); they know nothing of HTTP. The REST framework
calls ``exception_handler`` for anything a view lets through, and answers
with the status of the error's kind and its message as ``detail``.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.views.defaults import page_not_found
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


def status_for(error: DomainError) -> int:
    """The HTTP status of a domain error: its kind's, or 400 for an invalid request."""
    for kind, code in _STATUS_BY_KIND:
        if isinstance(error, kind):
            return code
    return status.HTTP_400_BAD_REQUEST


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return Response({"detail": str(exc)}, status=status_for(exc))
    return drf_exception_handler(exc, context)


def not_found(request, exception=None):
    """404 for URLs no view matched: JSON under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
