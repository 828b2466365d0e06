"""Several runs side by side: the metric grid and each case's answers with gold evidence marked."""

from __future__ import annotations

from review.evaluation.compare import (
    GoldCaseView,
    compare_cases,
    disagreeing_first,
    metric_grid,
)


def test_the_grid_has_every_metric_some_run_has_and_marks_the_best():
    grid = {row.metric: row for row in metric_grid([
        {"recall_at_1": 0.5, "citation_f1": 0.4, "confidence_ece": 0.10, "mrr": None},
        {"recall_at_1": 0.7, "citation_f1": 0.4, "confidence_ece": 0.05, "mrr": None},
        {"recall_at_1": 0.7, "citation_f1": None, "confidence_ece": 0.20, "mrr": None},
    ])}  # fmt: skip
    assert list(grid) == ["recall_at_1", "citation_f1", "confidence_ece"]  # AGGREGATE_KEYS order; mrr nowhere
    assert grid["recall_at_1"].values == (0.5, 0.7, 0.7) and grid["recall_at_1"].best == {1, 2}
    assert grid["citation_f1"].best == frozenset()  # a tie between the two that have it
    assert grid["confidence_ece"].best == {1}  # calibration error: lower is better


def _case(case_id: str, evidence=("d1#S2", "d1#S3"), answerable=True) -> GoldCaseView:
    return GoldCaseView(
        case_id=case_id,
        question=f"question {case_id}",
        reference_answer="ref",
        answerable=answerable,
        gold_evidence=evidence,
        evidence_texts={key: f"text of {key}" for key in evidence},
    )


def _stored(cited, *, f1, refused=False, texts=None):
    return {
        "prediction": {
            "answer": "an answer",
            "refused": refused,
            "cited_evidence": cited,
            "cited_texts": texts or [],
        },
        "metrics": {"citation_f1": f1, "gold_rank": 1},
        "error": "",
    }


def test_each_answer_marks_which_citations_are_gold_and_a_missing_run_says_so():
    cases = [_case("dev/q1"), _case("dev/q2")]
    runs = [
        {
            "dev/q1": _stored(["d1#S2", "d1#S9"], f1=0.5, texts=["cited S2", "cited S9"]),
            "dev/q2": _stored([], f1=0.0),
        },
        {"dev/q1": _stored(["d1#S3"], f1=0.67)},
    ]
    first, second = compare_cases(cases, runs)
    a, b = first.answers
    assert [(c.key, c.gold, c.text) for c in a.cited] == [
        ("d1#S2", True, "cited S2"),
        ("d1#S9", False, "cited S9"),
    ]
    assert [(c.key, c.gold, c.text) for c in b.cited] == [
        ("d1#S3", True, "text of d1#S3")
    ]  # text from the gold
    assert a.gold_rank == 1 and round(first.spread, 2) == 0.17
    assert second.answers[1].missing and second.spread == 0.0  # only one run answered it


def test_the_cases_the_runs_disagree_on_come_first():
    cases = [_case("dev/a"), _case("dev/b"), _case("dev/c")]
    runs = [
        {"dev/a": _stored([], f1=0.5), "dev/b": _stored([], f1=0.0), "dev/c": _stored([], f1=0.9)},
        {"dev/a": _stored([], f1=0.5), "dev/b": _stored([], f1=1.0), "dev/c": _stored([], f1=0.6)},
    ]
    ordered = disagreeing_first(compare_cases(cases, runs))
    assert [c.case.case_id for c in ordered] == ["dev/b", "dev/c", "dev/a"]
