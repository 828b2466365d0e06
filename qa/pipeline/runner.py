"""The pipeline end to end: retrieval, then answering, which may run in different processes.

Both take a ``Pipeline`` (``factory.build_pipeline``) and a
``PipelineRun`` and return the run with their result added.
``retrieve_stage`` (retrieval and reranking) also returns the live ranking;
``answer_stage`` (generation, citations, verification, refusal,
disagreement) answers from a ranking, running ``qa.pipeline.stages``'
three stages in turn. In one process ``answer_question``
hands the ranking straight on; across processes (the Celery tasks) the run
travels as JSON and ``ranking_from_run`` looks its passages up again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from qa.pipeline import conversation
from qa.pipeline.conversation import Rewrite
from qa.pipeline.dates import DatePreference, prefer_period
from qa.pipeline.expansion import feedback_terms
from qa.pipeline.factory import Pipeline
from qa.pipeline.model_parts import PipelineModels
from qa.pipeline.protocols import LLM, CorpusIndex, PrefetchingIndex
from qa.pipeline.reading import reading_of, with_reading
from qa.pipeline.retrieval import RetrievalConfig, RetrievalResult, retrieve
from qa.pipeline.run import (
    Candidate,
    PipelineRun,
    RankedKey,
    RetrievalStep,
    RetrieverContribution,
    RetrieverHit,
)
from qa.pipeline.stages import (  # noqa: F401 - PipelineError and retrieval_confidence are used through runner
    PipelineError,
    merged,
    next_stage,
    retrieval_confidence,
    run_stage,
)
from qa.pipeline.types import ScoredPassage

TRACE_CANDIDATES = 20


# --- follow-up questions ------------------------------------------------------


def rewrite_question(
    question: str,
    history: Sequence[tuple[str, str]],
    llm: LLM | None = None,
    *,
    models: PipelineModels | None = None,
) -> Rewrite:
    """A follow-up made standalone from the earlier turns (``qa.pipeline.conversation``): by the LLM
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


# --- stage 2: answering (generation, citation, verification) ------------------------------


def answer_stage(
    pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage], *, worker: str = ""
) -> PipelineRun:
    """Answer from ``ranked`` (the retrieval step's ranking, best first): the answering stages one
    after another in this process (the Celery tasks run each in a task of its own).

    The reply is one of the answer kinds: a clarifying question for a turn that points at
    something nothing names, a refusal, an answer, or a partial answer naming what is missing.
    """
    while (stage := next_stage(run)) is not None:
        run = run_stage(stage, pipeline, run, ranked, worker=worker)
    return run


def answer_question(
    question: str,
    *,
    pipeline: Pipeline,
    preset: str = "",
    standalone: str = "",
    rewrite: Rewrite | None = None,
) -> PipelineRun:
    """Both stages in one process, the ranking handed straight on (tests, the `ask` path, evaluation).

    ``rewrite``: the follow-up's rewrite (its question is searched); ``standalone`` alone is the
    older way to say what to search."""
    run = PipelineRun(
        question=question,
        preset=preset or pipeline.config.name,
        standalone=rewrite.question if rewrite else standalone,
        conversation=rewrite,
    )
    run, retrieval = retrieve_stage(pipeline, run)
    return answer_stage(pipeline, run, retrieval.ranked)
