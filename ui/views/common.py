from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator

from documents import permissions

# Job JSON a list of questions never shows: left unread so a page does not load every trace.
LIST_DEFERRED = ("trace", "config", "answer__retrieved_documents")


def staff_required(view):
    """Signed-in staff only; a signed-in analyst gets 403, an anonymous visitor the sign-in page."""

    @login_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not permissions.can_manage_corpora(request.user):
            raise PermissionDenied("Only staff can change corpora.")
        return view(request, *args, **kwargs)

    return wrapped


def paginate(request, queryset, per_page: int = 25):
    return Paginator(queryset, per_page).get_page(request.GET.get("page"))


def querystring_without_page(request) -> str:
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()
