"""The one runner of a question: its stages in order, each executed where a stage executor says.

A question runs retrieval (with the follow-up rewrite), then the answering
stages of ``qa.pipeline.flow.stages`` (generation, citation, verification) until
``next_stage`` says it has its answer. ``run_stages`` walks that sequence; a
``StageExecutor`` decides only WHERE each stage executes and what surrounds it:

- ``InProcess`` (here): every stage in this process, nothing stored: bench/,
  tests, warm-up, and each part of a decomposed question in memory.
- ``qa.services.stage_jobs.StoredStages``: each stage claims the stored question
  under a lease, runs the same ``run_step`` and hands the run on through the row;
  a stage this worker does not serve is left for its Celery task (the API's
  questions), or every stage runs here (``ask``, ``chat``, evaluation).

Across processes the run travels as JSON and ``ranking_from_run`` looks its
passages up again; in one process the ranking is handed straight on (``Held``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from qa.pipeline.config.presets import PipelineConfig
from qa.pipeline.core.model_parts import PipelineModels
from qa.pipeline.core.protocols import LLM, CorpusIndex, PrefetchingIndex
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.dialogue import conversation
from qa.pipeline.dialogue.conversation import Rewrite
from qa.pipeline.dialogue.decompose import Plan, plan_question
from qa.pipeline.dialogue.question_reading import reading_of, with_reading
from qa.pipeline.flow.before_answer import retrieval_confidence  # noqa: F401 - used through runner
from qa.pipeline.flow.combine import DecompositionStep, PartAnswer, combine
from qa.pipeline.flow.factory import Pipeline
from qa.pipeline.flow.run import (
    Candidate,
    PipelineRun,
    RankedKey,
    RetrievalStep,
    RetrieverContribution,
    RetrieverHit,
)
from qa.pipeline.flow.stages import (  # noqa: F401 - PipelineError is used through runner
    AnswerStage,
    PipelineError,
    merged,
    next_stage,
    run_stage,
)
from qa.pipeline.reading.dates import DatePreference, prefer_period
from qa.pipeline.search.expansion import feedback_terms
from qa.pipeline.search.retrieval import RetrievalConfig, RetrievalResult, retrieve

TRACE_CANDIDATES = 20


# --- follow-up questions ------------------------------------------------------


def rewrite_question(
    question: str,
    history: Sequence[tuple[str, str]],
    llm: LLM | None = None,
    *,
    models: PipelineModels | None = None,
) -> Rewrite:
    """A follow-up made standalone from the earlier turns (``qa.pipeline.dialogue.conversation``): by the LLM
    when one is configured, else by conversation memory (pronouns and ellipsis resolved; ``models``
    gives the part-of-speech tagger, None: ``default_models()``)."""
    if llm is not None and history:
        return conversation.llm_rewrite(question, history, llm, models=models)
    return conversation.rewrite(question, history, models=models)


def standalone_question(question: str, history: Sequence[tuple[str, str]], llm: LLM | None = None) -> str:
    return rewrite_question(question, history, llm).question


# --- stage 1: retrieval -----------------------------------------------------------


def retrieve_stage(pipeline: Pipeline, run: PipelineRun) -> tuple[PipelineRun, RetrievalResult]:
    """Retrieve and rerank for ``run.standalone`` (or the question); the run gains its retrieval step."""
    run = with_reading(run)  # the question read once; later stages read run.reading
    question = run.standalone or run.question
    run = replace(run, substitutions=merged(run.substitutions, pipeline.substitutions))
    retrieval = pipeline.config.retrieval
    if retrieval is None:
        skipped = RetrievalStep(question=question, skipped="this preset does not retrieve")
        return replace(run, retrieval=skipped), RetrievalResult(question, RetrievalConfig(), ())
    started = time.perf_counter()
    first_stage = _first_stage(pipeline, question)
    expanded: tuple[str, ...] = ()
    if pipeline.config.expansion > 0:
        expanded = feedback_terms(question, first_stage.ranked, terms=pipeline.config.expansion)
        if expanded:
            question = f"{question} {' '.join(expanded)}"
            first_stage = _first_stage(pipeline, question)
    run = run.timed(retrieval=time.perf_counter() - started)
    step = RetrievalStep(
        question=question,
        expanded=expanded,
        unit=retrieval.unit,
        candidates=_candidates(first_stage.ranked),
        retrievers=retriever_contributions(first_stage.ranked, retrieval),
    )
    result = first_stage
    if pipeline.reranker is not None and retrieval.rerank_depth > 0:
        started = time.perf_counter()
        head = list(first_stage.ranked[: retrieval.rerank_depth])
        tail = list(first_stage.ranked[retrieval.rerank_depth :])
        reranked = list(pipeline.reranker.rerank(question, head)) + tail
        run = run.timed(rerank=time.perf_counter() - started)
        result = RetrievalResult(question, retrieval, tuple(reranked), first_stage.query_vector)
        step = replace(step, reranker=type(pipeline.reranker).__name__, reranked=_candidates(result.ranked))
    if pipeline.config.date_weight > 0 and (period := reading_of(run).named_period()):
        preference = DatePreference(rank_bonus=pipeline.config.date_weight)
        result = replace(result, ranked=prefer_period(result.ranked, period, preference))
        shown = f"{period.start.isoformat()} to {period.end.isoformat()} ({', '.join(period.mentions)})"
        step = replace(step, period=shown, reranked=_candidates(result.ranked))
    step = replace(
        step,
        documents=tuple(result.documents()[:TRACE_CANDIDATES]),
        ranking=tuple(RankedKey(h.passage.key, h.score, dict(h.scores)) for h in result.ranked),
    )
    return replace(run, retrieval=step), result


def _first_stage(pipeline: Pipeline, question: str) -> RetrievalResult:
    retrieval = pipeline.config.retrieval
    return retrieve(
        question,
        pipeline.index,
        pipeline.embedder,
        replace(retrieval, rerank_depth=0),
        None,
        retriever=pipeline.retriever,
    )


def _candidates(hits: Sequence[ScoredPassage]) -> tuple[Candidate, ...]:
    return tuple(
        Candidate(
            key=hit.passage.key,
            document=hit.passage.document_id,
            title=hit.passage.document_title,
            score=round(float(hit.score), 6),
            scores={k: round(float(v), 6) for k, v in hit.scores.items()},
            text=hit.passage.text[:300],
        )
        for hit in hits[:TRACE_CANDIDATES]
    )


def retriever_contributions(
    fused: Sequence[ScoredPassage], config: RetrievalConfig
) -> tuple[RetrieverContribution, ...]:
    """Each first-stage retriever's own ranking, read back from the fused candidates.

    A hybrid fuses every candidate either side returned, and each passage keeps
    each retriever's score under that retriever's name, so sorting by it gives
    that retriever's ranking (ties in fused order) without searching again.
    """
    names = config.hybrid_of if config.method == "hybrid" else (config.method,)
    weights: dict[str, float | None] = dict.fromkeys(names)
    if config.method == "hybrid" and config.fusion == "minmax":
        weights = {names[0]: round(1.0 - config.alpha, 6), names[1]: config.alpha}
    fused_rank = {hit.passage.key: rank for rank, hit in enumerate(fused, start=1)}
    top_k = [hit.scores for hit in fused[: config.top_k]]
    contributions = []
    for name in names:
        own = sorted((hit for hit in fused if name in hit.scores), key=lambda hit: -hit.scores[name])
        hits = tuple(
            RetrieverHit(
                key=hit.passage.key,
                document=hit.passage.document_id,
                title=hit.passage.document_title,
                rank=rank,
                score=round(float(hit.scores[name]), 6),
                fused_rank=fused_rank[hit.passage.key],
            )
            for rank, hit in enumerate(own[:TRACE_CANDIDATES], start=1)
        )
        mine = [scores for scores in top_k if name in scores]
        contributions.append(
            RetrieverContribution(
                retriever=name,
                returned=len(own),
                weight=weights[name],
                in_top_k=len(mine),
                only_here=sum(1 for scores in mine if not any(o in scores for o in names if o != name)),
                hits=hits,
            )
        )
    return tuple(contributions)


def ranking_from_run(run: PipelineRun, index: CorpusIndex) -> tuple[ScoredPassage, ...]:
    """The retrieval step's ranking with its passages looked up; passages deleted since are skipped."""
    ranked = []
    ranking = run.retrieval.ranking if run.retrieval is not None else ()
    if isinstance(index, PrefetchingIndex):
        index.prefetch([item.key for item in ranking])
    for item in ranking:
        try:
            passage = index.passage(item.key)
        except KeyError:
            continue
        ranked.append(ScoredPassage(passage, item.score, dict(item.scores)))
    return tuple(ranked)


