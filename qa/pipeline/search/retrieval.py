"""First-stage retrieval: one named retriever (``qa.pipeline.search.retrievers``) or a hybrid of two at
one unit, then optional reranking.

``retrieve`` returns every fused candidate ranked, so callers can both take
the top passages for answering and derive a document ranking for evaluation
(``RetrievalResult.documents``), which needs more distinct documents than the
top few chunks usually hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from qa.pipeline.core.protocols import CorpusIndex, Embedder, Retriever
from qa.pipeline.core.types import ScoredPassage, Unit
from qa.pipeline.search.chunking import ChunkerConfig
from qa.pipeline.search.retrievers import (
    BASE_RETRIEVERS,
    RETRIEVER_NAMES,
    FusedRetriever,
    IndexDenseRetriever,
    RetrieverModels,
    RetrieverSpec,
    build_retriever,
)

if TYPE_CHECKING:
    from qa.pipeline.search.rerank import Reranker

Method = Literal["bm25", "dense", "static", "instruction-dense", "multi-vector", "hybrid"]
Fusion = Literal["minmax", "rrf"]


@dataclass(frozen=True)
class RetrievalConfig:
    """How to retrieve. The defaults, with ``rerank.EvidenceReranker``, are the configuration
    bench/retrieval_quality.py chose: 8-sentence chunks, BM25 + dense fused by min-max.

    ``method`` names the retriever (``retrievers.RETRIEVER_NAMES``); for
    ``hybrid``, ``hybrid_of`` names the two it fuses. ``alpha`` is the weight
    of the second of them in min-max fusion (for the default bm25 + dense:
    ``fused = alpha * dense' + (1 - alpha) * bm25'``); ``rrf_k`` is the
    RRF constant. ``candidates`` is how many passages each retriever returns
    before fusion; ``rerank_depth`` how many fused candidates the reranker
    sees (a cross-encoder is slow); ``top_k`` how many of the best passages
    (``RetrievalResult.passages``) answering may read, across its attempts.
    """

    unit: Unit = "chunk"
    method: Method = "hybrid"
    hybrid_of: tuple[str, str] = ("bm25", "dense")
    fusion: Fusion = "minmax"
    alpha: float = 0.5
    rrf_k: int = 60
    candidates: int = 50
    rerank_depth: int = 50
    top_k: int = 8
    # None: the chunks the corpus was stored with; a ChunkerConfig recuts them (rechunk.RechunkedIndex).
    chunker: ChunkerConfig | None = None

    def __post_init__(self) -> None:
        if self.unit not in ("document", "chunk", "sentence"):
            raise ValueError(f"unknown retrieval unit {self.unit!r}")
        # Stored as JSON the pair comes back as a list and the chunker as a dict.
        object.__setattr__(self, "hybrid_of", tuple(self.hybrid_of))
        if isinstance(self.chunker, dict):
            object.__setattr__(self, "chunker", ChunkerConfig(**self.chunker))
        if self.method not in RETRIEVER_NAMES:
            raise ValueError(
                f"unknown retrieval method {self.method!r}; choose one of {', '.join(RETRIEVER_NAMES)}"
            )
        if (
            len(self.hybrid_of) != 2
            or len(set(self.hybrid_of)) != 2
            or not set(self.hybrid_of) <= set(BASE_RETRIEVERS)
        ):
            raise ValueError(f"hybrid_of must name two different ones of {', '.join(BASE_RETRIEVERS)}")
        if self.fusion not in ("minmax", "rrf"):
            raise ValueError(f"unknown fusion {self.fusion!r}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {self.alpha}")
        if min(self.candidates, self.top_k, self.rrf_k) < 1 or self.rerank_depth < 0:
            raise ValueError("candidates, top_k and rrf_k must be positive")

    @property
    def retriever_spec(self) -> RetrieverSpec:
        return RetrieverSpec(
            self.method, self.hybrid_of, self.fusion, self.alpha, self.rrf_k, self.candidates
        )


@dataclass(frozen=True)
class RetrievalResult:
    question: str
    config: RetrievalConfig
    ranked: tuple[ScoredPassage, ...]  # every candidate, best first
    query_vector: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def passages(self) -> tuple[ScoredPassage, ...]:
        """The ``config.top_k`` best passages: what answering reads."""
        return self.ranked[: self.config.top_k]

    def document_hits(self) -> list[ScoredPassage]:
        """The best passage of each document, documents ordered by that passage's rank."""
        seen: dict[str, ScoredPassage] = {}
        for hit in self.ranked:
            seen.setdefault(hit.passage.document_id, hit)
        return list(seen.values())

    def documents(self) -> list[str]:
        """Document ids best first; a document ranks where its best passage ranks."""
        return [hit.passage.document_id for hit in self.document_hits()]


def retrieve(
    question: str,
    index: CorpusIndex,
    embedder: Embedder,
    config: RetrievalConfig = RetrievalConfig(),
    reranker: Reranker | None = None,
    *,
    retriever: Retriever | None = None,
) -> RetrievalResult:
    """Rank passages of ``config.unit`` for ``question``.

    ``retriever`` is the one ``config`` names, built once by the caller
    (``retrievers.build_retriever``); without it one is built here, models
    loaded on first use. A question with no words returns no passages rather
    than an arbitrary ranking. ``scores`` on each passage keep each retriever's
    own score under its name ("bm25", "dense", "static" ...) where it returned
    the passage, "fused" for a hybrid, and whatever the reranker adds.
    """
    if not question.strip():
        return RetrievalResult(question, config, ())
    if retriever is None:
        retriever = build_retriever(config.retriever_spec, index, RetrieverModels(embedder))
    query_vector = None
    if isinstance(retriever, FusedRetriever):
        # Every candidate either side returned: the document ranking needs more than the top few.
        result = retriever.search_parts(question, config.unit, None)
        ranking, parts = result.fused, result.parts
    else:
        if isinstance(retriever, IndexDenseRetriever):
            query_vector = retriever.query_vector(question)
            ranking = index.dense_search(query_vector, config.unit, config.candidates)
        else:
            ranking = retriever.search(question, config.unit, config.candidates)
        parts = {retriever.name: ranking}

    part_scores = {name: dict(part) for name, part in parts.items()}
    hits = []
    for key, score in ranking:
        scores = {name: own[key] for name, own in part_scores.items() if key in own}
        if isinstance(retriever, FusedRetriever):
            scores["fused"] = score
        hits.append(ScoredPassage(index.passage(key), score, scores))

    if reranker is not None and config.rerank_depth > 0:
        head, tail = hits[: config.rerank_depth], hits[config.rerank_depth :]
        hits = list(reranker.rerank(question, head)) + tail
    return RetrievalResult(question, config, tuple(hits), query_vector)
