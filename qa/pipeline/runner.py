"""The pipeline end to end, in two stages that may run in different processes.

Both stages take a ``Pipeline`` (``factory.build_pipeline``) and a
``PipelineRun`` and return the run with their result added.
``retrieve_stage`` (retrieval and reranking) also returns the live ranking;
``answer_stage`` (generation, citations, verification, refusal,
disagreement) answers from a ranking. In one process ``answer_question``
hands the ranking straight on; across processes (the Celery tasks) the run
travels as JSON and ``ranking_from_run`` looks its passages up again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from qa.pipeline import conversation, turns
from qa.pipeline.answerability import ANSWERABLE, PARTIAL_ANSWER, UNANSWERABLE
from qa.pipeline.answering import answer_from_ranking
from qa.pipeline.conversation import Rewrite
from qa.pipeline.expansion import feedback_terms
from qa.pipeline.factory import Pipeline
from qa.pipeline.protocols import LLM, CorpusIndex, PrefetchingIndex
from qa.pipeline.rerank import top_sentence_similarity
from qa.pipeline.retrieval import RetrievalConfig, RetrievalResult, retrieve
from qa.pipeline.run import (
    AnsweringStep,
    Candidate,
    PipelineRun,
    RankedKey,
    RetrievalStep,
    RetrieverContribution,
    RetrieverHit,
    TrustStep,
)
from qa.pipeline.text import split_sentences
from qa.pipeline.trust import after_generation, before_generation, refusal_confidence, refusal_for
from qa.pipeline.types import UNSUPPORTED, Answer, AnswerSentence, ScoredPassage

TRACE_CANDIDATES = 20


class PipelineError(RuntimeError):
    """The preset cannot run as configured; the message says what to change."""


# --- follow-up questions ------------------------------------------------------


def rewrite_question(question: str, history: Sequence[tuple[str, str]], llm: LLM | None = None) -> Rewrite:
    """A follow-up made standalone from the earlier turns (``qa.pipeline.conversation``): by the LLM
    when one is configured, else by conversation memory (pronouns and ellipsis resolved)."""
    if llm is not None and history:
        return conversation.llm_rewrite(question, history, llm)
    return conversation.rewrite(question, history)


def standalone_question(question: str, history: Sequence[tuple[str, str]], llm: LLM | None = None) -> str:
    return rewrite_question(question, history, llm).question


# --- stage 1: retrieval -----------------------------------------------------------


def retrieve_stage(pipeline: Pipeline, run: PipelineRun) -> tuple[PipelineRun, RetrievalResult]:
    """Retrieve and rerank for ``run.standalone`` (or the question); the run gains its retrieval step."""
    question = run.standalone or run.question
    run = replace(run, substitutions=_merged(run.substitutions, pipeline.substitutions))
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


def _merged(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


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


def retrieval_confidence(ranked: Sequence[ScoredPassage], top: int = 5) -> float | None:
    """How well the best passages match the question, for the refusal threshold.

    The best question-sentence cosine among the top passages when the evidence
    reranker computed it (it separates answerable from unanswerable questions
    better than a passage's pooled vector: CLAPNQ-dev AUC 0.866 against 0.840),
    else the best dense passage score.
    """
    best_sentence = top_sentence_similarity(ranked[:top])
    if best_sentence is not None:
        return best_sentence
    dense = [hit.scores["dense"] for hit in ranked[:top] if "dense" in hit.scores]
    return max(dense) if dense else None


# --- stage 2: answering ----------------------------------------------------------------


def answer_stage(pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage]) -> PipelineRun:
    """Answer from ``ranked`` (the retrieval step's ranking, best first); the run gains its answer.

    The reply is one of the answer kinds: a clarifying question for a turn that points at
    something nothing names, a refusal, an answer, or a partial answer naming what is missing.
    """
    run = _answer_stage(pipeline, run, ranked)
    answer = run.answer
    if answer is not None and not answer.kind:
        answer = replace(answer, kind=UNANSWERABLE if answer.refused else ANSWERABLE)
    return replace(run, answer=answer)


def _answer_stage(pipeline: Pipeline, run: PipelineRun, ranked: Sequence[ScoredPassage]) -> PipelineRun:
    question = run.standalone or run.question
    run = replace(run, substitutions=_merged(run.substitutions, pipeline.substitutions))
    if pipeline.answer_parts is None:
        return _answer_without_retrieval(question, pipeline.llm, run)
    # Evaluation ranks documents from the whole candidate list, not just the answer's context.
    documents = tuple(dict.fromkeys(hit.passage.document_id for hit in ranked))
    passages = tuple(ranked[: pipeline.config.retrieval.top_k])
    trust, kinds = pipeline.config.trust, pipeline.config.turns
    clarify = turns.clarification(run.question, run.conversation, ranked) if kinds and kinds.clarify else None
    if clarify is not None:
        answer = turns.clarifying_answer(clarify, documents)
        step = AnsweringStep(outcome="clarifying question", note=answer.note)
        return replace(run, answering=step, answer=answer)
    before = None
    if trust is not None:
        started = time.perf_counter()
        before = before_generation(question, ranked, len(passages), config=trust, llm=pipeline.llm)
        run = run.timed(answerability=time.perf_counter() - started)
        run = replace(run, trust=TrustStep(answerability=before.verdict, context=before.context))
        partial = kinds is not None and kinds.partial and before.verdict.kind == PARTIAL_ANSWER
        if not before.verdict.should_answer and not partial:
            answer = refusal_for(before.verdict, documents)
            step = AnsweringStep(outcome="refused", note=answer.note)
            refused = replace(run.trust, confidence=refusal_confidence(before.verdict))
            return replace(run, trust=refused, answering=step, answer=answer)
        passages = before.passages
        lacking = turns.missing_parts(question, passages) if kinds else ()
        if kinds and (
            (len(lacking) >= kinds.refuse_missing and before.verdict.probability < kinds.refuse_missing_below)
            or turns.names_missing(run.question, lacking)
        ):
            answer = turns.refusal_for_missing(before.verdict, lacking, documents)
            return replace(run, answering=AnsweringStep(outcome="refused", note=answer.note), answer=answer)
    missing = _missing(question, before.verdict if before else None, passages, kinds) if kinds else ()
    run = _generate_and_check(pipeline, run, question, passages, ranked, documents, before, missing)
    if missing and not run.answer.refused:
        run = replace(run, answer=turns.partial_answer(run.answer, missing))
    return run


def _generate_and_check(pipeline, run, question, passages, ranked, documents, before, missing) -> PipelineRun:
    """Generate, cite and verify; then the answer check, against the part of the question the
    sources cover when a partial answer will name the rest."""
    started = time.perf_counter()
    answered = answer_from_ranking(
        question,
        passages,
        parts=pipeline.answer_parts,
        retrieval_confidence=retrieval_confidence(ranked),
    )
    run = run.timed(answer=time.perf_counter() - started, **answered.timings)
    answer, step = replace(answered.answer, retrieved_documents=documents), answered.step
    trust = pipeline.config.trust
    if before is not None and trust is not None:
        started = time.perf_counter()
        covered = turns.without_words(question, missing) if missing else question
        after = after_generation(covered, answer, before.verdict, config=trust, embedder=pipeline.embedder)
        run = run.timed(answer_check=time.perf_counter() - started)
        checked = replace(run.trust, answer_check=after.check, confidence=after.confidence)
        run = replace(run, trust=checked)
        if after.answer.refused and not answer.refused:
            step = replace(step, outcome="refused", note=after.answer.note)
        answer = after.answer
    return replace(run, answering=step, answer=answer)


def _missing(question: str, verdict, passages: Sequence[ScoredPassage], kinds: turns.TurnsConfig) -> tuple:
    """What a partial answer must name: the verdict's missing amounts, else uncovered focus words."""
    if not kinds.partial:
        return ()
    if verdict is not None and verdict.kind == PARTIAL_ANSWER and verdict.missing:
        return verdict.missing
    missing = turns.missing_parts(question, passages)
    return missing if 0 < len(missing) <= kinds.partial_max_missing else ()


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
