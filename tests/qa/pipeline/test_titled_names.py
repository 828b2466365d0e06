"""A name the question writes in full and the source shortens is still the name the source uses:
a title abbreviated or left out (analyst-bench train q015 asked about "General Lord Richards"; its
article says "Gen Lord Richards" and the question was refused) or a name written as its initials
("European Union" / "EU"). `default` with the real embedding model, in memory."""

from __future__ import annotations

import pytest

from documents.parsing.assemble import document_from_text
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.dialogue.gaps import missing_parts
from qa.pipeline.dialogue.turn_kind import names_missing
from qa.pipeline.flow.runner import answer_question
from tests.qa.pipeline.answering_fakes import make_passage
from tests.qa.pipeline.in_memory import in_memory_pipeline

STRATEGY = """Western strategy in Ukraine criticised

A former head of the British army accused Western leaders of lacking a long-term strategy in the war. \
Gen Lord Richards said the British government had adopted a "let's see how it goes" approach. \
Writing in a newspaper, he argued that the West lacked early and decisive coordination of its aims. \
He said leaders still did not know how they wanted the war to end."""

GRAIN = """Grain exports

Ships carrying grain left the ports of Odesa on Monday. The cargo is bound for Turkey and Egypt."""

SANCTIONS = """Sanctions on Russian oil

The EU agreed to ban most imports of Russian oil by the end of the year. \
Pipeline deliveries to Hungary and Slovakia were exempted after weeks of talks."""


@pytest.fixture(scope="module")
def pipeline():
    return in_memory_pipeline(
        [
            document_from_text(STRATEGY, external_id="news-strategy", filename="news-strategy.txt"),
            document_from_text(GRAIN, external_id="news-grain", filename="news-grain.txt"),
            document_from_text(SANCTIONS, external_id="news-sanctions", filename="news-sanctions.txt"),
        ]
    )


def answered_citing(pipeline, question: str) -> list[str]:
    """The cited source sentences of the question's answer, which must not be a refusal."""
    answer = answer_question(question, pipeline=pipeline).answer
    assert not answer.refused, answer.note
    return [source.text for sentence in answer.sentences for source in sentence.citations]


def test_a_question_giving_a_title_the_source_abbreviates_is_answered(pipeline):
    cited = answered_citing(pipeline, "What did General Lord Richards say about Western strategy?")
    assert any(text.startswith("Gen Lord Richards said the British government had adopted") for text in cited)


def test_a_name_no_passage_mentions_still_counts_as_missing():
    # Both words of the name are missing: the passages are about someone else.
    assert names_missing("What did General Lord Richards say?", ["general", "lord", "richards"]) == (
        "general",
        "lord",
        "richards",
    )
    # Only the title is missing: "Lord Richards" is mentioned.
    assert names_missing("What did General Lord Richards say?", ["general"]) == ()
    assert names_missing("What did the Spanish envoy say?", ["spanish"]) == ("spanish",)
    assert names_missing("Why?", ["why"]) == () and names_missing("", []) == ()


def test_a_name_the_source_writes_as_its_initials_is_answered(pipeline):
    cited = answered_citing(pipeline, "What did the European Union decide about Russian oil?")
    assert any(text.startswith("The EU agreed to ban most imports of Russian oil") for text in cited)


def test_initials_cover_only_the_name_they_spell():
    def lacking(question, text):
        return missing_parts(question, [ScoredPassage(make_passage("d1", [text]), 1.0)])

    assert lacking("What did the European Union ban?", "The EU banned imports.") == ()
    assert lacking("What did NATO decide?", "The North Atlantic Treaty Organization decided to meet.") == ()
    # Other initials are another name: the union is still missing.
    assert "union" in lacking("What did the European Union ban?", "The UN banned imports in Europe.")
