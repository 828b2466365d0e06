"""The risk-coverage curve the evaluation page and bench/reply_thresholds.py draw."""

from __future__ import annotations

from review.evaluation.selective import case_of, coverage_point, risk_coverage


def row(confidence, *, refused=False, answerable=True, f1=1.0, kind=""):
    return {
        "confidence": confidence,
        "refused": refused,
        "answerable": answerable,
        "citation_f1": f1,
        "kind": kind,
    }


ROWS = [
    row(0.9),  # right, shown until 0.9
    row(0.8, f1=0.4),  # cites the wrong sentences: shown, wrong
    row(0.6, answerable=False),  # answered an unanswerable question: shown, wrong
    row(0.3),  # right but unsure
    row(0.9, refused=True, answerable=False),  # a refusal is never shown as an answer
    row(None, kind="underspecified"),  # a clarifying question neither
]


def test_each_threshold_shows_fewer_answers_and_counts_the_right_ones():
    cases = [case_of(r) for r in ROWS]
    by_threshold = {p.threshold: (p.count, p.right) for p in risk_coverage(cases)}
    assert by_threshold[0.0] == (4, 0.5)
    assert by_threshold[0.5] == (3, 1 / 3)
    assert by_threshold[0.85] == (1, 1.0)
    assert by_threshold[0.95] == (0, None)
    assert coverage_point(cases, 0.0).shown == 4 / 6


def test_an_answer_without_a_confidence_is_shown_at_every_threshold():
    [case] = [case_of(row(None))]
    assert coverage_point([case], 0.95).count == 1
