"""API-wide error shaping: every client error is JSON with a readable "detail"."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.defaults import page_not_found
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class ClientError(Exception):
    """A domain error a client can fix; services raise it, the API shows it."""

    http_status = 400

    def __init__(self, message: str, *, http_status: int | None = None):
        super().__init__(message)
        if http_status is not None:
            self.http_status = http_status


def exception_handler(exc, context):
    if isinstance(exc, ClientError):
        return Response({"detail": str(exc)}, status=exc.http_status)
    return drf_exception_handler(exc, context)


def not_found(request, exception=None):
    """404 for URLs no view matched: JSON under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
