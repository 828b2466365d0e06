"""A preset over a few documents held in memory, with the real embedding model: what the probe and
answer-shape tests ask their questions of."""

from __future__ import annotations

from collections.abc import Iterable

from qa.pipeline.config.presets import PipelineConfig, get_preset
from qa.pipeline.flow.factory import ModelClients, Pipeline, build_pipeline
from qa.pipeline.search.embedding import SentenceTransformerEmbedder
from qa.pipeline.search.memory_index import DocumentInput, InMemoryCorpusIndex


def in_memory_pipeline(documents: Iterable[DocumentInput], config: PipelineConfig | None = None) -> Pipeline:
    """``config`` (the ``default`` preset when None) answering from ``documents``."""
    embedder = SentenceTransformerEmbedder()
    index = InMemoryCorpusIndex(documents, embedder)
    return build_pipeline(
        config or get_preset("default"), index=index, clients=ModelClients(embedder=embedder)
    )
