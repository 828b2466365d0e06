"""Writes of the qa app: asking, running the pipeline's stages, storing answers.

The pipeline itself (qa.pipeline) knows nothing of Django; this module feeds
it the corpus through qa.adapters and stores what it returns. A question is
a persisted job: ``question_ask`` creates it and queues the retrieval task;
each stage's task hands the run so far (``qa.pipeline.run.PipelineRun``,
ranking and answer attempts included) to the next stage's task through the
Question row as versioned JSON: retrieval, generation, citation,
verification, each on its own queue, so LLM-bound stages can get their own
workers. Each stage claims the row for itself (``_claim``) and hands on with
one fenced write, so a redelivered or re-queued stage finds nothing to do or
redoes the same work from the same stored run; only the last stage writes the
answer, once.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from documents.models import Corpus, Document, Sentence
from groundedqa_site import jobs
from qa import clients, presets
from qa.adapters import DjangoCorpusIndex
from qa.errors import (
    ConversationMismatch,
    CorpusNotReady,
    QuestionInvalid,
    QueueUnavailable,
    TeamPresetExists,
    TeamPresetInvalid,
)
from qa.models import Answer, AnswerSentence, Citation, Conversation, Question, TeamPreset
from qa.pipeline import runner, stages
from qa.pipeline.factory import Pipeline, build_pipeline
from qa.pipeline.run import RUN_FORMAT_VERSION, PipelineRun, StageRun, load_run
from qa.pipeline.types import ScoredPassage

logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000
# The stage a question waits for, by the stage it was running when its lease ran out.
WAITING_STAGE = {"retrieval": "", **{stage: stage for stage in stages.ANSWER_STAGES}}
RELEASED = jobs.RELEASED
# Queued by name: the tasks module calls these services, so they do not import it.
RETRIEVE_QUESTION_TASK = "qa.tasks.retrieve_question"
GENERATE_ANSWER_TASK = "qa.tasks.generate_answer"
# The task that runs the stage a queued question waits for ("": retrieval).
STAGE_TASKS = {
    "": RETRIEVE_QUESTION_TASK,
    "generation": GENERATE_ANSWER_TASK,
    "citation": "qa.tasks.cite_answer",
    "verification": "qa.tasks.verify_answer",
}


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


def _create_question(*, user, corpus, text, config, conversation, is_evaluation=False) -> Question:
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
    )


def question_ask(
    *,
    user,
    corpus: Corpus,
    text: str,
    preset: str | None = None,
    conversation=None,
    parameters: Mapping[str, object] | None = None,
) -> Question:
    """Create the job; queue its retrieval stage once the row is committed. No preset: QA_DEFAULT_PRESET.

    ``preset`` is a built-in preset or one of the corpus team's; ``parameters``
    (qa.pipeline.parameters) change it for this question only.
    """
    preset = preset or presets.default_preset()
    text, config = _validate(corpus=corpus, text=text, preset=preset, parameters=parameters)
    with transaction.atomic():
        question = _create_question(
            user=user, corpus=corpus, text=text, config=config, conversation=conversation
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
) -> tuple[Question, PipelineRun | None]:
    """``answer_now``, also returning the run (evaluation scores it; None when no stage was claimed).

    ``history``: earlier (question, answer) turns that were never asked here (a
    benchmark's conversation); by default, the conversation's own questions.

    The pipeline is built once and the ranking handed straight from retrieval
    to generation: no JSON round trip and one corpus index, unlike two tasks.
    ``config`` runs that configuration (an evaluation run's, stored when it
    was created) instead of resolving ``preset`` now.
    """
    preset = preset or presets.default_preset()
    text, config = _validate(corpus=corpus, text=text, preset=preset, config=config)
    question = _create_question(
        user=user,
        corpus=corpus,
        text=text,
        config=config,
        conversation=conversation,
        is_evaluation=is_evaluation,
    )
    run = None
    # In process, a transient failure is not put back in the queue: the caller is waiting.
    retrieved = _retrieve(question.pk, retry=False, history=history)
    if retrieved is not None:
        pipeline, run, ranked = retrieved
        claimed = _claim(question.pk, waiting_stage="generation", stage="generation")
        if claimed is not None:
            with jobs.heartbeat(Question, claimed.pk, claimed.lease_owner):
                # All three answering stages under the one claim: no hand-over in between.
                _, run = _generate(claimed, pipeline, run, ranked, retry=False)
    question.refresh_from_db()
    return question, run


def _claim(question_id: int, *, waiting_stage: str, stage: str) -> Question | None:
    """Atomically move a queued question into ``stage`` under a lease; a second delivery finds nothing."""
    now = timezone.now()
    claimed = Question.objects.filter(
        pk=question_id, status=Question.Status.QUEUED, stage=waiting_stage
    ).update(
        status=Question.Status.RUNNING,
        stage=stage,
        started_at=now,
        **jobs.lease_taken(jobs.new_owner(), now),
    )
    if not claimed:
        logger.info("question %s is not waiting for %s: taken, finished or deleted", question_id, stage)
        return None
    return Question.objects.select_related("corpus", "conversation").get(pk=question_id)


def _fenced(question: Question):
    """The question's row, as long as this stage still holds its lease."""
    return Question.objects.filter(pk=question.pk, lease_owner=question.lease_owner)


def _fail(question: Question, run: PipelineRun) -> None:
    message = run.failure.message if run.failure else ""
    if question.attempts > 1:
        message = f"{message} (attempt {question.attempts} of {settings.JOB_MAX_ATTEMPTS})"
    _fenced(question).update(
        status=Question.Status.FAILED,
        stage="",
        error=message,
        finished_at=timezone.now(),
        trace=run.to_json(),
        **RELEASED,
    )


def _retry_later(question: Question, exc: Exception, *, retry: bool) -> bool:
    """Put the stage back in the queue after a transient failure; False when it should fail instead."""
    if not (retry and jobs.is_transient(exc)) or jobs.attempts_exhausted(question.attempts):
        return False
    jobs.reset_connection_after(exc)
    when = jobs.retry_at(question.attempts)
    logger.warning("question %s: %s failed (%s); retrying at %s", question.pk, question.stage, exc, when)
    try:
        _fenced(question).update(
            status=Question.Status.QUEUED,
            stage=WAITING_STAGE[question.stage],
            resend_at=when,
            error="",
            **RELEASED,
        )
    except DatabaseError:
        logger.warning("question %s: could not schedule the retry; the reaper will", question.pk)
    return True


def _stage_task(waiting_stage: str) -> str:
    return STAGE_TASKS[waiting_stage]


def questions_reap(*, now=None) -> int:
    """Re-queue (or, after too many attempts, fail) stages whose lease expired; send due retries.

    Every write is conditional on what was read, so a stage finishing at the same
    moment, or a second reaper, leaves it alone.
    """
    now = now or timezone.now()
    lease = timedelta(seconds=settings.JOB_LEASE_SECONDS)
    expired = Question.objects.filter(
        Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True, started_at__lt=now - lease),
        status=Question.Status.RUNNING,
    )
    touched = 0
    for pk, stage, attempts, owner in expired.values_list("pk", "stage", "attempts", "lease_owner"):
        row = Question.objects.filter(pk=pk, status=Question.Status.RUNNING, lease_owner=owner)
        if jobs.attempts_exhausted(attempts):
            touched += row.update(
                status=Question.Status.FAILED,
                stage="",
                finished_at=now,
                error=f"The worker running this question's {stage or 'first'} stage stopped {attempts} "
                "times (killed, out of memory or restarted), so it was given up. Ask again; "
                "if it happens again, the worker log says what stopped it.",
                **RELEASED,
            )
        else:
            touched += row.update(
                status=Question.Status.QUEUED, stage=WAITING_STAGE.get(stage, ""), resend_at=now, **RELEASED
            )
    due = Question.objects.filter(status=Question.Status.QUEUED, resend_at__lte=now)
    for pk, waiting in due.values_list("pk", "stage"):
        # Sent again one lease later if still unclaimed by then (the message may be lost).
        if Question.objects.filter(pk=pk, status=Question.Status.QUEUED, resend_at__lte=now).update(
            resend_at=jobs.lease_until(now)
        ):
            jobs.enqueue(_stage_task(waiting), pk, queue=jobs.REQUEUED_QUEUE)
            touched += 1
    return touched


