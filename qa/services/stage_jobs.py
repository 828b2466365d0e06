"""The question as a job: each pipeline stage claimed under a lease, handed on, and reaped.

The pipeline itself (qa.pipeline) knows nothing of Django; this module feeds
it the corpus through qa.adapters and stores what it returns. A question is
a persisted job: ``question_ask`` creates it and queues the retrieval task;
each stage's task hands the run so far (``qa.pipeline.flow.run.PipelineRun``,
ranking and answer attempts included) to the next stage's task through the
Question row as versioned JSON: retrieval, generation, citation,
verification, each on its own queue, so LLM-bound stages can get their own
workers. Each stage claims the row for itself (``_claim``) and hands on with
one fenced write, so a redelivered or re-queued stage finds nothing to do or
redoes the same work from the same stored run; only the last stage writes the
answer, once.

The stages run through the one runner (``qa.pipeline.flow.runner.run_stages``),
with ``StoredStages`` as its executor: the runner says which stage follows,
the executor claims, runs ``runner.run_step`` and hands on. A worker that also
serves the next stage's queue runs that stage itself, right after, instead of
sending its task (``question_stages_run``): the hand-over through the row (the
checkpoint a crash falls back to) is the same, only the message, and with it
the wait for a free process, a fresh database connection and rebuilding the
pipeline, is left out. ``ask``, ``chat`` and evaluation run every stage this
way in their own process (``every_stage_here``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from documents.models import Document, Sentence
from groundedqa_site import jobs, logs
from qa import clients, presets, scopes
from qa.adapters import DjangoCorpusIndex
from qa.models import Answer, AnswerSentence, Citation, Question
from qa.pipeline.flow import runner, stages
from qa.pipeline.flow.factory import Pipeline, build_pipeline
from qa.pipeline.flow.run import RUN_FORMAT_VERSION, PipelineRun, StageRun, load_run

logger = logging.getLogger(__name__)

# The stage a question waits for, by the stage it was running when its lease ran out.
# A decomposed question (qa.services.decomposition) plans in place of retrieval, then waits for its parts
# ("decomposed") and combines their answers.
WAITING_STAGE = {
    "retrieval": "",
    "planning": "",
    "combination": "decomposed",
    **{stage: stage for stage in stages.ANSWER_STAGES},
}
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
    "decomposed": "qa.tasks.combine_answers",
}


def _claim(question_id: int, *, waiting_stage: str, stage: str, with_trace: bool = True) -> Question | None:
    """Atomically move a queued question into ``stage`` under a lease; a second delivery finds nothing.

    ``with_trace=False`` leaves the stored run unread, for a stage that has it in hand.
    """
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
    claimed = Question.objects.select_related("corpus", "conversation")
    return (claimed if with_trace else claimed.defer("trace")).get(pk=question_id)


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
                "times (killed, out of memory, past its time limit or restarted), so it was given up. "
                "Ask again; "
                "if it happens again, the worker log says what stopped it.",
                **RELEASED,
            )
        else:
            touched += row.update(
                status=Question.Status.QUEUED, stage=WAITING_STAGE.get(stage, ""), resend_at=now, **RELEASED
            )
    due = Question.objects.filter(status=Question.Status.QUEUED, resend_at__lte=now)
    for pk, waiting, attempts, waiting_since in due.values_list(
        "pk", "stage", "attempts", Coalesce("started_at", "created_at")
    ):
        queue, again = _resend_plan(attempts=attempts, waiting_since=waiting_since, now=now)
        if Question.objects.filter(pk=pk, status=Question.Status.QUEUED, resend_at__lte=now).update(
            resend_at=again
        ):
            jobs.enqueue(_stage_task(waiting), pk, queue=queue)
            touched += 1
    return touched


# The longest pause between two copies of a message that may be lost.
MAX_RESEND_INTERVAL = timedelta(minutes=10)


def _resend_plan(*, attempts: int, waiting_since: datetime, now: datetime) -> tuple[str | None, datetime]:
    """Where a queued stage's task is sent again, and when the next copy is due if it is still unclaimed.

    A stage that was claimed before (its worker died, or it failed transiently)
    goes to the ``requeued`` queue, which every QA worker consumes beside the
    stage queues and takes first when a process is free (groundedqa_site/
    broker.py), so it does not wait behind the questions asked since. A stage
    never claimed is almost always still waiting in its own queue behind other
    questions; its message is lost only when a worker's main process died
    holding it. Its copy goes to the back of that same queue, where it runs
    after the original (finding nothing to claim) unless the original is gone.
    Either way the next copy waits as long as the question has waited so far
    (at least a lease): a copy sent every lease filled the queue with copies of
    the questions waiting in it, and a stage whose worker had died waited behind
    them for a minute (bench faults, Redis).
    """
    lease = timedelta(seconds=settings.JOB_LEASE_SECONDS)
    again = now + min(max(lease, now - waiting_since), MAX_RESEND_INTERVAL)
    return (jobs.REQUEUED_QUEUE if attempts else None), again


def _pipeline(question: Question, *, version: int | None = None) -> Pipeline:
    """The question's preset built over the corpus at ``version`` (None: the current one)."""
    index = DjangoCorpusIndex(question.corpus, version=version, scope=scopes.question_scope(question))
    return build_pipeline(
        presets.config_from_dict(question.config), index=index, clients=clients.model_clients(index.space)
    )


