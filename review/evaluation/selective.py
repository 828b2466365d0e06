"""Selective answering's risk-coverage curve: at each confidence threshold, how many questions are
shown as answers and how many of those are right. Pure: the bench and the evaluation page share it.

A case is shown as an answer at threshold t when it was answered (not refused, not asked back) and
its confidence is at least t (a case without a confidence is shown at every t: nothing marks it
down). Right: answerable with citation F1 >= 0.5 (``metrics.confidence_correct`` for an answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from review.evaluation.metrics import confidence_correct

THRESHOLDS: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(20))


@dataclass(frozen=True)
class SelectiveCase:
    confidence: float | None
    answered: bool  # shown at all: not refused, not a clarifying question
    right: bool  # right if shown: answerable and citation F1 >= 0.5


@dataclass(frozen=True)
class CoveragePoint:
    threshold: float
    shown: float  # share of all cases shown as answers
    right: float | None  # share of those shown that are right; None when none is shown
    count: int  # how many are shown


def case_of(row: Mapping) -> SelectiveCase:
    """A per-case metrics row (``review.evaluation.evaluate``) as a selective-answering case."""
    answered = not row["refused"] and row.get("kind") != "underspecified"
    right = confidence_correct(
        refused=False, answerable=row["answerable"], citation_f1=row.get("citation_f1")
    )
    return SelectiveCase(row.get("confidence"), answered, right)


def is_shown(case: SelectiveCase, threshold: float) -> bool:
    return case.answered and (case.confidence is None or case.confidence >= threshold)


def coverage_point(cases: Sequence[SelectiveCase], threshold: float) -> CoveragePoint:
    shown = [case for case in cases if is_shown(case, threshold)]
    right = sum(case.right for case in shown)
    return CoveragePoint(
        threshold, len(shown) / max(len(cases), 1), right / len(shown) if shown else None, len(shown)
    )


def risk_coverage(
    cases: Sequence[SelectiveCase], thresholds: Iterable[float] = THRESHOLDS
) -> list[CoveragePoint]:
    return [coverage_point(cases, threshold) for threshold in thresholds]


# What the analyst saw for one case at the run preset's threshold (docs/reply.md, "The outcomes").
ANSWER, LOW_CONFIDENCE, REFUSED, ASK_BACK = "answer", "low confidence", "refused", "asked back"
NOT_SCORED = "not scored"  # a case with no metrics (it failed, or was stored before they existed)


@dataclass(frozen=True)
class CaseOutcome:
    shown_as: str  # ANSWER, LOW_CONFIDENCE, REFUSED, ASK_BACK or NOT_SCORED
    # The reply is right: a right answer shown, or a refusal of an unanswerable question (None: not
    # scored).
    right: bool | None
    # For a low-confidence answer: whether the answer itself would have been right (the threshold
    # withheld a right answer, or kept a wrong one from being shown as one).
    answer_right: bool | None = None


def outcome_at(row: Mapping, threshold: float) -> CaseOutcome:
    """One per-case metrics row as the reply its analyst saw at ``threshold``. Right as the curve
    counts it: an answer shown is right when answerable with citation F1 >= 0.5; a refusal or a
    question back is right when the question is unanswerable; a low-confidence answer is not shown
    as an answer, so it is right where refusing would have been."""
    if "refused" not in row or "answerable" not in row:
        return CaseOutcome(NOT_SCORED, None)
    case = case_of(row)
    if row.get("kind") == "underspecified":
        return CaseOutcome(ASK_BACK, not row["answerable"])
    if row["refused"]:
        return CaseOutcome(REFUSED, not row["answerable"])
    if is_shown(case, threshold):
        return CaseOutcome(ANSWER, case.right)
    return CaseOutcome(LOW_CONFIDENCE, not row["answerable"], answer_right=case.right)
