"""The time a question names, and a ranking that prefers documents published then (pure)."""

from __future__ import annotations

import datetime

import pytest

from qa.pipeline.core.types import Passage, ScoredPassage
from qa.pipeline.reading.dates import DocumentScope, prefer_period, question_period

D = datetime.date


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("How was Russia using gas as a tool of influence in mid-2022?", D(2022, 5, 1), D(2022, 8, 31)),
        ("What happened to gas flows in July 2022?", D(2022, 7, 1), D(2022, 7, 31)),
        ("What did Gazprom announce on 21 July 2022?", D(2022, 7, 21), D(2022, 7, 21)),
        ("What did Gazprom announce on July 21, 2022?", D(2022, 7, 21), D(2022, 7, 21)),
        ("What did the 2022-07-21 report say?", D(2022, 7, 21), D(2022, 7, 21)),
        ("Who won the elections in 2013 and 2018?", D(2013, 1, 1), D(2018, 12, 31)),
        ("What changed between March 2022 and May 2022?", D(2022, 3, 1), D(2022, 5, 31)),
        ("What were the Q2 2022 results?", D(2022, 4, 1), D(2022, 6, 30)),
        ("What did ministers say in the summer of 2022?", D(2022, 6, 1), D(2022, 8, 31)),
        ("What happened to gas flows in late July 2022?", D(2022, 7, 21), D(2022, 7, 31)),
        ("What happened in mid-June 2022?", D(2022, 6, 11), D(2022, 6, 20)),
    ],
)
def test_the_period_a_question_names(question, start, end):
    period = question_period(question)
    assert period is not None
    assert (period.start, period.end) == (start, end)


@pytest.mark.parametrize(
    "question",
    [
        "What is the capital of Westmere?",
        "Who may attend the meeting?",  # "may" is not a month here
        "How much did the budget of $2015 million buy?",
        "What happened in the 1990s?",
        "How many of the 2,022 delegates voted?",
    ],
)
def test_questions_without_a_date_name_no_period(question):
    assert question_period(question) is None


def _hit(document: str, score: float, published: datetime.date | None) -> ScoredPassage:
    passage = Passage(f"chunk:{document}", "chunk", document, document, "text", (), published, "wire")
    return ScoredPassage(passage, score, {"rerank": score})


def test_a_named_period_moves_a_document_of_that_time_above_an_equally_good_one_from_another():
    ranked = [
        _hit("june-article", 0.80, D(2022, 6, 14)),
        _hit("july-article", 0.78, D(2022, 7, 21)),
        _hit("factbook", 0.60, None),
    ]
    reordered = prefer_period(ranked, question_period("What happened to gas flows in July 2022?"))
    assert [h.passage.document_id for h in reordered] == ["july-article", "june-article", "factbook"]
    assert reordered[0].scores["before_date"] == 0.78  # the trace keeps the score it had


def test_a_document_of_that_time_moves_up_a_few_places_not_to_the_top_from_anywhere():
    ranked = [_hit(f"june-{n}", 0.9 - n / 100, D(2022, 6, 10 + n)) for n in range(6)]
    ranked.append(_hit("july-article", 0.5, D(2022, 7, 21)))
    order = [h.passage.document_id for h in prefer_period(ranked, question_period("in July 2022"))]
    # Three places up from the seventh draws level with the fourth, which keeps its place (a tie).
    assert order.index("july-article") == 4


def test_without_a_period_or_without_dates_the_ranking_is_unchanged():
    dated = [_hit("a", 0.8, D(2022, 6, 14)), _hit("b", 0.7, D(2022, 7, 21))]
    assert prefer_period(dated, None) == tuple(dated)
    undated = [_hit("a", 0.8, None), _hit("b", 0.7, None)]
    assert prefer_period(undated, question_period("in July 2022")) == tuple(undated)


def test_a_scope_admits_by_date_and_source_and_refuses_an_empty_range():
    scope = DocumentScope(D(2022, 7, 1), D(2022, 7, 31), ("wire",))
    assert scope.admits(D(2022, 7, 21), "wire")
    assert not scope.admits(D(2022, 6, 30), "wire")
    assert not scope.admits(D(2022, 7, 21), "daily")
    assert not scope.admits(None, "wire")  # a date range leaves undated documents out
    assert DocumentScope(sources=("wire",)).admits(None, "wire")
    assert not DocumentScope()
    with pytest.raises(ValueError, match="empty"):
        DocumentScope(D(2022, 8, 1), D(2022, 7, 1))
