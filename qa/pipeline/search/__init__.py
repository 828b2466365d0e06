"""Retrieval: from a question to ranked passages.

Cutting documents into chunks (``chunking``, ``rechunk``), the in-memory corpus index
(``memory_index``), BM25 (``bm25``), the embedders (``embedding``, ``static_embedding``), the
named first-stage retrievers and their fusion (``retrievers``, ``fusion``), query expansion
(``expansion``), reranking (``rerank``, ``pairwise``) and the retrieval stage (``retrieval``).

May import: qa.pipeline.core (and the standard library and installed packages; never Django,
Celery or app code). Must not import: qa.pipeline.flow, qa.pipeline.config,
qa.pipeline.dialogue, qa.pipeline.checks, qa.pipeline.drafting, qa.pipeline.reading.
lint-imports checks it (pyproject.toml, the qa.pipeline sub-packages contract).
"""