def _pipeline(question: Question, *, version: int | None = None) -> Pipeline:
    """The question's preset built over the corpus at ``version`` (None: the current one)."""
    return build_pipeline(
        presets.config_from_dict(question.config),
        index=DjangoCorpusIndex(question.corpus, version=version),
        clients=clients.model_clients(),
    )


def question_retrieve(*, question_id: int, retry: bool = True) -> bool:
    """Stage 1: rewrite a follow-up, retrieve and rerank. Returns whether generation should follow.

    With ``retry``, a transient failure puts the stage back in the queue for later.
    """
    return _retrieve(question_id, retry=retry) is not None


Retrieved = tuple[Pipeline, PipelineRun, tuple[ScoredPassage, ...]]


def _retrieve(
    question_id: int, *, retry: bool, history: Sequence[tuple[str, str]] | None = None
) -> Retrieved | None:
    """Stage 1; the pipeline, the run so far and the ranking when generation should follow."""
    question = _claim(question_id, waiting_stage="", stage="retrieval")
    if question is None:
        return None
    with jobs.heartbeat(Question, question.pk, question.lease_owner):
        return _retrieve_claimed(question, retry=retry, history=history)


def _retrieve_claimed(
    question: Question, *, retry: bool, history: Sequence[tuple[str, str]] | None = None
) -> Retrieved | None:
    question_id = question.pk
    run = PipelineRun(question=question.text, preset=question.preset)
    started_at, clock = _now_iso(), time.perf_counter()
    try:
        pipeline = _pipeline(question)
        if history is None:
            history = _conversation_history(question)
        started = time.perf_counter()
        if not pipeline.config.rewrite:  # the flows without the rewrite search a follow-up as asked
            history = ()
        rewritten = runner.rewrite_question(question.text, history, llm=pipeline.llm)
        standalone = rewritten.question
        conversation = rewritten if history else None
        run = replace(run, standalone=standalone, conversation=conversation).timed(
            rewrite=time.perf_counter() - started
        )
        run, retrieval = runner.retrieve_stage(pipeline, run)
    except (clients.ConfigurationError, runner.PipelineError) as exc:
        _fail(question, run.failed("retrieval", str(exc)))
        return None
    except Exception as exc:  # noqa: BLE001 - the job must end failed with a reason, not hang in running
        if _retry_later(question, exc, retry=retry):
            return None
        logger.exception("retrieval failed for question %s", question_id)
        _fail(question, run.failed("retrieval", f"Retrieval failed: {exc}"))
        return None
    record = StageRun("retrieval", _worker(question), started_at, time.perf_counter() - clock)
    run = replace(run, stage_runs=run.stage_runs + (record,))
    if not _hand_on(
        question, run, "generation", standalone_text=standalone, corpus_version=pipeline.index.version
    ):
        logger.warning("question %s: retrieval lost its lease; its result is dropped", question_id)
        return None
    return pipeline, run, retrieval.ranked


