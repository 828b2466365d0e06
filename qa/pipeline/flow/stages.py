"""The answering stage as three stages that may run in different processes.

Generation, citation and verification each take the run so far and return it
one stage further; ``next_stage`` says which stage the run waits for (None
once it has its answer). What one stage hands the next (the attempts so far,
the draft between generation and verification) lives in the run itself
(``PipelineRun.progress``), so a stage can run in any process, and running a
stage again on the same run gives the same result: nothing is kept
elsewhere. The Celery tasks (``qa/tasks.py``) run one stage per task, each on
its own queue; ``runner.answer_stage`` runs them one after another in one
process. Both go through ``run_stage``, so both record the same trace.

An attempt that fails verification sends the run back to generation for the
next window of the ranking, as ``answering.answer_from_ranking`` loops in one
call; the two share every piece of the attempt, so they answer alike.

The reply is decided by the rules of ``qa.pipeline.checks.reply_rules`` alone: here the
``before`` phase (``before_answer.start``) and the ``after`` phase (``after_answer.checked``), with the
evidence each reads; the ``draft`` and ``composed`` phases are asked inside the attempt
and ``answering.conclude``, shared with the unstaged path.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Literal

from qa.pipeline.checks.answerability import ANSWERABLE, UNANSWERABLE
from qa.pipeline.core.protocols import LLM
from qa.pipeline.core.text import split_sentences
from qa.pipeline.core.types import UNSUPPORTED, Answer, AnswerSentence, ScoredPassage
from qa.pipeline.dialogue import gaps
from qa.pipeline.flow import after_answer, before_answer
from qa.pipeline.flow.answering import (
    AnswerParts,
    attempt_window,
    attempts_over,
    cite_attempt,
    conclude,
    generate_attempt,
    verify_attempt,
)
from qa.pipeline.flow.factory import Pipeline
from qa.pipeline.flow.run import (
    AnsweringProgress,
    AnsweringStep,
    PendingAttempt,
    PipelineRun,
    StageRun,
)

AnswerStage = Literal["generation", "citation", "verification"]
ANSWER_STAGES: tuple[AnswerStage, ...] = ("generation", "citation", "verification")


class PipelineError(RuntimeError):
    """The preset cannot run as configured; the message says what to change."""


def next_stage(run: PipelineRun) -> AnswerStage | None:
    """The answering stage ``run`` waits for; None when it has its answer (or failed)."""
    if run.answer is not None or run.failure is not None:
        return None
    pending = run.progress.pending if run.progress is not None else None
    if pending is None:
        return "generation"
    return "citation" if pending.citations is None else "verification"


def run_stage(
    stage: AnswerStage,
    pipeline: Pipeline,
    run: PipelineRun,
    ranked: Sequence[ScoredPassage],
    *,
    worker: str = "",
) -> PipelineRun:
    """Run ``stage`` on ``run`` (the ranking as retrieval left it) and record who ran it, when, how long."""
    if stage != next_stage(run):
        raise PipelineError(f"the run waits for {next_stage(run)}, not {stage}")
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    clock = time.perf_counter()
    attempt = _current_attempt(run)
    run = replace(run, substitutions=merged(run.substitutions, pipeline.substitutions))
    if stage == "generation":
        run = _generation(pipeline, run, ranked)
    elif stage == "citation":
        run = _citation(pipeline, run)
    else:
        run = _verification(pipeline, run, ranked)
    if run.answer is not None and not run.answer.kind:
        run = replace(
            run, answer=replace(run.answer, kind=UNANSWERABLE if run.answer.refused else ANSWERABLE)
        )
    record = StageRun(stage, worker or this_process(), started_at, time.perf_counter() - clock, attempt)
    return replace(run, stage_runs=run.stage_runs + (record,))


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def merged(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


def _current_attempt(run: PipelineRun) -> int:
    if run.progress is None:
        return 1
    if run.progress.pending is not None:
        return run.progress.pending.number
    return len(run.progress.attempts) + 1


# --- the three stages ------------------------------------------------------------


def _generation(pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage]) -> PipelineRun:
    """Generate the next attempt's draft; attempts whose draft a reply rule declines, or that hold no
    sentence, are ended here, and the next window tried at once, since they need no citation or
    verification."""
    question = run.standalone or run.question
    if run.progress is None:
        if pipeline.answer_parts is None:
            return _answer_without_retrieval(question, pipeline.llm, run)
        run = before_answer.start(pipeline, run, ranked)
        if run.progress is None:
            return run
    parts = pipeline.answer_parts
    progress = run.progress
    passages = _passages(progress, ranked)
    question = _answered_part(run)
    number = len(progress.attempts) + 1
    while window := attempt_window(passages, parts.config, number):
        clock = time.perf_counter()
        generated = generate_attempt(question, number, window, parts)
        run = run.added(answer=time.perf_counter() - clock)
        if isinstance(generated, PendingAttempt):
            return replace(run, progress=replace(progress, pending=generated))
        progress = replace(progress, attempts=progress.attempts + (generated,))
        if attempts_over(generated, parts.config):
            break
        number += 1
    return _conclude(pipeline, replace(run, progress=progress), ranked)


def _citation(pipeline: Pipeline, run: PipelineRun) -> PipelineRun:
    progress = run.progress
    clock = time.perf_counter()
    cited = cite_attempt(_answered_part(run), progress.pending, pipeline.answer_parts)
    run = run.added(answer=time.perf_counter() - clock)
    return replace(run, progress=replace(progress, pending=cited))


def _verification(pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage]) -> PipelineRun:
    """Verify the pending attempt; conclude, or leave the run waiting for the next attempt's generation."""
    parts = pipeline.answer_parts
    progress = run.progress
    clock = time.perf_counter()
    attempt, sentences = verify_attempt(_answered_part(run), progress.pending, parts)
    run = run.added(answer=time.perf_counter() - clock)
    progress = replace(
        progress,
        pending=None,
        attempts=progress.attempts + (attempt,),
        drafts=progress.drafts + ((sentences,) if sentences else ()),
    )
    run = replace(run, progress=progress)
    more = attempt_window(_passages(progress, ranked), parts.config, attempt.number + 1)
    if attempts_over(attempt, parts.config) or not more:
        return _conclude(pipeline, run, ranked)
    return run


