"""Reads of the qa app; team scoping and prefetching live here."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Prefetch, Q, QuerySet
from django.http import Http404

from documents.permissions import teams_of
from documents.selectors import corpora_for_user
from qa.models import AnswerSentence, Citation, Question, TeamPreset
from qa.pipeline.checks.reply import Reply, ReplyThresholds, decide_reply
from qa.pipeline.checks.spans import spans_by_sentence
from qa.pipeline.checks.verification import AnswerSpan
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.flow.run import PipelineRun, load_run

logger = logging.getLogger(__name__)

# Which questions a list shows: the ones people asked (the default), the ones
# evaluation runs asked, or both.
ORIGINS = ("asked", "evaluation", "all")
# A question in these states has not ended yet.
PENDING = (Question.Status.QUEUED, Question.Status.RUNNING)


def by_origin(qs: QuerySet, origin: str = "asked", *, prefix: str = "") -> QuerySet:
    """Keep the rows whose question has this origin; ``prefix`` reaches the question ("question__")."""
    if origin == "all":
        return qs
    if origin not in ORIGINS:
        raise ValueError(f"unknown question origin {origin!r}; use one of {', '.join(ORIGINS)}")
    # The parts of a decomposed question (the agentic preset) show under it, not as questions of their own.
    return qs.filter(**{f"{prefix}is_evaluation": origin == "evaluation", f"{prefix}part_of__isnull": True})


def questions_for_user(user) -> QuerySet[Question]:
    """Questions on corpora the user may read."""
    return Question.objects.filter(corpus__in=corpora_for_user(user)).select_related("corpus", "user")


def with_answer(qs: QuerySet[Question]) -> QuerySet[Question]:
    sentences = AnswerSentence.objects.order_by("ordinal").prefetch_related(
        Prefetch("citations", queryset=Citation.objects.order_by("ordinal"))
    )
    return qs.select_related("answer").prefetch_related(Prefetch("answer__sentences", queryset=sentences))


def question_get_for_user(user, pk) -> Question:
    question = with_answer(questions_for_user(user)).filter(pk=pk).first()
    if question is None:
        raise Http404("No such question.")
    return question


def question_wait_finished(question: Question, *, seconds: float) -> None:
    """Return once ``question`` is done or failed, or after ``seconds``, whichever comes first.

    Woken by the database's announcement when the question ends (migration 0011's
    trigger), not by polling: a waiting client sees its answer the moment it is
    stored, and costs nothing while it waits. Listens before it looks, so an
    answer stored in between is seen by the look rather than missed. Needs the
    connection outside a transaction (a notification is delivered between
    transactions), as it is in a request.
    """
    if seconds <= 0 or connection.in_atomic_block:
        return
    channel = f'"qa_question_{int(question.pk)}"'
    with connection.cursor() as cursor:
        cursor.execute(f"LISTEN {channel}")
    try:
        if Question.objects.filter(pk=question.pk, status__in=PENDING).exists():
            for _ in connection.connection.notifies(timeout=seconds, stop_after=1):
                pass
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"UNLISTEN {channel}")


def question_history(user, *, search: str = "", corpus=None, origin: str = "asked") -> QuerySet[Question]:
    """The user's own questions, newest first, optionally searched in question and answer text.

    Evaluation runs' questions are left out unless ``origin`` asks for them.
    """
    qs = by_origin(questions_for_user(user).filter(user=user).select_related("answer"), origin)
    if corpus is not None:
        qs = qs.filter(corpus=corpus)
    if search:
        qs = qs.filter(Q(text__icontains=search) | Q(answer__text__icontains=search))
    return qs.order_by("-created_at")


def question_run(question: Question) -> PipelineRun:
    """The question's pipeline run, from its stored trace in any format version.

    A trace this code cannot read (a newer format, a damaged row) shows as a
    run with no stages rather than breaking the pages that show the question.
    """
    try:
        return load_run(question.trace, question=question.text, error=question.error)
    except (ValueError, TypeError, KeyError, AttributeError):
        logger.warning("question %s: unreadable trace, shown as empty", question.pk, exc_info=True)
        return PipelineRun(question=question.text, preset=question.preset)


@dataclass(frozen=True)
class AnswerPresentation:
    reply: Reply
    generator: str  # the generator that ran (a preset's LLM generator may have had a stand-in)
    spans: dict[str, AnswerSpan] = field(default_factory=dict)  # spans_by_sentence: by sentence text


def answer_presentation(answer) -> AnswerPresentation:
    """How a stored answer is shown: its reply outcome under the thresholds of the configuration it
    ran with (qa.pipeline.checks.reply decides), and which generator wrote it, for the sentence labels.

    Computed from stored fields each time, so answers stored before outcomes existed get one too.
    """
    question = answer.question
    run = question_run(question)
    spans = spans_by_sentence(run)
    config = run.answering.config if run.answering is not None else None
    if config is not None:
        return AnswerPresentation(decide_reply(answer, ReplyThresholds.of(config)), config.generator, spans)
    stored = (question.config or {}).get("answer") or {}
    try:
        config = AnswerConfig(**{k: v for k, v in stored.items() if k in AnswerConfig.__dataclass_fields__})
    except (TypeError, ValueError):
        config = AnswerConfig()
    # With no record of the generator, nothing says the sentences are quotes.
    return AnswerPresentation(
        decide_reply(answer, ReplyThresholds.of(config)), stored.get("generator", ""), spans
    )


def team_presets_for_user(user) -> QuerySet[TeamPreset]:
    """The presets of the user's teams, by team then name."""
    return TeamPreset.objects.filter(team__in=teams_of(user)).select_related("team", "created_by")


def team_preset_get_for_user(user, pk) -> TeamPreset:
    preset = team_presets_for_user(user).filter(pk=pk).first()
    if preset is None:
        raise Http404("No such team preset (or it belongs to a team you are not in).")
    return preset


def team_preset_named(team, name: str) -> TeamPreset | None:
    return TeamPreset.objects.filter(team=team, name=name).select_related("team").first()