def _hand_on(question: Question, run: PipelineRun, stage: str, **columns) -> bool:
    """Queue the question for ``stage`` with the run so far; False when this stage lost its lease.

    The next stage's message may be lost (the broker or a worker's main process
    dying with it); ``resend_at`` has the reaper send it again if no stage has
    claimed the question by then.
    """
    return bool(
        _fenced(question).update(
            trace=run.to_json(),
            stage=stage,
            status=Question.Status.QUEUED,
            attempts=0,
            resend_at=jobs.lease_until(),
            **columns,
            **RELEASED,
        )
    )


def _now_iso() -> str:
    return timezone.now().isoformat(timespec="milliseconds")


def _worker(question: Question) -> str:
    """The worker process named by the lease owner ("host:pid:token"), for the trace."""
    return question.lease_owner.rsplit(":", 1)[0]


def question_stage(*, question_id: int, stage: stages.AnswerStage, retry: bool = True) -> str | None:
    """Run one answering stage (generation, citation or verification) of a queued question.

    Returns the stage the question waits for next, whose task the caller
    sends; None when there is none (answered, failed, put back for a retry,
    or not this stage's turn: a redelivered message finds nothing to claim).
    """
    question = _claim(question_id, waiting_stage=stage, stage=stage)
    if question is None:
        return None
    with jobs.heartbeat(Question, question.pk, question.lease_owner):
        return _stage_claimed(question, stage, retry=retry)


