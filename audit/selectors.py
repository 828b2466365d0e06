"""Reading the audit trail; whose events a user reads is documents.permissions.audited_teams's to say."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from audit.models import AuditEvent


def audit_events_for(*, teams: QuerySet | None, action: str = "", actor: str = "") -> QuerySet[AuditEvent]:
    """Events of these teams (None: every event, a team's or not), newest first."""
    events = AuditEvent.objects.all()
    if teams is not None:
        events = events.filter(team_id__in=teams.values("pk"))
    if action:
        events = events.filter(action=action)
    if actor:
        events = events.filter(Q(actor_name__iexact=actor))
    return events.order_by("-created_at", "-id")
