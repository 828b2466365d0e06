"""First-stage retrieval: BM25, dense or hybrid search at one unit, then optional reranking.

``retrieve`` returns every fused candidate ranked, so callers can both take
the top passages for answering and derive a document ranking for evaluation
(``RetrievalResult.documents``), which needs more distinct documents than the
top few chunks usually hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from qa.pipeline.fusion import fuse_minmax, fuse_rrf
from qa.pipeline.protocols import CorpusIndex, Embedder
from qa.pipeline.types import ScoredPassage, Unit

if TYPE_CHECKING:
    from qa.pipeline.rerank import Reranker

Method = Literal["bm25", "dense", "hybrid"]
Fusion = Literal["minmax", "rrf"]


@dataclass(frozen=True)
class RetrievalConfig:
    """How to retrieve. The defaults, with ``rerank.EvidenceReranker``, are the configuration
    bench/retrieval_quality.py chose: 8-sentence chunks, BM25 + dense fused by min-max.

    ``alpha`` is the weight of the dense retriever in min-max fusion
    (``fused = alpha * dense' + (1 - alpha) * bm25'``); ``rrf_k`` is the
    RRF constant. ``candidates`` is how many passages each retriever returns
    before fusion; ``rerank_depth`` how many fused candidates the reranker
    sees (a cross-encoder is slow); ``top_k`` how many of the best passages
    (``RetrievalResult.passages``) answering may read, across its attempts.
    """

    unit: Unit = "chunk"
    method: Method = "hybrid"
    fusion: Fusion = "minmax"
    alpha: float = 0.5
    rrf_k: int = 60
    candidates: int = 50
    rerank_depth: int = 50
    top_k: int = 8

    def __post_init__(self) -> None:
        if self.unit not in ("document", "chunk", "sentence"):
            raise ValueError(f"unknown retrieval unit {self.unit!r}")
        if self.method not in ("bm25", "dense", "hybrid"):
            raise ValueError(f"unknown retrieval method {self.method!r}")
        if self.fusion not in ("minmax", "rrf"):
            raise ValueError(f"unknown fusion {self.fusion!r}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {self.alpha}")
        if min(self.candidates, self.top_k, self.rrf_k) < 1 or self.rerank_depth < 0:
            raise ValueError("candidates, top_k and rrf_k must be positive")


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
) -> RetrievalResult:
    """Rank passages of ``config.unit`` for ``question``.

    A question with no words returns no passages rather than an arbitrary
    ranking. ``scores`` on each passage keep "bm25" and "dense" where that
    retriever returned it, "fused" for hybrid, and whatever the reranker adds.
    """
    if not question.strip():
        return RetrievalResult(question, config, ())
    lexical: list[tuple[str, float]] = []
    dense: list[tuple[str, float]] = []
    query_vector = None
    if config.method in ("bm25", "hybrid"):
        lexical = index.lexical_search(question, config.unit, config.candidates)
    if config.method in ("dense", "hybrid"):
        query_vector = np.asarray(embedder.encode([question]), dtype=np.float32)[0]
        dense = index.dense_search(query_vector, config.unit, config.candidates)

    if config.method == "bm25":
        fused = dict(lexical)
    elif config.method == "dense":
        fused = dict(dense)
    elif config.fusion == "minmax":
        fused = fuse_minmax(lexical, dense, config.alpha)
    else:
        fused = fuse_rrf([lexical, dense], k=config.rrf_k)

    bm25_scores, dense_scores = dict(lexical), dict(dense)
    hits = []
    for key, score in fused.items():
        scores = {}
        if key in bm25_scores:
            scores["bm25"] = bm25_scores[key]
        if key in dense_scores:
            scores["dense"] = dense_scores[key]
        if config.method == "hybrid":
            scores["fused"] = score
        hits.append(ScoredPassage(index.passage(key), score, scores))
    # Stable sort: equal scores keep BM25 order, then dense order (fused's key order).
    hits.sort(key=lambda hit: -hit.score)

    if reranker is not None and config.rerank_depth > 0:
        head, tail = hits[: config.rerank_depth], hits[config.rerank_depth :]
        hits = list(reranker.rerank(question, head)) + tail
    return RetrievalResult(question, config, tuple(hits), query_vector)
