"""Writes for decomposed questions (the agentic preset): plan, fan out, fan in, combine.

A question whose preset decomposes (``PipelineConfig.decompose``) is planned
instead of retrieved: ``question_decompose`` claims it like a retrieval stage,
splits it (``qa.pipeline.dialogue.decompose``), and in one transaction fenced on its
lease stores the plan (``Decomposition``), creates one Question per part (the
same preset without the split; ``SubQuestion`` links it) and leaves the
question waiting in stage "decomposed" with no resend time. The parts' tasks
are queued on commit; each part is an ordinary question from then on, with
its own stage jobs, leases and reaper.

Fan-in: with no result backend there are no chords. When a part ends (done or
failed), ``part_settled`` flips its ``counted`` flag and adds one to
``Decomposition.done`` (UPDATE ... RETURNING) in one transaction, so a
redelivered task, a second settle or the reaper's sweep never counts a part
twice. The part that brings ``done`` to ``total`` queues the combination and
gives the waiting question a resend time, so the reaper sends the combination
again if that message is lost. ``question_combine`` claims the question
("decomposed" -> "combination"), combines the parts' answers
(``qa.pipeline.flow.combine``) and stores the answer through the same fenced write
as every other answer. A worker killed while planning or combining leaves an
expired lease: the reaper puts the question back ("" or "decomposed"), and
planning again finds the stored plan and parts instead of making new ones.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace

from django.db import connection, transaction
from django.db.models import F

from groundedqa_site import jobs
from qa import clients, presets
from qa.models import Decomposition, Question, SubQuestion
from qa.pipeline.core import codec
from qa.pipeline.dialogue.decompose import Plan, plan_question
from qa.pipeline.flow import runner
from qa.pipeline.flow.combine import DecompositionStep, PartAnswer, combine
from qa.pipeline.flow.run import PipelineRun, StageRun, load_run
from qa.pipeline.flow.runner import part_config
from qa.services import stage_jobs

logger = logging.getLogger(__name__)

COMBINE_TASK = "qa.tasks.combine_answers"
WAITING = "decomposed"
SETTLED = (Question.Status.DONE, Question.Status.FAILED)


def decomposes(question_id: int) -> bool:
    config = Question.objects.filter(pk=question_id).values_list("config", flat=True).first()
    return bool(config and config.get("decompose"))


def question_decompose(*, question_id: int) -> bool:
    """The planning stage of a question whose preset decomposes; False for any other question
    (the caller retrieves it as usual). A second delivery finds nothing to claim."""
    if not decomposes(question_id):
        return False
    question = stage_jobs._claim(question_id, waiting_stage="", stage="planning")
    if question is None:
        return True
    with jobs.heartbeat(Question, question.pk, question.lease_owner):
        parts = _plan_claimed(question)
        if parts is None:
            return True
        waiting = stage_jobs._fenced(question).update(
            status=Question.Status.QUEUED, stage=WAITING, attempts=0, resend_at=None, **stage_jobs.RELEASED
        )
    if not waiting:
        logger.warning(
            "question %s: planning lost its lease; the next claim finds the stored plan", question_id
        )
        return True
    for part in parts:
        if part.status == Question.Status.QUEUED:
            jobs.enqueue(stage_jobs.RETRIEVE_QUESTION_TASK, part.pk)
    # Planned again after its worker died, the parts may all have settled meanwhile.
    _settle_parts(question_id)
    _combine_if_complete(question_id)
    return True


def _plan_claimed(
    question: Question, *, history: Sequence[tuple[str, str]] | None = None
) -> list[Question] | None:
    """The question's parts: stored by an earlier claim, or planned and created now (None: it failed).

    ``history``: earlier turns that were never asked here (a benchmark's); by default the
    conversation's own."""
    stored = Decomposition.objects.filter(question_id=question.pk).first()
    if stored is not None:
        return [link.question for link in stored.parts.select_related("question")]
    run = PipelineRun(question=question.text, preset=question.preset)
    started_at, clock = stage_jobs._now_iso(), time.perf_counter()
    try:
        llm = clients.get_llm_or_none()
        if history is None:
            history = stage_jobs._conversation_history(question)
        rewritten = runner.rewrite_question(question.text, history, llm=llm, models=clients.pipeline_models())
        plan = plan_question(rewritten.question, llm=llm, models=clients.pipeline_models())
    except clients.ConfigurationError as exc:
        stage_jobs._fail(question, run.failed("retrieval", str(exc)))
        return None
    record = StageRun("planning", stage_jobs._worker(question), started_at, time.perf_counter() - clock)
    run = replace(
        run,
        standalone=rewritten.question,
        conversation=rewritten if history else None,
        decomposition=DecompositionStep(plan=plan),
        stage_runs=(record,),
    ).timed(planning=record.seconds)
    return _create_parts(question, plan, run)


def _create_parts(question: Question, plan: Plan, run: PipelineRun) -> list[Question] | None:
    config = part_config(presets.config_from_dict(question.config), plan).to_dict()
    with transaction.atomic():
        if not stage_jobs._fenced(question).update(trace=run.to_json(), standalone_text=run.standalone):
            return None
        decomposition = Decomposition.objects.create(
            question=question, plan=codec.to_data(plan), total=len(plan.parts)
        )
        parts = []
        for ordinal, text in enumerate(plan.parts):
            part = Question.objects.create(
                user_id=question.user_id,
                corpus_id=question.corpus_id,
                text=text,
                preset=question.preset,
                config=config,
                is_evaluation=question.is_evaluation,
                # Sent again by the reaper if its message is lost before a worker claims it.
                resend_at=jobs.lease_until(),
            )
            SubQuestion.objects.create(decomposition=decomposition, ordinal=ordinal, question=part)
            parts.append(part)
    return parts


def part_settled(*, question_id: int, queue_combination: bool = True) -> bool:
    """Count a part that ended (done or failed) once; True when it completed its question's parts."""
    with transaction.atomic():
        counted = SubQuestion.objects.filter(
            question_id=question_id, counted=False, question__status__in=SETTLED
        ).update(counted=True)
        if not counted:
            return False
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE qa_decomposition SET done = done + 1 "
                "WHERE id = (SELECT decomposition_id FROM qa_subquestion WHERE question_id = %s) "
                "RETURNING done, total, question_id",
                [question_id],
            )
            done, total, parent_id = cursor.fetchone()
        if done < total:
            return False
        if queue_combination:
            Question.objects.filter(pk=parent_id, status=Question.Status.QUEUED, stage=WAITING).update(
                resend_at=jobs.lease_until()
            )
            transaction.on_commit(lambda: jobs.enqueue(COMBINE_TASK, parent_id))
    return True


