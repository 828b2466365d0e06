from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator

from documents import permissions
from documents.errors import Forbidden

# Job JSON a list of questions never shows: left unread so a page does not load every trace.
LIST_DEFERRED = ("trace", "config", "answer__retrieved_documents")


def require_role(user, team, action: str) -> None:
    """documents.permissions' role check, refused with the 403 page (the message names the role)."""
    try:
        permissions.require_role(user, team, action)
    except Forbidden as exc:
        raise PermissionDenied(str(exc)) from exc


def paginate(request, queryset, per_page: int = 25):
    return Paginator(queryset, per_page).get_page(request.GET.get("page"))


def querystring_without_page(request) -> str:
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()
