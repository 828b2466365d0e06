"""A corpus index held in memory: BM25 and exact dense search at every unit.

It satisfies ``protocols.CorpusIndex`` and is what pure tests and the
retrieval experiments run against. It also specifies the pgvector adapter:
the same passages (one per document, one per sentence window, one per
sentence), the same keys, and the same vectors:

- sentence vectors: the embedder's encoding of the sentence text;
- chunk vectors: by default the re-normalised mean of the chunk's sentence
  vectors ("pooled"), free once the sentences are encoded.
  ``chunk_vectors="encoded"`` encodes the chunk text instead: one more
  encoder pass over every chunk (~+50% indexing time on analyst-bench), and
  it retrieved no better: equal with the evidence reranker, worse without it
  (all-MiniLM-L6-v2 truncates a text at 256 word pieces, cutting long
  chunks), one CLAPNQ question better (bench/retrieval_quality.py);
- document vectors: the re-normalised mean of the document's sentence
  vectors (pooling chunk vectors instead, ``document_vectors="chunks"``,
  measured no better).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, Protocol

import numpy as np

from qa.pipeline.core import roles
from qa.pipeline.core.protocols import Embedder
from qa.pipeline.core.types import Passage, SourceSentence, Unit
from qa.pipeline.search.bm25 import BM25Index
from qa.pipeline.search.chunking import ChunkerConfig

UNITS: tuple[Unit, ...] = ("document", "chunk", "sentence")
ChunkVectors = Literal["pooled", "encoded"]
DocumentVectors = Literal["sentences", "chunks"]


class SentenceInput(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def label(self) -> str | None: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class DocumentInput(Protocol):
    """What ``documents.parsing`` yields (ParsedDocument) and what the index needs."""

    @property
    def external_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def sentences(self) -> Sequence[SentenceInput]: ...


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def pool_rows(vectors: np.ndarray, groups: Sequence[Sequence[int]], dim: int) -> np.ndarray:
    """Re-normalised mean of ``vectors[group]`` for each group (zeros for an empty group)."""
    pooled = np.zeros((len(groups), dim), dtype=np.float32)
    for row, members in enumerate(groups):
        if len(members):
            pooled[row] = vectors[list(members)].mean(axis=0)
    return normalise_rows(pooled)


class InMemoryCorpusIndex:
    """``protocols.CorpusIndex`` over documents held in memory, searched exactly.

    Building costs one embedder pass over every sentence (plus one over every
    chunk with ``chunk_vectors="encoded"``) and three BM25 indexes; searches
    are a BM25 posting-list sum or one matrix-vector product.
    """

    def __init__(
        self,
        documents: Iterable[DocumentInput],
        embedder: Embedder,
        *,
        chunk_size: int = 8,
        chunk_overlap: int = 2,
        chunk_vectors: ChunkVectors = "pooled",
        document_vectors: DocumentVectors = "sentences",
        chunker: ChunkerConfig | None = None,
        section_headers: bool = False,
    ) -> None:
        # ``chunker`` replaces the sentence windows of chunk_size / chunk_overlap.
        chunker = chunker or ChunkerConfig("sentences", chunk_size, chunk_overlap)
        self.chunk_size, self.chunk_overlap, self.chunk_vectors = chunk_size, chunk_overlap, chunk_vectors
        self._passages: dict[Unit, list[Passage]] = {unit: [] for unit in UNITS}
        self._document_sentences: dict[str, tuple[SourceSentence, ...]] = {}
        chunk_members: list[list[int]] = []  # sentence ids per chunk, for pooling
        document_members: list[list[int]] = []
        sentences: list[SourceSentence] = []
        for document in documents:
            own: list[SourceSentence] = []
            for ordinal, parsed in enumerate(document.sentences):
                own.append(
                    SourceSentence(
                        id=len(sentences) + ordinal,
                        document_id=document.external_id,
                        document_title=document.title,
                        ordinal=ordinal,
                        label=parsed.label or str(ordinal + 1),
                        text=parsed.text,
                        start=parsed.start,
                        end=parsed.end,
                        role=getattr(parsed, "role", "paragraph"),
                        section=getattr(parsed, "section", ""),
                        page=getattr(parsed, "page", None),
                    )
                )
            if document.external_id in self._document_sentences:
                raise ValueError(f"duplicate document id {document.external_id!r}")
            self._document_sentences[document.external_id] = tuple(own)
            sentences.extend(own)
            self._add("document", document.external_id, document.external_id, own)
            document_members.append([s.id for s in own])
            for span in chunker.cut([s.text for s in own], [s.section for s in own]):
                window = own[span.first : span.last + 1]
                self._add("chunk", str(len(chunk_members)), document.external_id, window, span.text)
                chunk_members.append([s.id for s in window])
            for sentence in own:
                self._add("sentence", str(sentence.id), document.external_id, [sentence])
        self._by_key = {p.key: p for unit in UNITS for p in self._passages[unit]}
        self._row = {p.key: row for unit in UNITS for row, p in enumerate(self._passages[unit])}
        self._bm25 = {unit: BM25Index((p.key, p.text) for p in self._passages[unit]) for unit in UNITS}

        # With ``section_headers`` each sentence is encoded led by the heading above it (roles.in_section).
        encoded_texts = [
            roles.in_section(s.text, s.section) if section_headers else s.text for s in sentences
        ]
        self._sentence_vectors = self._encode(embedder, encoded_texts)
        dim = self._sentence_vectors.shape[1]
        if chunk_vectors == "encoded":
            chunk_matrix = self._encode(embedder, [p.text for p in self._passages["chunk"]])
        else:
            chunk_matrix = pool_rows(self._sentence_vectors, chunk_members, dim)
        if document_vectors == "chunks":
            chunks_of: dict[str, list[int]] = {}
            for row, chunk in enumerate(self._passages["chunk"]):
                chunks_of.setdefault(chunk.document_id, []).append(row)
            groups = [chunks_of.get(p.document_id, []) for p in self._passages["document"]]
            document_matrix = pool_rows(chunk_matrix, groups, dim)
        else:
            document_matrix = pool_rows(self._sentence_vectors, document_members, dim)
        self._vectors: dict[Unit, np.ndarray] = {
            "sentence": self._sentence_vectors,
            "chunk": chunk_matrix,
            "document": document_matrix,
        }

    def _add(
        self,
        unit: Unit,
        suffix: str,
        document_id: str,
        sentences: list[SourceSentence],
        text: str | None = None,
    ) -> None:
        title = sentences[0].document_title if sentences else ""
        self._passages[unit].append(
            Passage(
                key=f"{unit}:{suffix}",
                unit=unit,
                document_id=document_id,
                document_title=title,
                text=" ".join(s.text for s in sentences) if text is None else text,
                sentences=tuple(sentences),
            )
        )

    @staticmethod
    def _encode(embedder: Embedder, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.asarray(embedder.encode(texts), dtype=np.float32)

    # --- protocols.CorpusIndex -------------------------------------------------

    def passages(self, unit: Unit) -> Sequence[Passage]:
        return self._passages[unit]

    def passage(self, key: str) -> Passage:
        return self._by_key[key]

    def lexical_search(self, query: str, unit: Unit, k: int) -> list[tuple[str, float]]:
        return self._bm25[unit].search(query, k)

    def dense_search(self, query_vector: np.ndarray, unit: Unit, k: int) -> list[tuple[str, float]]:
        matrix = self._vectors[unit]
        if k <= 0 or len(matrix) == 0:
            return []
        similarities = matrix @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        top = np.arange(len(similarities))
        if len(similarities) > k:
            # Keep everything tied with the k-th best, so that ties are settled
            # by corpus order below rather than by argpartition's whim.
            cut = np.partition(similarities, len(similarities) - k)[len(similarities) - k]
            top = top[similarities >= cut]
        top = top[np.lexsort((top, -similarities[top]))][:k]
        passages = self._passages[unit]
        return [(passages[i].key, float(similarities[i])) for i in top]

    def document_sentences(self, document_id: str) -> Sequence[SourceSentence]:
        return self._document_sentences[document_id]

    # --- beyond the protocol: what a reranker may use if the index offers it ---

    def sentence_vectors(self, sentence_ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of the given sentences, in the given order."""
        return self._sentence_vectors[list(sentence_ids)]

    def passage_vector(self, key: str) -> np.ndarray:
        return self._vectors[self._by_key[key].unit][self._row[key]]
