"""Reading the audit trail: staff see their teams' events, superusers every event."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from audit.models import AuditEvent


def audit_events_for(user, *, action: str = "", actor: str = "") -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if not user.is_superuser:
        events = events.filter(team_id__in=user.teams.values("pk"))
    if action:
        events = events.filter(action=action)
    if actor:
        events = events.filter(Q(actor_name__iexact=actor))
    return events.order_by("-created_at", "-id")
