"""Ranking, answer and class metrics on cases computed by hand."""

from __future__ import annotations

import math

import pytest

from review.evaluation import ranking as r

# Ranking d1 d2 d1 d3 d4 collapses to d1 d2 d3 d4; gold {d2, d4, d9}.
RETRIEVED = ("d1", "d2", "d1", "d3", "d4")
GOLD = ("d2", "d4", "d9")


def test_precision_counts_distinct_documents_over_k():
    assert r.precision_at_k(RETRIEVED, GOLD, 1) == 0.0
    assert r.precision_at_k(RETRIEVED, GOLD, 2) == 0.5  # d1 d2
    assert r.precision_at_k(RETRIEVED, GOLD, 4) == 0.5  # d1 d2 d3 d4
    assert r.precision_at_k(RETRIEVED, GOLD, 10) == 0.2  # 2 relevant over k=10


def test_recall_is_the_share_of_gold_documents_found():
    assert r.recall_fraction_at_k(RETRIEVED, GOLD, 2) == pytest.approx(1 / 3)
    assert r.recall_fraction_at_k(RETRIEVED, GOLD, 5) == pytest.approx(2 / 3)
    assert r.recall_fraction_at_k(RETRIEVED, (), 5) is None


def test_hit_is_any_gold_document_in_the_first_k():
    assert r.hit_at_k(RETRIEVED, GOLD, 1) == 0.0
    assert r.hit_at_k(RETRIEVED, GOLD, 2) == 1.0


def test_average_precision_by_hand():
    # Relevant at distinct ranks 2 and 4: (1/2 + 2/4) / min(10, 3) = 1/3.
    assert r.average_precision_at_k(RETRIEVED, GOLD, 10) == pytest.approx(1 / 3)
    # Cut at 3: only rank 2 counts, divided by min(3, 3).
    assert r.average_precision_at_k(RETRIEVED, GOLD, 3) == pytest.approx((1 / 2) / 3)
    assert r.average_precision_at_k(("g",), ("g",), 10) == 1.0


def test_ndcg_by_hand():
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert r.ndcg_at_k(RETRIEVED, GOLD, 10) == pytest.approx(dcg / ideal)
    assert r.ndcg_at_k(("d2", "d4", "d9"), GOLD, 10) == pytest.approx(1.0)
    assert r.ndcg_at_k((), GOLD, 10) == 0.0


def test_k_below_one_is_an_error():
    with pytest.raises(ValueError, match="k must be at least 1"):
        r.precision_at_k(RETRIEVED, GOLD, 0)


def test_ranking_row_has_every_cutoff_and_is_empty_without_gold():
    row = r.ranking_row(RETRIEVED, GOLD)
    assert row["hit_at_10"] == 1.0 and row["gold_recall_at_20"] == pytest.approx(2 / 3)
    assert set(r.ranking_row(RETRIEVED, ()).values()) == {None}
    assert set(row) == set(r.ranking_row(RETRIEVED, ()))


def test_exact_match_normalises_and_treats_null_answers_as_squad_does():
    assert r.exact_match("The Nile.", "nile") == 1.0
    assert r.exact_match("Nile river", "Nile") == 0.0
    assert r.exact_match(None, "") == 1.0  # refused an unanswerable question
    assert r.exact_match("", "Nile") == 0.0  # refused an answerable one


def test_class_scores_by_hand():
    # (answered, answerable): 3 answerable (2 answered), 2 unanswerable (1 refused).
    scores = r.class_scores([(True, True), (True, True), (False, True), (True, False), (False, False)])
    assert scores.answerable.precision == pytest.approx(2 / 3)
    assert scores.answerable.recall == pytest.approx(2 / 3)
    assert scores.unanswerable.precision == pytest.approx(1 / 2)
    assert scores.unanswerable.recall == pytest.approx(1 / 2)
    assert scores.unanswerable.f1 == pytest.approx(0.5)
    assert r.class_scores([(True, True)]).unanswerable is None
    flat = r.class_metrics(scores)
    assert set(flat) == set(r.CLASS_KEYS) and flat["answerable_f1"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many staff did the port employ?", "quantity"),
        ("What percentage of the land is forested?", "quantity"),
        ("When did the crane terminal open?", "date"),
        ("Who led the government in 1980?", "person"),
        ("Where is the harbour authority based?", "place"),
        ("Why did the floods worsen?", "reason"),
        ("Is Westmere a republic?", "yes/no"),
        ("What is the capital of Westmere?", "description"),
        ("Population of Dominica", "other"),
    ],
)
def test_question_types(question, kind):
    assert r.question_type(question) == kind


def test_per_type_means_skip_missing_values():
    rows = [
        {"question_type": "date", "citation_f1": 1.0},
        {"question_type": "date", "citation_f1": 0.5},
        {"question_type": "person", "citation_f1": None},
    ]
    table = r.by_question_type(rows, ["citation_f1"])
    assert table["date"] == {"cases": 2.0, "citation_f1": 0.75}
    assert table["person"] == {"cases": 1.0, "citation_f1": None}
