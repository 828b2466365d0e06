"""Probes of the issue's own case: a corpus of history articles about an island, and on-topic
questions asking facts none of them states ("What was the population of Dominica in 2020, and how has
it changed?" against an article on Dominica's colonial history). They must be refused; questions the
articles do answer must still be answered. ``default`` preset, real embedding model, in memory.

The articles are short texts written for this test (not copied from any source).
"""

from __future__ import annotations

import pytest

from documents.parsing.assemble import document_from_text
from qa.pipeline.flow.runner import answer_question
from tests.qa.pipeline.in_memory import in_memory_pipeline

COLONIAL_HISTORY = """Dominica: from colony to independent state

Before Europeans arrived, the island was home to the Kalinago, who had settled it centuries earlier
and resisted the first attempts at colonisation. French settlers and missionaries established small
coffee estates on the island during the early eighteenth century.

Britain took control of the island after the Seven Years' War, and the Treaty of Paris confirmed
British rule in 1763. The French briefly occupied it again during the American Revolutionary War
before returning it to Britain in 1783.

Under British rule the plantation economy relied on enslaved Africans until slavery was abolished
across the empire in 1834. In the late nineteenth century the colonial government took more direct
control, and the elected assembly lost most of its powers.

Dominica became an associated state of the United Kingdom in 1967, governing its internal affairs.
It gained full independence on 3 November 1978, with Patrick John as its first prime minister."""

HURRICANES = """Storms and recovery in Dominica

Hurricane David struck Dominica in August 1979, less than a year after independence, destroying much
of the housing on the island and most of the banana crop.

In September 2017 Hurricane Maria passed directly over the island as a category 5 storm. Roads,
bridges and the electricity network were badly damaged, and nearly every roof on the island was
harmed. The government announced a plan to make Dominica the first climate-resilient nation."""

ECONOMY = """The economy of Dominica

Agriculture, above all bananas sold to Britain under preferential terms, was the base of the economy
for most of the twentieth century. When those preferences ended, banana growers lost much of their
market and many farms were abandoned.

The government has since promoted ecotourism, built around the island's rainforest, hot springs and
the Boiling Lake, and sells citizenship to foreign investors who buy property or contribute to a
national fund. Offshore banking and light manufacturing, such as soap from local coconut oil, add
smaller shares."""

UNSTATED = [
    "What was the population of Dominica in 2020, and how has it changed?",
    "What was Dominica's GDP in 2019?",
    "How many people died during Hurricane Maria in Dominica?",
    "What percentage of Dominica's exports were bananas in 1990?",
    "How much did rebuilding after Hurricane Maria cost?",
    # The history names only the first prime minister (1978): not the current one.
    "Who is the current prime minister of Dominica?",
]
ANSWERABLE = [
    ("When did Dominica gain independence?", "1978"),
    ("Who was Dominica's first prime minister?", "Patrick John"),
    ("When was slavery abolished in Dominica?", "1834"),
    ("Which hurricane struck Dominica in 1979?", "David"),
    # Known miss: the answer is the two banana sentences, the ones most like the question; the
    # sentence that answers it ("The government has since promoted ecotourism") shares no word
    # with "replaced", and nothing checks that the answer names what came after the bananas.
    pytest.param(
        "What replaced bananas in Dominica's economy?",
        "ecotourism",
        marks=pytest.mark.xfail(
            strict=True, reason="answered with the banana sentences only, not the ecotourism one"
        ),
    ),
]


def article(text: str, name: str):
    # The texts above are wrapped for reading; a paragraph is one line in the file an analyst uploads.
    unwrapped = "\n\n".join(" ".join(paragraph.split()) for paragraph in text.split("\n\n"))
    return document_from_text(unwrapped, external_id=name, filename=f"{name}.txt")


@pytest.fixture(scope="module")
def history():
    return in_memory_pipeline(
        [
            article(COLONIAL_HISTORY, "colonial-history"),
            article(HURRICANES, "hurricanes"),
            article(ECONOMY, "economy"),
        ]
    )


@pytest.mark.parametrize("question", UNSTATED)
def test_an_on_topic_question_for_a_fact_no_article_states_is_refused(history, question):
    run = answer_question(question, pipeline=history)
    answer = run.answer
    assert answer.refused or answer.kind == "partial", f"answered {question!r} with {answer.text!r}"
    if not answer.refused:
        # A partial answer must name what it could not find, never pass for a whole answer.
        assert answer.missing, f"partial answer to {question!r} names nothing missing"
    assert answer.confidence is None or answer.confidence <= 0.99


def test_an_answer_naming_only_the_first_holder_is_refused_saying_so(history):
    run = answer_question("Who is the current prime minister of Dominica?", pipeline=history)
    assert run.answer.refused
    assert "not the current one" in run.answer.note


@pytest.mark.parametrize(("question", "fact"), ANSWERABLE)
def test_a_question_the_articles_answer_is_answered_with_the_fact(history, question, fact):
    run = answer_question(question, pipeline=history)
    assert not run.answer.refused, f"refused {question!r}: {run.answer.note}"
    assert fact in run.answer.text
