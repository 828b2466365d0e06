"""Scores per answerability class (MTRAG-UN): what the system did with each kind of turn.

A gold case belongs to one class (``answerable``, ``partial``,
``underspecified``, ``unanswerable``, the answer kinds of
``qa.pipeline.checks.answerability``) and a prediction states the kind of reply it
gave: an answer, a partial answer naming what is missing, a clarifying
question, or a refusal. A prediction stored before replies had kinds reads as
``unanswerable`` when it refused and ``answerable`` otherwise.

For every class: how many cases, and the share of each reply kind. On top:

- ``refusal_precision/recall/f1``: refusal (a reply of kind unanswerable) as
  the positive class over *every* case, an unanswerable case the gold
  positive. Refusing an underspecified or partial turn is a false positive.
- ``clarified``: the share of underspecified turns answered with a clarifying
  question (the ``underspecified`` class's ``underspecified`` share).
- ``citation_precision``: per class, the mean over the cases answered (an
  answer or a partial answer) that have gold evidence of the share of cited
  sentences that are gold evidence; an answer that cites nothing scores 0.
- ``partial_named``: the share of partial turns answered with what is
  supported and what is missing (a ``partial`` reply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from review.evaluation.metrics import mean_or_none, refusal_scores
from review.evaluation.types import Prediction

CLASSES = ("answerable", "partial", "underspecified", "unanswerable")
ANSWERED = ("answerable", "partial")


@dataclass(frozen=True)
class ClassCase:
    case_id: str
    kind: str  # the gold class, one of CLASSES
    gold_evidence: tuple[str, ...] = ()


def reply_kind(prediction: Prediction | None) -> str:
    """The kind of reply; a missing prediction is an answer that said nothing (never a refusal)."""
    if prediction is None:
        return "answerable"
    if prediction.kind:
        return prediction.kind
    return "unanswerable" if prediction.refused else "answerable"


def cited_precision(prediction: Prediction, gold_evidence: Sequence[str]) -> float:
    cited = set(prediction.cited_evidence)
    return len(cited & set(gold_evidence)) / len(cited) if cited else 0.0


def class_metrics(
    cases: Sequence[ClassCase], predictions: Mapping[str, Prediction]
) -> dict[str, float | None]:
    """Flat ``{"<class>_<measure>": value}`` plus the refusal and clarification summaries.

    ``predictions`` by case id; a case without one counts as an empty answer.
    """
    unknown = sorted({case.kind for case in cases} - set(CLASSES))
    if unknown:
        raise ValueError(f"unknown answerability class(es): {', '.join(unknown)}")
    metrics: dict[str, float | None] = {}
    for kind in CLASSES:
        members = [case for case in cases if case.kind == kind]
        replies = [reply_kind(predictions.get(case.case_id)) for case in members]
        metrics[f"{kind}_cases"] = float(len(members))
        for reply in CLASSES:
            metrics[f"{kind}_replied_{reply}"] = replies.count(reply) / len(members) if members else None
        precisions = [
            cited_precision(predictions[case.case_id], case.gold_evidence)
            for case, reply in zip(members, replies, strict=True)
            if reply in ANSWERED and case.gold_evidence and case.case_id in predictions
        ]
        metrics[f"{kind}_citation_precision"] = mean_or_none(precisions)
    refusal = refusal_scores(
        (reply_kind(predictions.get(case.case_id)) == "unanswerable", case.kind != "unanswerable")
        for case in cases
    )
    metrics["refusal_precision"] = refusal.precision
    metrics["refusal_recall"] = refusal.recall
    metrics["refusal_f1"] = refusal.f1
    metrics["clarified"] = metrics["underspecified_replied_underspecified"]
    metrics["partial_named"] = metrics["partial_replied_partial"]
    return metrics