def question_answer_stages(*, question_id: int, retry: bool = True) -> Answer | None:
    """Every answering stage of a retrieved question, in turn, in this process (tests, tools)."""
    stage = "generation"
    while stage:
        stage = question_stage(question_id=question_id, stage=stage, retry=retry)
    return Answer.objects.filter(question_id=question_id).first()


def _handed_over(question: Question, stage: str) -> PipelineRun | None:
    """The run the previous stage stored; None (the question failed, saying why) when unusable."""
    try:
        run = load_run(question.trace, question=question.text)
    except ValueError:  # a format this code does not know: written by newer code
        run = PipelineRun(question=question.text, preset=question.preset)
    if run.version != RUN_FORMAT_VERSION:
        # Version 1 handed its ranking over in a column that no longer exists.
        message = "Retrieval ran before an upgrade changed how stages hand over; ask the question again."
        _fail(question, run.failed(stage, message))
        return None
    if run.retrieval is None:
        _fail(question, run.failed(stage, f"{stage.capitalize()} started before retrieval finished."))
        return None
    if stages.next_stage(run) != stage:
        # Stored by a version of the stages that handed over differently.
        _fail(
            question,
            run.failed(
                stage,
                f"{stage.capitalize()} found the run waiting for another stage; ask the question again.",
            ),
        )
        return None
    return run


def _stage_claimed(question: Question, stage: stages.AnswerStage, *, retry: bool) -> str | None:
    run = _handed_over(question, stage)
    if run is None:
        return None
    try:
        # The version retrieval ranked; documents deleted or replaced since drop out of it.
        pipeline = _pipeline(question, version=question.corpus_version)
        ranked = runner.ranking_from_run(run, pipeline.index)
        run = stages.run_stage(stage, pipeline, run, ranked, worker=_worker(question))
    except (clients.ConfigurationError, runner.PipelineError) as exc:
        _fail(question, run.failed(stage, str(exc)))
        return None
    except Exception as exc:  # noqa: BLE001 - reported on the job; the traceback goes to the log
        if _retry_later(question, exc, retry=retry):
            return None
        logger.exception("%s failed for question %s", stage, question.pk)
        _fail(question, run.failed(stage, f"{stage.capitalize()} failed: {exc}"))
        return None
    following = stages.next_stage(run)
    if following is None:
        _store_answer(question, run)
        return None
    if not _hand_on(question, run, following):
        logger.warning("question %s: %s lost its lease; its result is dropped", question.pk, stage)
        return None
    return following


def _generate(
    question: Question, pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage], *, retry: bool
) -> tuple[Answer | None, PipelineRun]:
    """Every answering stage in this process, under the one claim (``answer_now``)."""
    try:
        run = runner.answer_stage(pipeline, run, ranked, worker=_worker(question))
    except (clients.ConfigurationError, runner.PipelineError) as exc:
        run = run.failed("generation", str(exc))
        _fail(question, run)
        return None, run
    except Exception as exc:  # noqa: BLE001 - reported on the job; the traceback goes to the log
        if _retry_later(question, exc, retry=retry):
            return None, run
        logger.exception("generation failed for question %s", question.pk)
        run = run.failed("generation", f"Generation failed: {exc}")
        _fail(question, run)
        return None, run
    return _store_answer(question, run), run


