"""The named retrievers and a preset's chunker over the PostgreSQL corpus index, as workers run them."""

from __future__ import annotations

import pytest

from qa.adapters import DjangoCorpusIndex
from qa.pipeline.config.presets import PipelineConfig
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.search.chunking import ChunkerConfig
from qa.pipeline.search.retrieval import RetrievalConfig, retrieve

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "options",
    [
        {"method": "static"},
        {"method": "instruction-dense"},
        {"method": "multi-vector"},
        {"method": "hybrid", "hybrid_of": ("bm25", "instruction-dense"), "fusion": "rrf"},
        {"method": "hybrid", "chunker": ChunkerConfig("tokens", 20, 5)},
    ],
)
def test_each_retriever_finds_the_port_report_in_the_stored_corpus(westmere, embedder, options):
    config = PipelineConfig(name="lab", description="", retrieval=RetrievalConfig(unit="chunk", **options))
    pipeline = build_pipeline(
        config, index=DjangoCorpusIndex(westmere), clients=ModelClients(embedder=embedder)
    )
    question = "How many people worked for the harbour authority at year end?"
    result = retrieve(question, pipeline.index, embedder, config.retrieval, retriever=pipeline.retriever)
    assert result.documents()[0] == "port-report"
    assert "1,850 staff" in " ".join(hit.passage.text for hit in result.ranked[:2])
