"""Asking a question: validate it, store it as a job, and queue it or answer it in this process."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from django.db import transaction
from django.utils import timezone

from documents.models import Corpus, Document
from groundedqa_site import jobs
from qa import presets, scopes
from qa.errors import (
    ConversationMismatch,
    CorpusNotReady,
    QuestionInvalid,
    QueueUnavailable,
)
from qa.models import Conversation, Question
from qa.pipeline.flow.run import PipelineRun, load_run
from qa.pipeline.reading.dates import DocumentScope
from qa.services.decomposition import question_run_here
from qa.services.stage_jobs import RETRIEVE_QUESTION_TASK

logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000


def _validate(
    *,
    corpus: Corpus,
    text: str,
    preset: str,
    parameters: Mapping[str, object] | None = None,
    config: presets.PipelineConfig | None = None,
) -> tuple[str, presets.PipelineConfig]:
    """The question's text and the configuration it runs with: ``config``, or the preset resolved."""
    text = (text or "").strip()
    if not text:
        raise QuestionInvalid("The question is empty.")
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionInvalid(f"The question is longer than {MAX_QUESTION_CHARS} characters.")
    if config is None:
        config = presets.resolve(preset, team=corpus.team, parameters=parameters)
    if not Document.objects.filter(corpus=corpus, status=Document.Status.READY).exists():
        raise CorpusNotReady(f"Corpus {corpus.name!r} has no ready documents yet.")
    return text, config


def _create_question(
    *, user, corpus, text, config, conversation, is_evaluation=False, scope: DocumentScope | None = None
) -> Question:
    if conversation is not None and (conversation.corpus_id != corpus.pk or conversation.user_id != user.pk):
        raise ConversationMismatch("That conversation belongs to another corpus or user.")
    if conversation is None:
        conversation = Conversation.objects.create(user=user, corpus=corpus)
    return Question.objects.create(
        user=user,
        corpus=corpus,
        conversation=conversation,
        text=text,
        preset=config.name,
        config=config.to_dict(),
        is_evaluation=is_evaluation,
        **scopes.scope_fields(scope),
    )


def question_ask(
    *,
    user,
    corpus: Corpus,
    text: str,
    preset: str | None = None,
    conversation=None,
    parameters: Mapping[str, object] | None = None,
    scope: DocumentScope | None = None,
) -> Question:
    """Create the job; queue its retrieval stage once the row is committed. No preset: QA_DEFAULT_PRESET.

    ``preset`` is a built-in preset or one of the corpus team's; ``parameters``
    (qa.pipeline.config.parameters) change it for this question only; ``scope`` (qa.scopes.scope_for)
    limits the documents searched.
    """
    preset = preset or presets.default_preset()
    text, config = _validate(corpus=corpus, text=text, preset=preset, parameters=parameters)
    with transaction.atomic():
        question = _create_question(
            user=user, corpus=corpus, text=text, config=config, conversation=conversation, scope=scope
        )
        question_id = question.pk
        # If the message is lost before a worker claims the question (a worker's main process
        # killed with it prefetched), the reaper sends it again from then on.
        Question.objects.filter(pk=question_id).update(resend_at=jobs.lease_until())
        transaction.on_commit(lambda: _enqueue_or_fail(RETRIEVE_QUESTION_TASK, question_id))
    return question


def _enqueue_or_fail(task_name: str, question_id: int) -> None:
    """Send the task; if the broker refuses, the question fails now, saying why, rather than wait forever."""
    try:
        jobs.enqueue(task_name, question_id)
    except Exception as exc:  # noqa: BLE001 - any broker failure (disk full, read-only, unreachable) means no job
        logger.exception("question %s could not be queued", question_id)
        message = (
            f"The job queue did not accept this question ({type(exc).__name__}: {exc}). "
            "Check that the Celery broker (CELERY_BROKER_URL, or the folder CELERY_BROKER_DIR) is "
            "reachable and writable, then ask again."
        )
        Question.objects.filter(pk=question_id).update(
            status=Question.Status.FAILED, stage="", error=message, finished_at=timezone.now()
        )
        raise QueueUnavailable(message) from exc


def answer_now(
    *,
    user,
    corpus: Corpus,
    text: str,
    preset: str | None = None,
    conversation=None,
    is_evaluation: bool = False,
    scope: DocumentScope | None = None,
) -> Question:
    """Run every stage in this process (the `ask` command uses it; evaluation, the ``_with_run`` form).

    ``user`` is whoever asks: the caller names one, none is made up here.
    ``is_evaluation`` marks a question an evaluation run asked, which the
    review queue and the histories leave out unless asked for.
    """
    question, _ = answer_now_with_run(
        user=user,
        corpus=corpus,
        text=text,
        preset=preset,
        conversation=conversation,
        is_evaluation=is_evaluation,
        scope=scope,
    )
    return question


def answer_now_with_run(
    *,
    user,
    corpus: Corpus,
    text: str,
    preset: str | None = None,
    conversation=None,
    is_evaluation: bool = False,
    history: Sequence[tuple[str, str]] | None = None,
    config: presets.PipelineConfig | None = None,
    scope: DocumentScope | None = None,
    on_created: Callable[[Question], None] | None = None,
) -> tuple[Question, PipelineRun | None]:
    """``answer_now``, also returning the run (evaluation scores it; a failed run has no answer).

    ``on_created`` is called with the question's row before any stage runs (an evaluation run
    records which question its case is asking, so a run resumed after its worker died adopts it).

    ``history``: earlier (question, answer) turns that were never asked here (a
    benchmark's conversation); by default, the conversation's own questions.

    The stages run through the same runner and stage jobs as a queued question's
    (``question_run_here``), every one in this process: the pipeline is built once and
    the ranking handed straight from retrieval to generation.
    ``config`` runs that configuration (an evaluation run's, stored when it
    was created) instead of resolving ``preset`` now.
    """
    preset = preset or presets.default_preset()
    text, config = _validate(corpus=corpus, text=text, preset=preset, config=config)
    # One commit for the row and what the caller records of it: a process killed between the two
    # would leave a question the resumed evaluation run does not know it asked (and asks again).
    with transaction.atomic():
        question = _create_question(
            user=user,
            corpus=corpus,
            text=text,
            config=config,
            conversation=conversation,
            is_evaluation=is_evaluation,
            scope=scope,
        )
        if on_created is not None:
            on_created(question)
    question_run_here(question.pk, history=history)
    question.refresh_from_db()
    return question, load_run(question.trace, question=question.text)