def _store_answer(question: Question, run: PipelineRun) -> Answer | None:
    result = run.answer
    sentence_pks = {c.id for s in result.sentences for c in s.citations}
    live = set(Sentence.objects.filter(pk__in=sentence_pks).values_list("pk", flat=True))
    document_pks = dict(
        Document.objects.filter(
            corpus=question.corpus,
            external_id__in={c.document_id for s in result.sentences for c in s.citations},
        ).values_list("external_id", "pk")
    )
    with transaction.atomic():
        # Fenced: a stage that lost its lease (its worker was presumed dead) writes nothing,
        # and the one-to-one Answer refuses a second answer in any case.
        finished = _fenced(question).update(
            status=Question.Status.DONE, stage="", trace=run.to_json(), finished_at=timezone.now(), **RELEASED
        )
        if not finished:
            logger.warning("question %s: generation lost its lease; its answer is dropped", question.pk)
            return None
        answer = Answer.objects.create(
            question=question,
            text=result.text,
            refused=result.refused,
            disagreement=result.disagreement,
            verified=result.verified,
            note=result.note,
            retrieved_documents=list(result.retrieved_documents),
            confidence=result.confidence,
            kind=result.kind or ("unanswerable" if result.refused else "answerable"),
            missing=list(result.missing),
        )
        for ordinal, sentence in enumerate(result.sentences):
            row = AnswerSentence.objects.create(
                answer=answer, ordinal=ordinal, text=sentence.text, support=sentence.support
            )
            Citation.objects.bulk_create(
                Citation(
                    answer_sentence=row,
                    ordinal=position,
                    sentence_id=cited.id if cited.id in live else None,
                    document_external_id=cited.document_id,
                    document_title=cited.document_title[:500],
                    document_pk=document_pks.get(cited.document_id),
                    label=cited.label,
                    sentence_ordinal=cited.ordinal,
                    text=cited.text,
                    start=cited.start,
                    end=cited.end,
                )
                for position, cited in enumerate(sentence.citations)
            )
    return answer


def _conversation_history(question: Question) -> list[tuple[str, str]]:
    """Earlier (question, answer) turns of the same conversation, oldest first."""
    if question.conversation_id is None:
        return []
    earlier = (
        Question.objects.filter(conversation_id=question.conversation_id, created_at__lt=question.created_at)
        .select_related("answer")
        .order_by("created_at")
    )
    return [
        (q.standalone_text or q.text, getattr(q, "answer", None) and q.answer.text or "") for q in earlier
    ][-3:]


# --- team presets ------------------------------------------------------------------

TEAM_PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$")


def team_preset_create(
    *, user, team, name: str, base: str, parameters: Mapping[str, object], description: str = ""
) -> TeamPreset:
    """Save ``base`` plus ``parameters`` under ``name`` for ``team``; the caller checked membership.

    The configuration is resolved once here, so a preset that could never run is refused now.
    """
    name = (name or "").strip()
    if not TEAM_PRESET_NAME.match(name):
        raise TeamPresetInvalid(
            f"Preset name {name!r}: 1 to 50 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    if name in presets.PRESET_NAMES:
        raise TeamPresetInvalid(f"{name!r} is a built-in preset's name; choose another.")
    if base not in presets.PRESET_NAMES:
        raise TeamPresetInvalid(
            f"Unknown base preset {base!r}; choose one of {', '.join(presets.PRESET_NAMES)}."
        )
    config = presets.with_parameters(presets.get_preset(base), parameters)
    try:
        with transaction.atomic():
            return TeamPreset.objects.create(
                team=team,
                name=name,
                description=(description or "").strip(),
                base=base,
                parameters=config.parameters,
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
    except IntegrityError as exc:  # the (team, name) constraint: someone saved that name first
        raise TeamPresetExists(f"Team {team.name} already has a preset named {name!r}.") from exc


def team_preset_delete(*, preset: TeamPreset) -> None:
    """Questions and evaluation runs that used it keep the configuration they stored."""
    preset.delete()
