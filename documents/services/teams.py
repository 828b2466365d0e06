"""Team memberships and their roles, changed by the team's admins (documents.permissions checks who)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from audit.models import AuditEvent
from audit.services import audit_record
from documents.errors import LastAdmin, MembershipInvalid
from documents.models import Membership, Role, Team


def _other_admins(team: Team, user) -> bool:
    return Membership.objects.filter(team=team, role=Role.ADMIN).exclude(user=user).exists()


def membership_set(*, team: Team, username: str, role: str, actor) -> Membership:
    """Add the user to the team with ``role``, or change their role; the team keeps at least one admin."""
    if role not in Role.values:
        raise MembershipInvalid(f"Role {role!r}: use one of {', '.join(Role.values)}.")
    username = (username or "").strip()
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise MembershipInvalid(f"No user named {username!r}.")
    with transaction.atomic():
        # Two admins demoting each other at once must not both succeed: the team row serialises them.
        Team.objects.select_for_update().get(pk=team.pk)
        current = Membership.objects.filter(team=team, user=user).first()
        previous = current.role if current else None
        if previous == Role.ADMIN and role != Role.ADMIN and not _other_admins(team, user):
            raise LastAdmin(f"{username} is the only admin of {team.name}; make someone else admin first.")
        membership, _ = Membership.objects.update_or_create(team=team, user=user, defaults={"role": role})
        audit_record(
            actor=actor,
            action=AuditEvent.Action.MEMBER_ROLE,
            target_type="team",
            target_id=team.pk,
            target_label=f"{username} in team {team.name}",
            team_id=team.pk,
            detail={"user": username, "role": role, "previous": previous},
        )
    return membership


def membership_remove(*, team: Team, user, actor) -> None:
    """Take the user out of the team; the team keeps at least one admin."""
    with transaction.atomic():
        Team.objects.select_for_update().get(pk=team.pk)
        current = Membership.objects.filter(team=team, user=user).first()
        if current is None:
            return
        if current.role == Role.ADMIN and not _other_admins(team, user):
            raise LastAdmin(
                f"{user.get_username()} is the only admin of {team.name}; make someone else admin first."
            )
        current.delete()
        audit_record(
            actor=actor,
            action=AuditEvent.Action.MEMBER_REMOVE,
            target_type="team",
            target_id=team.pk,
            target_label=f"{user.get_username()} in team {team.name}",
            team_id=team.pk,
            detail={"user": user.get_username(), "previous": current.role},
        )
