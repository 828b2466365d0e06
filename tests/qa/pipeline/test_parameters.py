"""Preset parameters: each checked on its own, then together, on the built-in presets."""

from __future__ import annotations

import pytest

from qa.pipeline.config.parameters import (
    BY_NAME,
    InvalidParameters,
    apply_parameters,
    check_parameters,
    parameter_values,
)
from qa.pipeline.config.presets import PipelineConfig, get_preset
from qa.pipeline.search.chunking import ChunkerConfig
from qa.pipeline.search.retrieval import RetrievalConfig
from qa.pipeline.search.retrievers import RETRIEVER_NAMES


def test_parameters_set_the_named_fields_and_are_recorded_with_the_base():
    config = apply_parameters(
        get_preset("default"), {"retriever": "bm25", "top_k": 4, "verifier": "llm", "reranker": "none"}
    )
    assert config.retrieval.method == "bm25" and config.retrieval.top_k == 4
    assert config.answer.verifier == "llm" and config.reranker == "none"
    assert config.base == "default" and config.parameters == {
        "retriever": "bm25",
        "top_k": 4,
        "verifier": "llm",
        "reranker": "none",
    }
    # Untouched values stay the preset's.
    assert config.retrieval.unit == "chunk" and config.answer.generator == "extractive"
    # ... and a stored run reads its configuration back whole.
    assert PipelineConfig.from_dict(config.to_dict()) == config


def test_a_team_preset_keeps_its_own_name_and_its_parameters_on_top_of_another_set():
    team = apply_parameters(get_preset("basic"), {"top_k": 2}, name="ours", description="two chunks")
    asked = apply_parameters(team, {"retriever": "bm25"})
    assert (asked.name, asked.base) == ("ours", "basic")
    assert asked.parameters == {"top_k": 2, "retriever": "bm25"}


def test_the_choices_are_the_pipelines_own():
    assert BY_NAME["retriever"].choices == RETRIEVER_NAMES and "multi-vector" in RETRIEVER_NAMES
    assert {"none", "evidence", "cross-encoder"} <= set(BY_NAME["reranker"].choices)
    assert parameter_values(get_preset("default"))["alpha"] == 0.5
    assert "top_k" not in parameter_values(get_preset("vanilla"))  # it does not retrieve


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"topk": 3}, "Unknown parameter topk"),
        ({"retriever": "grep"}, "retriever: 'grep' is not one of bm25, dense, static"),
        ({"hybrid_of": ["bm25", "bm25"]}, "hybrid_of: .* is not two different ones of"),
        ({"alpha": 1.5}, "alpha: 1.5 is outside 0..1"),
        ({"top_k": 2.5}, "top_k: 2.5 is not a whole number"),
        ({"top_k": True}, "top_k: True is not a number"),
        ({"candidates": 201}, "candidates: 201 is outside 1..200"),
        (
            {"rules_off": ["no_such_rule"]},
            "rules_off: .* is not a list of different ones of .*answer_in_part",
        ),
        ({"rules_off": ["unanswerable", "unanswerable"]}, "rules_off: .* is not a list of different ones"),
        ({"rules_off": "unanswerable"}, "rules_off: 'unanswerable' is not a list"),
    ],
)
def test_each_value_is_checked_on_its_own(values, message):
    with pytest.raises(InvalidParameters, match=message):
        check_parameters(values)


@pytest.mark.parametrize(
    ("preset", "values", "message"),
    [
        ("default", {"retriever": "dense", "alpha": 0.2}, "alpha weighs .* retriever dense"),
        ("default", {"fusion": "rrf", "alpha": 0.2}, "alpha .* fusion rrf"),
        ("default", {"rrf_k": 10}, "rrf_k applies to reciprocal rank fusion"),
        ("basic", {"hybrid_of": ["bm25", "static"]}, "hybrid_of names a hybrid's two retrievers"),
        ("basic", {"fusion": "rrf"}, "fusion combines the retrievers of a hybrid; the retriever is dense"),
        ("bm25", {"candidates": 5, "top_k": 9}, "top_k 9 is more than the 5 candidates"),
        ("default", {"reranker": "evidence", "rerank_depth": 0}, "rerank_depth: 0 leaves the reranker"),
        ("llm-only", {"top_k": 3}, "does not retrieve"),
        ("vanilla", {"reranker": "evidence"}, "does not retrieve"),
    ],
)
def test_values_that_contradict_each_other_are_refused_saying_why(preset, values, message):
    with pytest.raises(InvalidParameters, match=message):
        apply_parameters(get_preset(preset), values)


