"""A person the question names with a title the source abbreviates or leaves out is still the person
the source names: `default` with the real embedding model, in memory (analyst-bench train q015 asked
about "General Lord Richards"; its article says "Gen Lord Richards" and the question was refused)."""

from __future__ import annotations

import pytest

from documents.parsing.assemble import document_from_text
from qa.pipeline.embedding import SentenceTransformerEmbedder
from qa.pipeline.factory import ModelClients, build_pipeline
from qa.pipeline.memory_index import InMemoryCorpusIndex
from qa.pipeline.presets import get_preset
from qa.pipeline.runner import answer_question
from qa.pipeline.turn_kind import names_missing

STRATEGY = """Western strategy in Ukraine criticised

A former head of the British army accused Western leaders of lacking a long-term strategy in the war. \
Gen Lord Richards said the British government had adopted a "let's see how it goes" approach. \
Writing in a newspaper, he argued that the West lacked early and decisive coordination of its aims. \
He said leaders still did not know how they wanted the war to end."""

GRAIN = """Grain exports

Ships carrying grain left the ports of Odesa on Monday. The cargo is bound for Turkey and Egypt."""


@pytest.fixture(scope="module")
def pipeline():
    embedder = SentenceTransformerEmbedder()
    documents = [
        document_from_text(STRATEGY, external_id="news-strategy", filename="news-strategy.txt"),
        document_from_text(GRAIN, external_id="news-grain", filename="news-grain.txt"),
    ]
    index = InMemoryCorpusIndex(documents, embedder)
    return build_pipeline(get_preset("default"), index=index, clients=ModelClients(embedder=embedder))


def test_a_question_giving_a_title_the_source_abbreviates_is_answered(pipeline):
    question = "What did General Lord Richards say about Western strategy?"
    answer = answer_question(question, pipeline=pipeline).answer
    assert not answer.refused, answer.note
    cited = [source.text for sentence in answer.sentences for source in sentence.citations]
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
