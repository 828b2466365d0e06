"""The audit trail page: who uploaded, deleted, reviewed or corrected what (staff only)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.views.decorators.http import require_GET

from audit.models import AuditEvent
from audit.selectors import audit_events_for
from documents import permissions
from ui.views.common import paginate, querystring_without_page


@login_required
@require_GET
def audit_trail(request):
    if not permissions.can_read_audit_trail(request.user):
        raise PermissionDenied("Only staff can read the audit trail.")
    action = request.GET.get("action", "")
    action = action if action in AuditEvent.Action.values else ""
    actor = request.GET.get("actor", "").strip()[:150]
    events = audit_events_for(teams=permissions.audited_teams(request.user), action=action, actor=actor)
    page = paginate(request, events, 50)
    return render(
        request,
        "ui/audit.html",
        {
            "page": page,
            "action": action,
            "actor": actor,
            "actions": AuditEvent.Action.choices,
            "querystring": querystring_without_page(request),
        },
    )
