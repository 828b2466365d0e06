"""Reads traces stored in format version 1: the untyped dict written before ``PipelineRun``.

Questions answered then keep their trace in the database, and the trace page
must still show them. This is the one place that reads that dict, so the one
place allowed to be tolerant of missing keys: version 1 wrote keys only for
the stages that ran. Its layout::

    {"timings": {stage: seconds}, "substitutions": [...],
     "retrieval": {"unit", "candidates": [hit]} | {"skipped": why},
     "rerank": {"reranker", "candidates": [hit]}, "documents": [...],
     "answer": {"question", "config", "retrieval_confidence", "attempts": [...],
                "outcome", "note", "conflicts", "raw_output", "timings"}}

The final answer was stored only as Answer rows, so a version 1 run has
``answer=None``; it did not record the standalone question or the failed
stage either (the caller passes what the Question row knows).
"""

from __future__ import annotations

from typing import Any

from qa.pipeline.checks.verification import Verdict
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.flow.run import (
    AnsweringStep,
    Attempt,
    Candidate,
    CitationRecord,
    ConflictRecord,
    GenerationRecord,
    Message,
    PipelineRun,
    RetrievalStep,
    StageFailure,
    TracedSentence,
    VerificationRecord,
)

_SUPPORT = ("supported", "partial", "unsupported")


def read_v1(trace: dict, *, question: str = "", error: str = "") -> PipelineRun:
    retrieval = _retrieval(trace, question)
    failure = None
    if error:
        # Version 1 wrote "retrieval" when that stage finished, so a failure after it was generation's.
        failure = StageFailure("generation" if "retrieval" in trace else "retrieval", error)
    return PipelineRun(
        question=question,
        version=1,
        substitutions=tuple(str(s) for s in trace.get("substitutions") or ()),
        retrieval=retrieval,
        answering=_answering(trace.get("answer")),
        timings=_numbers(trace.get("timings")),
        failure=failure,
    )


def _numbers(data: Any) -> dict[str, float]:
    if not isinstance(data, dict):
        return {}
    return {
        str(k): float(v) for k, v in data.items() if isinstance(v, int | float) and not isinstance(v, bool)
    }


def _retrieval(trace: dict, question: str) -> RetrievalStep | None:
    first = trace.get("retrieval")
    if not isinstance(first, dict):
        return None
    rerank = trace.get("rerank") if isinstance(trace.get("rerank"), dict) else {}
    return RetrievalStep(
        question=question,
        unit=str(first.get("unit") or ""),
        candidates=tuple(_candidate(row) for row in first.get("candidates") or ()),
        reranker=str(rerank.get("reranker") or ""),
        reranked=tuple(_candidate(row) for row in rerank.get("candidates") or ()),
        documents=tuple(str(d) for d in trace.get("documents") or ()),
        skipped=str(first.get("skipped") or ""),
    )


def _candidate(row: dict) -> Candidate:
    score = row.get("score")
    return Candidate(
        key=str(row.get("key", "")),
        document=str(row.get("document", "")),
        title=str(row.get("title", "")),
        score=float(score) if isinstance(score, int | float) else 0.0,
        scores=_numbers(row.get("scores")),
        text=str(row.get("text", "")),
    )


def _answering(answer: Any) -> AnsweringStep | None:
    if not isinstance(answer, dict):
        return None
    outcome = answer.get("outcome")
    if outcome not in ("verified", "unverified", "refused"):
        # llm-only wrote only its raw output; an interrupted stage wrote no outcome.
        outcome = "unverified"
    confidence = answer.get("retrieval_confidence")
    return AnsweringStep(
        outcome=outcome,
        note=str(answer.get("note") or ""),
        config=_config(answer.get("config")),
        retrieval_confidence=float(confidence) if isinstance(confidence, int | float) else None,
        attempts=tuple(_attempt(a, n) for n, a in enumerate(answer.get("attempts") or (), start=1)),
        conflicts=tuple(_conflict(c) for c in answer.get("conflicts") or () if isinstance(c, dict)),
        raw_output=str(answer.get("raw_output") or ""),
    )


def _config(data: Any) -> AnswerConfig | None:
    if not isinstance(data, dict):
        return None
    try:
        return AnswerConfig(**{k: v for k, v in data.items() if k in AnswerConfig.__dataclass_fields__})
    except (TypeError, ValueError):
        return None


def _attempt(data: dict, number: int) -> Attempt:
    outcome = data.get("outcome")
    if outcome not in ("verified", "not verified", "generator refused", "no answer sentences"):
        outcome = "verified" if data.get("verified") else "not verified"
    generation = data.get("generation") or {}
    citations = data.get("citations")
    verification = data.get("verification")
    return Attempt(
        number=int(data.get("attempt") or number),
        passages=tuple(str(k) for k in data.get("passages") or ()),
        documents=tuple(str(d) for d in data.get("documents") or ()),
        outcome=outcome,
        generation=GenerationRecord(
            refused=bool(generation.get("refused")),
            sentences=tuple(_sentence(s) for s in generation.get("sentences") or ()),
            prompt=_messages(generation.get("prompt")),
            raw_output=str(generation.get("raw_output") or ""),
            dropped_citation_ids=tuple(str(i) for i in generation.get("dropped_citation_ids") or ()),
            notes=tuple(str(n) for n in generation.get("notes") or ()),
        ),
        citations=CitationRecord(
            prompt=_messages(citations.get("prompt")),
            raw_output=str(citations.get("raw_output") or ""),
            dropped_citation_ids=tuple(str(i) for i in citations.get("dropped_citation_ids") or ()),
            notes=tuple(str(n) for n in citations.get("notes") or ()),
        )
        if isinstance(citations, dict)
        else None,
        verification=VerificationRecord(
            verdicts=tuple(_verdict(v) for v in verification.get("verdicts") or ()),
            prompt=_messages(verification.get("prompt")),
            raw_output=str(verification.get("raw_output") or ""),
        )
        if isinstance(verification, dict)
        else None,
        sentences=tuple(_sentence(s) for s in data.get("sentences") or ()),
        dropped_citation_ids=tuple(str(i) for i in data.get("dropped_citation_ids") or ()),
        timings=_numbers(data.get("timings")),
    )


def _sentence(data: dict) -> TracedSentence:
    support = data.get("support")
    return TracedSentence(
        text=str(data.get("text", "")),
        citations=tuple(c for c in data.get("citations") or () if isinstance(c, int)),
        support=support if support in _SUPPORT else None,
    )


def _verdict(data: dict) -> Verdict:
    label = data.get("label")
    coverage, similarity = data.get("coverage"), data.get("similarity")
    return Verdict(
        label=label if label in _SUPPORT else "unsupported",
        reason=str(data.get("reason") or ""),
        coverage=float(coverage) if isinstance(coverage, int | float) else None,
        similarity=float(similarity) if isinstance(similarity, int | float) else None,
    )


def _messages(data: Any) -> tuple[Message, ...]:
    return tuple(
        Message(str(m.get("role", "")), str(m.get("content", ""))) for m in data or () if isinstance(m, dict)
    )


def _conflict(data: dict) -> ConflictRecord:
    return ConflictRecord(
        about=tuple(str(a) for a in data.get("about") or ()),
        answer_sentence=int(data.get("answer_sentence") or 0),
        answer_value=str(data.get("answer_value", "")),
        other_sentence=int(data.get("other_sentence") or 0),
        other_value=str(data.get("other_value", "")),
    )