# --- the runner -------------------------------------------------------------------------

Stage = Literal["retrieval", "generation", "citation", "verification"]
RETRIEVAL: Stage = "retrieval"


@dataclass(frozen=True)
class Held:
    """What a stage that ran in this process holds: the pipeline it ran with (for a stored question,
    built at the corpus version retrieval ranked), the run so far and the ranking's passages. The
    next stage, run right after in the same process, starts from these instead of reading the run
    back and looking the passages up again."""

    pipeline: Pipeline
    run: PipelineRun
    ranked: tuple[ScoredPassage, ...] = ()


def following_stage(run: PipelineRun) -> AnswerStage | None:
    """The stage ``run`` waits for after retrieval; None when it has its answer or failed."""
    return next_stage(run)


def run_step(stage: Stage, held: Held, *, worker: str = "") -> Held:
    """Execute one stage on what is held: the computation every executor runs, wherever it runs it.

    Retrieval searches ``run.standalone`` (the rewrite, when the caller made one) or the question."""
    if stage == RETRIEVAL:
        run, retrieval = retrieve_stage(held.pipeline, held.run)
        return Held(held.pipeline, run, tuple(retrieval.ranked))
    run = run_stage(stage, held.pipeline, held.run, held.ranked, worker=worker)
    return replace(held, run=run)


