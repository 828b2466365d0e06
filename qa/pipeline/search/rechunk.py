"""A corpus index whose chunks are cut by another chunker than the one its corpus was stored with.

``RechunkedIndex`` wraps any ``CorpusIndex``: documents and sentences are
the wrapped index's; chunks are recut from each document's sentences by a
``ChunkerConfig``, searched with an in-memory BM25 index and, densely, with
the re-normalised mean of the stored vectors of the sentences each chunk
touches (what ``InMemoryCorpusIndex`` calls "pooled"), so no text is
encoded again. This is what lets a preset choose its chunker: the cost is
one pass over the corpus the first time a snapshot is searched, shared
by every index over the same snapshot (``_RECUT``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qa.pipeline.core.protocols import CorpusIndex
from qa.pipeline.core.types import Passage, SourceSentence, Unit
from qa.pipeline.search.bm25 import BM25Index
from qa.pipeline.search.chunking import ChunkerConfig
from qa.pipeline.search.memory_index import pool_rows
from qa.pipeline.search.retrievers import top_k


@dataclass(frozen=True)
class _Recut:
    passages: tuple[Passage, ...]
    by_key: dict[str, Passage]
    bm25: BM25Index
    vectors: np.ndarray | None  # None: the wrapped index has no sentence vectors


# Keyed by the chunker and the id of the wrapped index's document sequence (one object per snapshot),
# which the entry holds so that the id cannot be reused while it is cached.
_RECUT: OrderedDict[tuple[ChunkerConfig, int], tuple[Sequence[Passage], _Recut]] = OrderedDict()
_RECUT_LIMIT = 4


def recut_passages(documents: Sequence[Passage], chunker: ChunkerConfig) -> tuple[Passage, ...]:
    """Every document's chunks by ``chunker``; keys "chunk:<tag>-<n>" number them in corpus order."""
    chunks = []
    for document in documents:
        sentences = document.sentences
        for span in chunker.cut([s.text for s in sentences], [s.section for s in sentences]):
            chunks.append(
                Passage(
                    key=f"chunk:{chunker.tag}-{len(chunks)}",
                    unit="chunk",
                    document_id=document.document_id,
                    document_title=document.document_title,
                    text=span.text,
                    sentences=tuple(sentences[span.first : span.last + 1]),
                )
            )
    return tuple(chunks)


class RechunkedIndex:
    """``protocols.CorpusIndex``: ``inner`` with its "chunk" unit recut by ``chunker``."""

    def __init__(self, inner: CorpusIndex, chunker: ChunkerConfig) -> None:
        self.inner, self.chunker = inner, chunker

    def _recut(self) -> _Recut:
        documents = self.inner.passages("document")
        key = (self.chunker, id(documents))
        hit = _RECUT.get(key)
        if hit is not None and hit[0] is documents:
            _RECUT.move_to_end(key)
            return hit[1]
        passages = recut_passages(documents, self.chunker)
        vectors = None
        sentence_vectors = getattr(self.inner, "sentence_vectors", None)
        if sentence_vectors is not None and passages:
            ids = list(dict.fromkeys(s.id for p in passages for s in p.sentences))
            matrix = np.asarray(sentence_vectors(ids), dtype=np.float32)
            row = {sentence_id: i for i, sentence_id in enumerate(ids)}
            groups = [[row[s.id] for s in p.sentences] for p in passages]
            vectors = pool_rows(matrix, groups, matrix.shape[1])
        recut = _Recut(
            passages, {p.key: p for p in passages}, BM25Index((p.key, p.text) for p in passages), vectors
        )
        _RECUT[key] = (documents, recut)
        while len(_RECUT) > _RECUT_LIMIT:
            _RECUT.popitem(last=False)
        return recut

    def passages(self, unit: Unit) -> Sequence[Passage]:
        return self._recut().passages if unit == "chunk" else self.inner.passages(unit)

    def passage(self, key: str) -> Passage:
        recut = self._recut()
        return recut.by_key[key] if key in recut.by_key else self.inner.passage(key)

    def lexical_search(self, query: str, unit: Unit, k: int) -> list[tuple[str, float]]:
        if unit != "chunk":
            return self.inner.lexical_search(query, unit, k)
        return self._recut().bm25.search(query, k)

    def dense_search(self, query_vector: np.ndarray, unit: Unit, k: int) -> list[tuple[str, float]]:
        if unit != "chunk":
            return self.inner.dense_search(query_vector, unit, k)
        recut = self._recut()
        if recut.vectors is None:
            raise TypeError(
                f"{type(self.inner).__name__} has no sentence_vectors to pool rechunked vectors from"
            )
        scores = recut.vectors @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        return top_k(scores, [p.key for p in recut.passages], k)

    def document_sentences(self, document_id: str) -> Sequence[SourceSentence]:
        return self.inner.document_sentences(document_id)

    def sentence_vectors(self, sentence_ids: Sequence[int]) -> np.ndarray:
        return self.inner.sentence_vectors(sentence_ids)  # type: ignore[attr-defined]
