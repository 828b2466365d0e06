"""Reads of the qa app; team scoping and prefetching live here."""

from __future__ import annotations

import logging

from django.db.models import Prefetch, Q, QuerySet
from django.http import Http404

from documents.selectors import corpora_for_user
from qa.models import AnswerSentence, Citation, Question
from qa.pipeline.run import PipelineRun, load_run

logger = logging.getLogger(__name__)


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


def question_history(user, *, search: str = "", corpus=None) -> QuerySet[Question]:
    """The user's own questions, newest first, optionally searched in question and answer text."""
    qs = questions_for_user(user).filter(user=user).select_related("answer")
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