class StageExecutor(Protocol):
    """Where the stages of one question execute."""

    def runs_here(self, stage: Stage) -> bool:
        """Whether ``stage`` executes in this process right after the previous one; otherwise
        ``run_stages`` stops and leaves it to whoever serves it (a Celery task)."""
        ...

    def execute(self, stage: Stage, held: Held | None) -> Held | None:
        """Execute ``stage`` (``held``: what the previous stage left in this process, None when it
        ran elsewhere); None when nothing follows here (not this executor's turn, failed, stored
        elsewhere or put back for a retry)."""
        ...


def run_stages(
    executor: StageExecutor, stage: Stage = RETRIEVAL, held: Held | None = None
) -> tuple[Held | None, AnswerStage | None]:
    """Run ``stage`` and then each following stage that ``executor`` runs here.

    Returns what the last stage run here left (None when it ended the run early: failed, lost its
    claim) and the stage left for elsewhere (None when none is)."""
    while True:
        held = executor.execute(stage, held)
        if held is None:
            return None, None
        waiting = following_stage(held.run)
        if waiting is None or not executor.runs_here(waiting):
            return held, waiting
        stage = waiting


@dataclass(frozen=True)
class InProcess:
    """Every stage in this process, with nothing stored: the run is the result."""

    pipeline: Pipeline
    asked: PipelineRun
    worker: str = ""

    def runs_here(self, stage: Stage) -> bool:
        return True

    def execute(self, stage: Stage, held: Held | None) -> Held | None:
        return run_step(stage, held or Held(self.pipeline, self.asked), worker=self.worker)


# --- stage 2: answering (generation, citation, verification) ------------------------------


def answer_stage(
    pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage], *, worker: str = ""
) -> PipelineRun:
    """The answering stages of a run retrieved elsewhere, run by the runner in this process, from
    ``ranked`` (the retrieval step's ranking, best first).

    The reply is one of the answer kinds: a clarifying question for a turn that points at
    something nothing names, a refusal, an answer, or a partial answer naming what is missing.
    """
    if (stage := next_stage(run)) is None:
        return run
    held, _ = run_stages(InProcess(pipeline, run, worker), stage, Held(pipeline, run, tuple(ranked)))
    assert held is not None  # an in-process stage always hands its run on
    return held.run


def answer_question(
    question: str,
    *,
    pipeline: Pipeline,
    preset: str = "",
    standalone: str = "",
    rewrite: Rewrite | None = None,
) -> PipelineRun:
    """The question run by the runner in this process, nothing stored (bench/, tests, warm-up).

    A preset that decomposes plans the question, runs each part the same way and combines them.
    ``rewrite``: the follow-up's rewrite (its question is searched); ``standalone`` alone is the
    older way to say what to search."""
    if pipeline.config.decompose:
        return answer_in_parts(question, pipeline=pipeline, preset=preset)
    run = PipelineRun(
        question=question,
        preset=preset or pipeline.config.name,
        standalone=rewrite.question if rewrite else standalone,
        conversation=rewrite,
    )
    held, _ = run_stages(InProcess(pipeline, run))
    assert held is not None  # an in-process stage always hands its run on
    return held.run


# --- a question split into parts (the agentic preset) --------------------------------------


def part_config(config: PipelineConfig, plan: Plan) -> PipelineConfig:
    """The configuration each part runs with: the preset without the split and, for a question that
    was split, without clarifying questions. The planner made each part stand alone, and a part
    saying "those elections (Mali)" is not the analyst pointing at something unnamed; asking back
    about a part gave analyst-bench train clarifying questions instead of cited answers."""
    config = replace(config, decompose=False)
    if plan.decomposed and config.turns is not None:
        config = replace(config, turns=replace(config.turns, clarify=False))
    return config


def answer_in_parts(question: str, *, pipeline: Pipeline, preset: str = "") -> PipelineRun:
    """Plan, run each part through the runner in this process, combine (the site runs each part as a
    stored question of its own: ``qa/services/decomposition.py``)."""
    plan = plan_question(question, llm=pipeline.llm, models=pipeline.models)
    parts_pipeline = replace(pipeline, config=part_config(pipeline.config, plan))
    runs = [answer_question(part, pipeline=parts_pipeline) for part in plan.parts]
    parts = [
        PartAnswer(text, run.answer, 0, run.failure.message if run.failure else "")
        for text, run in zip(plan.parts, runs, strict=True)
    ]
    answer, records = combine(plan, parts)
    run = PipelineRun(question=question, preset=preset or pipeline.config.name)
    for part_run in runs:  # the parts' stage timings, summed: what answering the question took
        run = run.added(**part_run.timings)
    return replace(run, answer=answer, decomposition=DecompositionStep(plan=plan, parts=records))
