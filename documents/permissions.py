"""Who may do what: team roles and the staff flag, decided here and nowhere else.

Each team membership has a role (documents.models.Role), and each role may do
what the roles below it may:

- viewer: reads the team's corpora and everything on them (documents,
  questions, answers, reviews, benchmarks, runs) and asks questions;
- annotator: also reviews answers, annotates the questions assigned to them
  and starts evaluation runs;
- reviewer: also creates and edits benchmarks and gold cases, creates
  annotation tasks and adjudicates;
- admin: also creates, uploads to, re-embeds and deletes the team's corpora,
  saves and deletes its presets, and adds members and sets their roles.

A superuser has every role in every team. Outside a team, a user sees nothing
of it: selectors scope through ``readable_corpora``, so another team's object
is simply not found (404); a member whose role is too low is refused (403).

The staff flag (``is_staff``) grants only site operations: the audit trail
(staff read their teams' events, superusers every event) and the operations
page (queues, stuck jobs, workers). It no longer grants changing corpora.
"""

from __future__ import annotations

from django.db.models import QuerySet

from documents.errors import Forbidden
from documents.models import ROLE_ORDER, Corpus, Membership, Role, Team

# What each role is needed for, in the words a refusal uses.
ROLE_FOR = {
    "ask": Role.VIEWER,
    "review answers": Role.ANNOTATOR,
    "annotate": Role.ANNOTATOR,
    "run evaluations": Role.ANNOTATOR,
    "edit gold cases": Role.REVIEWER,
    "edit benchmarks": Role.REVIEWER,
    "create annotation tasks": Role.REVIEWER,
    "adjudicate": Role.REVIEWER,
    "split the review queue": Role.REVIEWER,
    "change corpora": Role.ADMIN,
    "manage presets": Role.ADMIN,
    "manage members": Role.ADMIN,
}


def teams_of(user) -> QuerySet[Team]:
    """The teams whose corpora the user reads (superusers: every team)."""
    if not user.is_authenticated:
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    return Team.objects.filter(members=user)


def role_of(user, team: Team) -> str | None:
    """The user's role in the team; None for a non-member. Superusers are every team's admin."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    return Membership.objects.filter(team=team, user=user).values_list("role", flat=True).first()


def has_role(user, team: Team, role: str) -> bool:
    """Whether the user's role in the team is ``role`` or above."""
    held = role_of(user, team)
    return held is not None and ROLE_ORDER.index(held) >= ROLE_ORDER.index(role)


def require_role(user, team: Team, action: str) -> None:
    """Raise Forbidden unless the user may do ``action`` (a key of ROLE_FOR) in the team."""
    needed = ROLE_FOR[action]
    if not has_role(user, team, needed):
        held = role_of(user, team) or "not a member"
        raise Forbidden(
            f"To {action} in team {team.name!r} you need the {needed} role or above; yours is {held}."
        )


def teams_with_role(user, role: str) -> QuerySet[Team]:
    """The teams in which the user holds ``role`` or above (superusers: every team)."""
    if not user.is_authenticated:
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    roles = ROLE_ORDER[ROLE_ORDER.index(role) :]
    return Team.objects.filter(memberships__user=user, memberships__role__in=roles)


def is_member(user, team: Team) -> bool:
    return role_of(user, team) is not None


def readable_corpora(user) -> QuerySet[Corpus]:
    """Corpora the user may read: those of their teams (superusers: all)."""
    if not user.is_authenticated:
        return Corpus.objects.none()
    qs = Corpus.objects.select_related("team")
    if user.is_superuser:
        return qs
    return qs.filter(team__members=user).distinct()


def can_manage_corpora(user) -> bool:
    """Whether the user administers any team, and so may create corpora and change some."""
    return teams_with_role(user, Role.ADMIN).exists()


def can_change_corpus(user, corpus: Corpus) -> bool:
    """Upload to, re-embed, delete the corpus or its documents: the admins of its team."""
    return has_role(user, corpus.team, Role.ADMIN)


def can_create_corpus_for(user, team: Team) -> bool:
    return has_role(user, team, Role.ADMIN)


def can_read_audit_trail(user) -> bool:
    return bool(user.is_authenticated and user.is_staff)


def can_read_operations(user) -> bool:
    """Queue depths, stuck jobs and workers: staff, who run the installation."""
    return bool(user.is_authenticated and user.is_staff)


def audited_teams(user) -> QuerySet[Team] | None:
    """The teams whose audit events the user reads; None for every event, a team's or not (superusers)."""
    return None if user.is_superuser else teams_of(user)
