"""Who may do what: team membership and staff rights, decided here and nowhere else.

- Reading: a user reads the corpora of the teams they belong to, and
  everything on them (documents, questions, answers, reviews, benchmarks,
  runs); a superuser reads all. Every selector scopes through
  ``readable_corpora``, so another team's object is simply not found (404).
- Changing corpora (create, upload, re-ingest, delete): staff only, and a
  new corpus only for a team they belong to (superusers: any team).
- The audit trail: staff read their teams' events, superusers every event.
- The operations page (queues, stuck jobs, workers): staff.
"""

from __future__ import annotations

from django.db.models import QuerySet

from documents.models import Corpus, Team


def teams_of(user) -> QuerySet[Team]:
    """The teams whose corpora the user reads (superusers: every team)."""
    if not user.is_authenticated:
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    return Team.objects.filter(members=user)


def is_member(user, team: Team) -> bool:
    return user.is_authenticated and (user.is_superuser or team.members.filter(pk=user.pk).exists())


def readable_corpora(user) -> QuerySet[Corpus]:
    """Corpora the user may read: those of their teams (superusers: all)."""
    if not user.is_authenticated:
        return Corpus.objects.none()
    qs = Corpus.objects.select_related("team")
    if user.is_superuser:
        return qs
    return qs.filter(team__members=user).distinct()


def can_manage_corpora(user) -> bool:
    """Staff create corpora, upload and delete documents; analysts ask and review."""
    return bool(user.is_authenticated and user.is_staff)


def can_create_corpus_for(user, team: Team) -> bool:
    return can_manage_corpora(user) and is_member(user, team)


def can_read_audit_trail(user) -> bool:
    return bool(user.is_authenticated and user.is_staff)


def can_read_operations(user) -> bool:
    """Queue depths, stuck jobs and workers: staff, who run the installation."""
    return bool(user.is_authenticated and user.is_staff)


def audited_teams(user) -> QuerySet[Team] | None:
    """The teams whose audit events the user reads; None for every event, a team's or not (superusers)."""
    return None if user.is_superuser else teams_of(user)