def _settle_parts(parent_id: int) -> None:
    for part_id in SubQuestion.objects.filter(
        decomposition__question_id=parent_id, counted=False, question__status__in=SETTLED
    ).values_list("question_id", flat=True):
        part_settled(question_id=part_id)


def _combine_if_complete(parent_id: int) -> None:
    if Decomposition.objects.filter(question_id=parent_id, done__gte=F("total")).exists():
        Question.objects.filter(pk=parent_id, status=Question.Status.QUEUED, stage=WAITING).update(
            resend_at=jobs.lease_until()
        )
        jobs.enqueue(COMBINE_TASK, parent_id)


def decompositions_reap() -> int:
    """Count parts that ended without being counted (their worker died between the answer and the
    count, or the reaper failed them): the reaper's safety net for fan-in."""
    settled = 0
    for part_id in SubQuestion.objects.filter(counted=False, question__status__in=SETTLED).values_list(
        "question_id", flat=True
    ):
        part_settled(question_id=part_id)
        settled += 1
    return settled


def question_combine(*, question_id: int) -> None:
    """Combine the parts' answers into the question's answer, once (a second delivery claims nothing)."""
    question = stage_jobs._claim(question_id, waiting_stage=WAITING, stage="combination")
    if question is None:
        return
    with jobs.heartbeat(Question, question.pk, question.lease_owner):
        _combine_claimed(question)


def _combine_claimed(question: Question) -> PipelineRun | None:
    # Read again: in process, the trace was written after this row was claimed.
    trace = Question.objects.values_list("trace", flat=True).get(pk=question.pk)
    run = load_run(trace, question=question.text)
    started_at, clock = stage_jobs._now_iso(), time.perf_counter()
    links = SubQuestion.objects.filter(decomposition__question_id=question.pk).select_related("question")
    parts = [_part_answer(link.question) for link in links.order_by("ordinal")]
    if all(part.answer is None for part in parts):
        errors = "; ".join(f"{p.question}: {p.error}" for p in parts)
        stage_jobs._fail(question, run.failed("generation", f"Every part of the question failed ({errors})."))
        return None
    plan = (
        run.decomposition.plan if run.decomposition else Plan(question.text, tuple(p.question for p in parts))
    )
    answer, records = combine(plan, parts)
    record = StageRun("combination", stage_jobs._worker(question), started_at, time.perf_counter() - clock)
    run = replace(
        run,
        answer=answer,
        decomposition=DecompositionStep(plan=plan, parts=records),
        stage_runs=run.stage_runs + (record,),
    ).timed(combination=record.seconds)
    stage_jobs._store_answer(question, run)
    return run


def _part_answer(part: Question) -> PartAnswer:
    if part.status != Question.Status.DONE:
        return PartAnswer(part.text, None, part.pk, part.error or f"the part is {part.status}")
    try:
        answer = load_run(part.trace, question=part.text).answer
    except ValueError as exc:
        return PartAnswer(part.text, None, part.pk, f"its trace could not be read ({exc})")
    return PartAnswer(part.text, answer, part.pk, "" if answer else "the part has no answer")


def question_run_here(question_id: int, *, history: Sequence[tuple[str, str]] | None = None) -> None:
    """Every stage of a question waiting for retrieval, in this process (``ask``, ``chat``,
    evaluation), through the one runner with every stage here; the run ends in the question's row.

    A question whose preset decomposes is planned, each part run the same way, and combined."""
    if not decomposes(question_id):
        stage_jobs.question_stages_run(
            question_id=question_id,
            waiting="",
            runs_here=stage_jobs.every_stage_here,
            retry=False,  # the caller is waiting: a transient failure fails now, not later
            history=history,
        )
        return
    question = stage_jobs._claim(question_id, waiting_stage="", stage="planning")
    if question is None:
        return
    with jobs.heartbeat(Question, question.pk, question.lease_owner):
        parts = _plan_claimed(question, history=history)
        if parts is None:
            return
        for part in parts:
            question_run_here(part.pk, history=())
            # Counted like a queued part's, but nothing is queued: this process combines next.
            part_settled(question_id=part.pk, queue_combination=False)
        _combine_claimed(question)


__all__ = [
    "COMBINE_TASK",
    "decompositions_reap",
    "part_settled",
    "question_combine",
    "question_decompose",
    "question_run_here",
]
