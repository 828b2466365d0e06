"""Conflicting statements between documents, found by the heuristic of qa.pipeline.checks.claims.

Constructed pairs: each positive is a contradiction an analyst would want flagged,
each negative a pair that only looks like one.
"""

from __future__ import annotations

import datetime

import pytest

from qa.pipeline.checks.claims import claim_conflict, find_claim_conflicts
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.core.text import content_words
from qa.pipeline.core.types import Passage, SourceSentence

_ids = iter(range(1, 10_000))


def sentence(document: str, text: str) -> SourceSentence:
    return SourceSentence(next(_ids), document, document.title(), 0, "S1", text)


CONFLICTS = [
    (
        "negation",
        "Did the talks in Geneva resume?",
        "The peace talks in Geneva resumed on Monday after a week of delays.",
        "The peace talks in Geneva did not resume on Monday after a week of delays.",
    ),
    (
        "outcome",
        "Who won the vote on the budget?",
        "The governing coalition won the parliamentary vote on the budget by a wide margin.",
        "The governing coalition lost the parliamentary vote on the budget after defections.",
    ),
    (
        "outcome",
        "What did the regulator decide on the merger?",
        "The competition regulator approved the merger of the two largest telecom operators.",
        "The competition regulator rejected the merger of the two largest telecom operators.",
    ),
    (
        "outcome",
        "What happened to gas prices in Europe?",
        "European gas prices rose sharply after the pipeline announcement.",
        "European gas prices fell sharply after the pipeline announcement.",
    ),
    (
        "entity",
        "Who won the presidential election in Mali?",
        "Ibrahim Keita won the presidential election in Mali with a clear majority.",
        "Soumaila Cisse won the presidential election in Mali with a clear majority.",
    ),
]

NOT_CONFLICTS = [
    # Different years: the same words describe two events.
    (
        "Who won the presidential election in Mali?",
        "Ibrahim Keita won the presidential election in Mali in 2013.",
        "Soumaila Cisse won the presidential election in Mali in 2018.",
    ),
    # Different subjects that share a topic: prices rose, flows fell.
    (
        "What happened to gas in Europe?",
        "European gas prices rose sharply on Monday.",
        "Russian gas flows to Germany fell after the turbine dispute with Siemens.",
    ),
    # Both say the same thing, one in other words.
    (
        "Did the talks in Geneva resume?",
        "The peace talks in Geneva resumed on Monday.",
        "Negotiators said the peace talks in Geneva resumed on Monday morning.",
    ),
    # A negation about something else in an otherwise unrelated sentence.
    (
        "Did the talks in Geneva resume?",
        "The peace talks in Geneva resumed on Monday after a week of delays.",
        "No date has been set for elections in the region, officials in Kyiv said.",
    ),
    # Records of two reference entries (two countries), not statements about one thing.
    (
        "What are the major rivers of Austria?",
        "Geography: Major rivers (by length in km): Donau (Danube) (shared with Germany) - 2,888 km",
        "Environment: Major rivers (by length in km): Dunaj (Danube) (shared with Austria) - 2,888 km",
    ),
    (
        "What religions are practised in Kosovo?",
        "People and Society: Religions: Muslim 95.6%, Roman Catholic 2.2%, none 0.1% (2011 est.)",
        "People and Society: Religions: Muslim 56.7%, Roman Catholic 10%, Orthodox 6.8% (2011 est.)",
    ),
    # Off the question's subject entirely.
    (
        "What is the population of Oman?",
        "The governing coalition won the parliamentary vote on the budget.",
        "The governing coalition lost the parliamentary vote on the budget.",
    ),
]


@pytest.mark.parametrize(("kind", "question", "first", "second"), CONFLICTS)
def test_contradicting_statements_from_two_documents_are_found_with_their_kind(kind, question, first, second):
    found = claim_conflict(sentence("a", first), sentence("b", second), content_words(question))
    assert found is not None
    assert found[0] == kind


@pytest.mark.parametrize(("question", "first", "second"), NOT_CONFLICTS)
def test_pairs_that_only_look_alike_are_not_flagged(question, first, second):
    assert claim_conflict(sentence("a", first), sentence("b", second), content_words(question)) is None


def test_two_entries_saying_the_same_of_their_own_subjects_do_not_conflict():
    question = content_words("Which countries have Major Non-NATO Ally status with the US?")
    status = (
        " has Major Non-NATO Ally status with the US, a designation that gives partners benefits in trade."
    )
    jordan = SourceSentence(1, "factbook/Jordan", "Jordan", 0, "1", "Jordan" + status)
    kuwait = SourceSentence(2, "factbook/Kuwait", "Kuwait", 0, "1", "Kuwait" + status)
    assert claim_conflict(jordan, kuwait, question) is None
    # The same pair in two news reports about one country is a conflict.
    report = SourceSentence(3, "news/a", "Gulf news", 0, "1", jordan.text)
    other = SourceSentence(4, "news/b", "Gulf news", 0, "1", kuwait.text)
    assert claim_conflict(report, other, question)[0] == "entity"


def test_a_conflict_names_both_sources_their_dates_and_says_it_is_heuristic():
    kind, question, first, second = CONFLICTS[1]
    mine, theirs = sentence("herald", first), sentence("courier", second)
    passages = [
        Passage("chunk:1", "chunk", "herald", "Herald", first, (mine,), datetime.date(2022, 7, 21), "wire"),
        Passage(
            "chunk:2", "chunk", "courier", "Courier", second, (theirs,), datetime.date(2022, 7, 22), "daily"
        ),
    ]
    [conflict] = find_claim_conflicts(question, [mine], passages)
    assert conflict.other == theirs
    text = conflict.describe()
    assert "Herald (2022-07-21)" in text and "Courier (2022-07-22)" in text
    assert '"won"' in text and '"lost"' in text and "heuristic" in text


def test_the_same_document_never_disagrees_with_itself():
    _, question, first, second = CONFLICTS[0]
    mine, same = sentence("a", first), sentence("a", second)
    passages = [Passage("chunk:1", "chunk", "a", "A", first, (mine, same))]
    assert find_claim_conflicts(question, [mine], passages) == []


def test_statement_conflicts_can_be_switched_off_in_the_answer_config():
    assert AnswerConfig().disagreement_claims
    assert not AnswerConfig(disagreement_claims=False).disagreement_claims
