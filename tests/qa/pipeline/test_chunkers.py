"""Chunkers: sentence windows, recursive character splitting, token windows, and recutting per preset."""

from __future__ import annotations

import pytest

from qa.pipeline.config.presets import PipelineConfig, get_preset
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.search.chunking import ChunkerConfig, recursive_character_spans, token_window_spans
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from qa.pipeline.search.rechunk import RechunkedIndex
from qa.pipeline.search.retrieval import RetrievalConfig, retrieve
from tests.qa.pipeline.test_retrieval import CORPUS


def test_token_windows_share_overlap_tokens_and_cut_the_last_short():
    text = "a bb c dd e f g"
    spans = token_window_spans(text, size=3, overlap=1)
    assert [text[s:e] for s, e in spans] == ["a bb c", "c dd e", "e f g"]
    other = "one two three four"
    assert [other[s:e] for s, e in token_window_spans(other, 3, 1)] == [
        "one two three",
        "three four",
    ]
    assert token_window_spans("   ", 3, 1) == []


def test_recursive_splitting_prefers_paragraphs_then_sentences_then_words():
    text = "First para one. Still first.\n\nSecond para is here."
    # Whole paragraphs fit in 30 characters: cut at the blank line only.
    assert [text[s:e] for s, e in recursive_character_spans(text, 30, 0)] == [
        "First para one. Still first.",
        "Second para is here.",
    ]
    # 16 characters: the first paragraph splits after its sentence end, the second at spaces.
    assert [text[s:e] for s, e in recursive_character_spans(text, 16, 0)] == [
        "First para one.",
        "Still first.",
        "Second para is",
        "here.",
    ]
    # A word longer than the limit is cut anywhere.
    word = "abcdefgh"
    assert [word[s:e] for s, e in recursive_character_spans(word, 3, 0)] == ["abc", "def", "gh"]


def test_recursive_chunks_repeat_trailing_pieces_within_the_overlap():
    text = "aa bb cc dd ee"
    chunks = [text[s:e] for s, e in recursive_character_spans(text, 9, 3)]
    # Pieces "aa ", "bb ", ...; each chunk after the first starts with the last piece before.
    assert chunks == ["aa bb cc", "cc dd ee"]
    with pytest.raises(ValueError):
        recursive_character_spans(text, 5, 5)


def test_chunks_map_back_to_the_sentences_they_touch():
    sentences = ["One two three.", "Four five six seven.", "Eight."]
    by_tokens = ChunkerConfig("tokens", size=4, overlap=1).cut(sentences)
    assert [(c.text, c.first, c.last) for c in by_tokens] == [
        ("One two three. Four", 0, 1),
        ("Four five six seven.", 1, 1),
        ("seven. Eight.", 1, 2),
    ]
    windows = ChunkerConfig("sentences", size=2, overlap=1).cut(sentences)
    assert [(c.first, c.last) for c in windows] == [(0, 1), (1, 2)]
    with pytest.raises(ValueError, match="unknown chunker"):
        ChunkerConfig("paragraphs")


def test_a_preset_chunker_recuts_the_corpus_and_retrieves_from_the_new_chunks():
    stored = InMemoryCorpusIndex(CORPUS, HashingEmbedder(), chunk_size=8, chunk_overlap=2)
    chunker = ChunkerConfig("tokens", size=12, overlap=4)
    config = PipelineConfig(
        name="token-chunks",
        description="hybrid over 12-word windows",
        retrieval=RetrievalConfig(unit="chunk", method="hybrid", chunker=chunker),
    )
    pipeline = build_pipeline(config, index=stored, clients=ModelClients(embedder=HashingEmbedder()))
    assert isinstance(pipeline.index, RechunkedIndex)
    chunks = pipeline.index.passages("chunk")
    assert len(chunks) > len(stored.passages("chunk"))  # 3 stored chunks, one per document
    assert all(len(p.text.split()) <= 12 for p in chunks)
    result = retrieve(
        "gas storage two months",
        pipeline.index,
        HashingEmbedder(),
        config.retrieval,
        retriever=pipeline.retriever,
    )
    top = result.ranked[0]
    assert top.passage.key.startswith("chunk:tokens12o4-")
    assert "two months" in top.passage.text
    assert top.passage.sentences[-1].text.startswith("Officials said storage")
    # Same passages as the in-memory index cutting that way itself.
    direct = InMemoryCorpusIndex(CORPUS, HashingEmbedder(), chunker=chunker)
    assert [p.text for p in direct.passages("chunk")] == [p.text for p in chunks]


def test_a_chunker_survives_the_json_a_run_is_stored_as():
    config = get_preset("default")
    chunked = PipelineConfig(
        name="c", description="", retrieval=RetrievalConfig(chunker=ChunkerConfig("recursive", 500, 100))
    )
    assert PipelineConfig.from_dict(chunked.to_dict()) == chunked
    assert PipelineConfig.from_dict(config.to_dict()).retrieval.chunker is None
