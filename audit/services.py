"""Recording accountable actions. Services call ``audit_record`` inside their own transaction,
so an action that rolls back leaves no event, and one that commits always has one."""

from __future__ import annotations

from audit.models import AuditEvent


def audit_record(
    *,
    actor,
    action: str,
    target_type: str,
    target_id: int | None,
    target_label: str,
    team_id: int | None,
    detail: dict | None = None,
) -> AuditEvent:
    signed_in = actor is not None and getattr(actor, "is_authenticated", False)
    return AuditEvent.objects.create(
        actor=actor if signed_in else None,
        actor_name=actor.get_username() if signed_in else "",
        action=action,
        team_id=team_id,
        target_type=target_type,
        target_id=target_id,
        target_label=target_label[:500],
        detail=detail or {},
    )