def question_retrieve(*, question_id: int, retry: bool = True) -> bool:
    """Stage 1: rewrite a follow-up, retrieve and rerank. Returns whether generation should follow.

    With ``retry``, a transient failure puts the stage back in the queue for later.
    """
    return _retrieve(question_id, retry=retry) is not None


def _retrieve(
    question_id: int, *, retry: bool, history: Sequence[tuple[str, str]] | None = None
) -> runner.Held | None:
    """Stage 1; the pipeline, the run so far and the ranking when generation should follow."""
    question = _claim(question_id, waiting_stage="", stage="retrieval")
    if question is None:
        return None
    with jobs.heartbeat(Question, question.pk, question.lease_owner):
        return _retrieve_claimed(question, retry=retry, history=history)


def _retrieve_claimed(
    question: Question, *, retry: bool, history: Sequence[tuple[str, str]] | None = None
) -> runner.Held | None:
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
        rewritten = runner.rewrite_question(question.text, history, llm=pipeline.llm, models=pipeline.models)
        standalone = rewritten.question
        conversation = rewritten if history else None
        run = replace(run, standalone=standalone, conversation=conversation).timed(
            rewrite=time.perf_counter() - started
        )
        held = runner.run_step(runner.RETRIEVAL, runner.Held(pipeline, run))
        run = held.run
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
    return replace(held, run=run)


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
    _, left = runner.run_stages(StoredStages(question_id, runs_on=no_stage_here, retry=retry), stage)
    return left


def every_stage_here(task: str) -> bool:
    """For ``ask``, ``chat`` and evaluation: the caller waits, so each stage runs in its process."""
    return True


def no_stage_here(task: str) -> bool:
    return False


@dataclass(frozen=True)
class StoredStages:
    """The runner's executor for a stored question: each stage claims the row under a lease, runs
    ``runner.run_step`` and hands the run on through the row (the last stores the answer), so a
    worker killed inside or between stages leaves the question queued or under an expiring lease
    for the reaper. A following stage runs in this process when ``runs_on`` says this worker serves
    its task (``jobs.runs_here``; ``every_stage_here`` for ``ask``, ``chat`` and evaluation), right after,
    from what is in hand; otherwise it is left for its task.

    ``retry``: a transient failure puts the stage back in the queue for later (in process the
    caller is waiting, so it fails instead). ``history``: earlier turns never asked here (a
    benchmark's conversation); by default the conversation's own questions."""

    question_id: int
    runs_on: Callable[[str], bool] = jobs.runs_here
    retry: bool = True
    history: Sequence[tuple[str, str]] | None = None

    def runs_here(self, stage: str) -> bool:
        return self.runs_on(STAGE_TASKS[stage])

    def execute(self, stage: str, held: runner.Held | None) -> runner.Held | None:
        if stage == runner.RETRIEVAL:
            return _retrieve(self.question_id, retry=self.retry, history=self.history)
        if held is not None:
            logs.bind(stage=stage)
            logger.info("question %s: %s runs next in this worker process", self.question_id, stage)
        return _answer_stage(self.question_id, stage, retry=self.retry, held=held)


