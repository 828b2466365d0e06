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


def test_each_case_reads_as_what_its_analyst_saw_at_the_threshold():
    from review.evaluation.selective import ANSWER, ASK_BACK, LOW_CONFIDENCE, REFUSED, outcome_at

    seen = [outcome_at(r, 0.5) for r in ROWS]
    assert [(o.shown_as, o.right) for o in seen] == [
        (ANSWER, True),
        (ANSWER, False),  # the wrong sentences, shown as an answer
        (ANSWER, False),  # an unanswerable question answered
        (LOW_CONFIDENCE, False),  # held back: refusing an answerable question is not right ...
        (REFUSED, True),
        (ASK_BACK, False),
    ]
    assert seen[3].answer_right is True  # ... and the page says the answer held back was right
    assert all(o.answer_right is None for o in seen if o.shown_as != LOW_CONFIDENCE)
    # The column agrees with the curve: the answers it shows are the curve's count at the threshold.
    assert sum(o.shown_as == ANSWER for o in seen) == coverage_point([case_of(r) for r in ROWS], 0.5).count


def test_a_case_without_metrics_reads_as_not_scored_with_no_mark():
    from review.evaluation.selective import NOT_SCORED, outcome_at

    assert (outcome_at({}, 0.5).shown_as, outcome_at({}, 0.5).right) == (NOT_SCORED, None)
