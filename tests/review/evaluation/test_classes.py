"""Per-class scores on hand-computed cases (MTRAG-UN's four answerability classes)."""

import pytest

from review.evaluation.classes import ClassCase, class_metrics, reply_kind
from review.evaluation.types import Prediction


def said(case_id, kind, cited=(), refused=False):
    return Prediction(case_id, "text", refused, (), tuple(cited), kind=kind)


CASES = [
    ClassCase("a1", "answerable", ("d#1", "d#2")),
    ClassCase("a2", "answerable", ("e#1",)),
    ClassCase("a3", "answerable", ("f#1",)),
    ClassCase("u1", "unanswerable"),
    ClassCase("u2", "unanswerable"),
    ClassCase("s1", "underspecified"),
    ClassCase("s2", "underspecified"),
    ClassCase("p1", "partial", ("g#1",)),
]
PREDICTIONS = {
    "a1": said("a1", "answerable", ["d#1", "x#9"]),  # precision 1/2
    "a2": said("a2", "answerable", ["e#1"]),  # precision 1
    "a3": said("a3", "unanswerable", refused=True),  # a wrong refusal: no citation precision
    "u1": said("u1", "unanswerable", refused=True),
    "u2": said("u2", "answerable", ["z#1"]),  # answered what it should have refused
    "s1": said("s1", "underspecified"),
    "s2": said("s2", "unanswerable", refused=True),  # refusing instead of asking: a false positive
    "p1": said("p1", "partial", ["g#1", "h#1", "h#2"]),  # precision 1/3
}


def test_each_class_counts_its_reply_kinds():
    m = class_metrics(CASES, PREDICTIONS)
    assert m["answerable_cases"] == 3
    assert m["answerable_replied_answerable"] == pytest.approx(2 / 3)
    assert m["answerable_replied_unanswerable"] == pytest.approx(1 / 3)
    assert m["underspecified_replied_underspecified"] == 0.5 == m["clarified"]
    assert m["partial_named"] == 1.0


def test_refusal_counts_every_class_and_a_refused_clarification_is_a_false_positive():
    m = class_metrics(CASES, PREDICTIONS)
    # Refused: a3, u1, s2 -> TP 1 (u1), FP 2 (a3, s2); unanswerable not refused: u2 -> FN 1.
    assert m["refusal_precision"] == pytest.approx(1 / 3)
    assert m["refusal_recall"] == pytest.approx(1 / 2)
    assert m["refusal_f1"] == pytest.approx(2 * 1 / (2 * 1 + 2 + 1))


def test_citation_precision_is_over_the_answered_cases_with_gold_evidence():
    m = class_metrics(CASES, PREDICTIONS)
    assert m["answerable_citation_precision"] == pytest.approx((1 / 2 + 1) / 2)
    assert m["partial_citation_precision"] == pytest.approx(1 / 3)
    assert m["unanswerable_citation_precision"] is None  # no gold evidence to cite


def test_an_answer_citing_nothing_scores_zero_and_a_missing_prediction_is_an_empty_answer():
    cases = [ClassCase("a", "answerable", ("d#1",)), ClassCase("u", "unanswerable")]
    m = class_metrics(cases, {"a": said("a", "answerable")})
    assert m["answerable_citation_precision"] == 0.0
    assert m["unanswerable_replied_answerable"] == 1.0 and m["refusal_recall"] == 0.0


def test_a_prediction_stored_before_reply_kinds_reads_from_its_refusal():
    assert reply_kind(Prediction("x", "", True, (), ())) == "unanswerable"
    assert reply_kind(Prediction("x", "an answer", False, (), ())) == "answerable"


def test_an_unknown_class_is_an_error():
    with pytest.raises(ValueError, match="maybe"):
        class_metrics([ClassCase("x", "maybe")], {})