def question_stages_run(
    *,
    question_id: int,
    waiting: str,
    runs_here: Callable[[str], bool] = jobs.runs_here,
    retry: bool = True,
    history: Sequence[tuple[str, str]] | None = None,
) -> str | None:
    """Run the stage a queued question waits for ("" for retrieval), then each following stage whose
    task ``runs_here`` (this worker consumes its queue, or ``every_stage_here``), in this process, through
    the one runner (``qa.pipeline.flow.runner.run_stages``) with ``StoredStages`` as its executor.

    Returns the stage left for another worker, whose task the caller sends; None
    when there is none (answered, failed, put back for a retry, or not this
    delivery's turn).
    """
    executor = StoredStages(question_id, runs_on=runs_here, retry=retry, history=history)
    _, left = runner.run_stages(executor, waiting or runner.RETRIEVAL)
    return left


def _answer_stage(
    question_id: int, stage: stages.AnswerStage, *, retry: bool = True, held: runner.Held | None = None
) -> runner.Held | None:
    """Claim and run one answering stage; what the next stage needs, or None when none follows here."""
    question = _claim(question_id, waiting_stage=stage, stage=stage, with_trace=held is None)
    if question is None:
        return None
    with jobs.heartbeat(Question, question.pk, question.lease_owner):
        return _stage_claimed(question, stage, retry=retry, held=held)


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


def _stage_claimed(
    question: Question, stage: stages.AnswerStage, *, retry: bool, held: runner.Held | None = None
) -> runner.Held | None:
    run = _handed_over(question, stage) if held is None else held.run
    if run is None:
        return None
    try:
        if held is None:
            # The version retrieval ranked; documents deleted or replaced since drop out of it.
            pipeline = _pipeline(question, version=question.corpus_version)
            ranked = runner.ranking_from_run(run, pipeline.index)
        else:
            pipeline, ranked = held.pipeline, held.ranked
        run = runner.run_step(stage, runner.Held(pipeline, run, tuple(ranked)), worker=_worker(question)).run
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
    return runner.Held(pipeline, run, tuple(ranked))


def _store_answer(question: Question, run: PipelineRun) -> Answer | None:
    result = run.answer
    sentence_pks = {c.id for s in result.sentences for c in s.citations}
    live = set(Sentence.objects.filter(pk__in=sentence_pks).values_list("pk", flat=True))
    documents = {
        external_id: (pk, published)
        for external_id, pk, published in Document.objects.filter(
            corpus=question.corpus,
            external_id__in={c.document_id for s in result.sentences for c in s.citations},
        ).values_list("external_id", "pk", "published")
    }
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
                answer=answer,
                ordinal=ordinal,
                text=sentence.text,
                support=sentence.support,
                mismatch=sentence.mismatch,
                contradicted=sentence.contradicted,
                relation=sentence.relation,
            )
            Citation.objects.bulk_create(
                Citation(
                    answer_sentence=row,
                    ordinal=position,
                    sentence_id=cited.id if cited.id in live else None,
                    document_external_id=cited.document_id,
                    document_title=cited.document_title[:500],
                    document_pk=documents.get(cited.document_id, (None, None))[0],
                    document_published=documents.get(cited.document_id, (None, None))[1],
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
