"""Which sentences an extractive answer quotes: `default` with the real embedding model, in memory.

A small history of a fictional country, told over five decades, the way the Factbook's history
sections are (analyst-bench train q005: "what reforms did Sultan Qaboos enact in response to the
2011 demonstrations?" was answered with "In 1970, QABOOS overthrew his father ...").
"""

from __future__ import annotations

import dataclasses

import pytest

from documents.parsing.assemble import document_from_text
from qa.pipeline.config.presets import get_preset
from qa.pipeline.flow.runner import answer_question
from tests.qa.pipeline.in_memory import in_memory_pipeline

HISTORY = """Marenia: History

Traders in the coastal towns of Marenia grew rich on the spice routes of the western sea. \
In 1970, Prince Tavor deposed his father and ruled Marenia as its sovereign for the next five decades. \
His modernization program built roads, schools and hospitals across the country. \
He kept close ties with distant allies and stayed neutral in the quarrels of his neighbours. \
In 2011, protests that swept the region reached Marenia, where crowds demanded jobs \
and an end to corruption. \
In response, Prince Tavor carried out political reforms, giving the elected council the power to draft laws \
and to question ministers. \
He also raised unemployment benefits and ordered a national campaign to hire young people. \
Prince Tavor died in 2020 and was succeeded by his nephew."""

ECONOMY = """Marenia: Economy

Marenia exports dates, fish and copper. Tourism grew quickly after the new airport opened. \
The currency is pegged to a basket of foreign currencies."""


@pytest.fixture(scope="module")
def corpus():
    return [
        document_from_text(HISTORY, external_id="marenia-history", filename="marenia-history.txt"),
        document_from_text(ECONOMY, external_id="marenia-economy", filename="marenia-economy.txt"),
    ]


def quoted(corpus, question: str, **answer_changes) -> list[str]:
    config = get_preset("default")
    config = dataclasses.replace(config, answer=dataclasses.replace(config.answer, **answer_changes))
    pipeline = in_memory_pipeline(corpus, config)
    answer = answer_question(question, pipeline=pipeline).answer
    assert not answer.refused, answer.note
    return [cited.text for sentence in answer.sentences for cited in sentence.citations]


def test_a_question_about_one_year_is_not_answered_with_what_happened_in_another(corpus):
    question = "What political reforms did Prince Tavor make in response to the 2011 protests?"
    cited = " ".join(quoted(corpus, question))
    assert "In response, Prince Tavor carried out political reforms" in cited
    assert "In 2011, protests" in cited
    assert "died in 2020" not in cited and "In 1970" not in cited
    # What the answer quoted before: his death nine years later, beside the reforms. Either the
    # year filter or the year counted as a word of the question keeps it out now.
    without_both = quoted(corpus, question, extractive_same_time=False, extractive_question_shape=False)
    assert "died in 2020" in " ".join(without_both)
    assert "died in 2020" not in " ".join(quoted(corpus, question, extractive_same_time=False))


def test_a_year_in_a_later_part_of_the_question_narrows_only_that_part(corpus):
    question = "How did Marenia change under Prince Tavor, and what did he do after the protests of 2011?"
    cited = " ".join(quoted(corpus, question))
    assert "In 1970, Prince Tavor deposed his father" in cited
    assert "In response, Prince Tavor carried out political reforms" in cited