def test_reply_rules_are_switched_off_by_name_and_recorded_in_the_table_order():
    config = apply_parameters(get_preset("default"), {"rules_off": ["answer_in_part", "unanswerable"]})
    assert config.answer.rules_off == ("unanswerable", "answer_in_part")  # the table's order
    assert config.parameters["rules_off"] == ("unanswerable", "answer_in_part")
    assert PipelineConfig.from_dict(config.to_dict()).answer.rules_off == config.answer.rules_off
    assert parameter_values(get_preset("default"))["rules_off"] == ()
    # A rule deleted since a team preset was saved with it off: the preset still resolves.
    retired = apply_parameters(get_preset("default"), {"rules_off": ["doubted_missing", "answer_check"]})
    assert retired.answer.rules_off == ("answer_check",)


def test_a_hybrid_of_any_two_retrievers():
    config = apply_parameters(get_preset("default"), {"hybrid_of": ["static", "bm25"], "fusion": "rrf"})
    assert config.retrieval.hybrid_of == ("static", "bm25") and config.retrieval.fusion == "rrf"
    assert PipelineConfig.from_dict(config.to_dict()).retrieval.hybrid_of == ("static", "bm25")


def test_raising_top_k_raises_the_candidates_and_a_new_reranker_reorders_them_all():
    basic = get_preset("basic")  # dense, 3 candidates, no reranking
    assert basic.retrieval == RetrievalConfig(
        unit="chunk", method="dense", candidates=3, rerank_depth=0, top_k=3
    )
    config = apply_parameters(basic, {"top_k": 6, "reranker": "evidence"})
    assert (config.retrieval.candidates, config.retrieval.rerank_depth, config.retrieval.top_k) == (6, 6, 6)
    assert config.parameters == {"top_k": 6, "reranker": "evidence"}


def test_a_preset_can_recut_the_corpus_with_another_chunker():
    config = apply_parameters(get_preset("default"), {"chunker": "tokens"})
    assert config.retrieval.chunker == ChunkerConfig("tokens", 150, 50)  # the kind's own defaults
    sized = apply_parameters(get_preset("default"), {"chunker": "recursive", "chunk_size": 400})
    assert sized.retrieval.chunker == ChunkerConfig("recursive", 400, 200)
    small = apply_parameters(get_preset("default"), {"chunk_size": 4, "chunk_overlap": 1})
    assert small.retrieval.chunker == ChunkerConfig("sentences", 4, 1)
    assert parameter_values(small)["chunk_size"] == 4 and "chunker" not in parameter_values(
        get_preset("default")
    )
    # A stored run reads its chunker back.
    assert PipelineConfig.from_dict(sized.to_dict()).retrieval.chunker == sized.retrieval.chunker


@pytest.mark.parametrize(
    ("preset", "values", "message"),
    [
        (
            "default",
            {"chunker": "paragraphs"},
            "chunker: 'paragraphs' is not one of sentences, recursive, tokens",
        ),
        (
            "default",
            {"chunker": "tokens", "chunk_size": 50, "chunk_overlap": 50},
            "chunk_overlap 50 must be below",
        ),
        ("default", {"chunk_size": 0}, "chunk_size: 0 is outside 1..5000"),
        ("default", {"unit": "sentence", "chunker": "tokens"}, "need unit chunk .*unit sentence"),
        ("vanilla", {"chunker": "tokens"}, "does not retrieve"),
    ],
)
def test_chunker_values_that_do_not_fit_are_refused_saying_why(preset, values, message):
    with pytest.raises(InvalidParameters, match=message):
        apply_parameters(get_preset(preset), values)