def _answered_part(run: PipelineRun) -> str:
    """The question the attempts answer: without the parts of a question in parts that no source
    answers (``progress.missing``), which the partial answer names instead. "How many staff did the
    authority employ and how many cruise ships called at the port?" was refused whole: the
    ``amount_stated_nowhere`` rule refuses a question whose amount no sentence states."""
    question = run.standalone or run.question
    return gaps.without_parts(question, run.progress.missing) if run.progress is not None else question


def _conclude(pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage]) -> PipelineRun:
    parts: AnswerParts = pipeline.answer_parts
    progress = run.progress
    last = progress.attempts[-1] if progress.attempts else None
    chosen = progress.drafts[-1] if last is not None and last.verified else None
    clock = time.perf_counter()
    answered = conclude(
        _answered_part(run),
        _passages(progress, ranked),
        parts,
        progress.attempts,
        progress.drafts,
        chosen,
        progress.retrieval_confidence,
    )
    run = run.added(answer=time.perf_counter() - clock)
    return after_answer.checked(pipeline, run, ranked, answered)


def _passages(progress: AnsweringProgress, ranked: Sequence[ScoredPassage]) -> tuple[ScoredPassage, ...]:
    by_key = {hit.passage.key: hit for hit in ranked}
    return tuple(by_key[key] for key in progress.passages if key in by_key)


def _answer_without_retrieval(question: str, llm: LLM | None, run: PipelineRun) -> PipelineRun:
    if llm is None:
        raise PipelineError(
            "The llm-only preset needs an LLM: set QA_LLM_PROVIDER (groq, openai or llamacpp)."
        )
    started = time.perf_counter()
    reply = llm.complete(
        [
            {"role": "system", "content": "Answer the question in 2-4 sentences."},
            {"role": "user", "content": question},
        ],
        temperature=0.0,
        max_tokens=300,
    )
    run = run.timed(generation=time.perf_counter() - started)
    sentences = tuple(AnswerSentence(s, (), UNSUPPORTED) for s in split_sentences(reply))
    answer = Answer(sentences=sentences, note="Answered without retrieval: nothing is cited.")
    step = AnsweringStep(outcome="unverified", note=answer.note, raw_output=reply)
    return replace(run, answering=step, answer=answer)
