"""The one place that turns ORM rows and pgvector queries into pipeline values.

``DjangoCorpusIndex`` satisfies ``qa.pipeline.protocols.CorpusIndex`` for one
corpus: dense search runs in PostgreSQL over the HNSW indexes; BM25 runs in
process over a snapshot of the corpus's ready sentences, built once per
worker process and rebuilt when the corpus changes (a document becomes ready,
is replaced or deleted). Passage keys match ``InMemoryCorpusIndex``'s scheme:
"sentence:<pk>", "chunk:<pk>", "document:<external id>".
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from django.db.models import Count, Max
from pgvector.django import CosineDistance

from documents.models import Chunk, Corpus, Document, Sentence
from qa.pipeline.bm25 import BM25Index
from qa.pipeline.types import Passage, SourceSentence, Unit

# HNSW search breadth; with iterative scans, a corpus filter still yields k rows.
HNSW_EF_SEARCH = 100


@dataclass
class _Snapshot:
    version: tuple
    sentences: dict[str, tuple[SourceSentence, ...]]  # by document external id
    passages: dict[Unit, list[Passage]]
    by_key: dict[str, Passage]
    bm25: dict[Unit, BM25Index]


_snapshots: dict[int, _Snapshot] = {}
_lock = threading.Lock()


def corpus_version(corpus: Corpus) -> tuple:
    stats = Document.objects.filter(corpus=corpus, status=Document.Status.READY).aggregate(
        n=Count("id"), changed=Max("updated_at")
    )
    return (stats["n"], stats["changed"])


def load_snapshot(corpus: Corpus) -> _Snapshot:
    version = corpus_version(corpus)
    with _lock:
        cached = _snapshots.get(corpus.pk)
        if cached is not None and cached.version == version:
            return cached
    snapshot = _build_snapshot(corpus, version)
    with _lock:
        _snapshots[corpus.pk] = snapshot
    return snapshot


def _build_snapshot(corpus: Corpus, version: tuple) -> _Snapshot:
    ready = Document.objects.filter(corpus=corpus, status=Document.Status.READY)
    titles = dict(ready.values_list("pk", "title"))
    external = dict(ready.values_list("pk", "external_id"))
    by_document: dict[str, list[SourceSentence]] = {}
    rows = (
        Sentence.objects.filter(document__in=ready)
        .order_by("document_id", "ordinal")
        .values_list("pk", "document_id", "ordinal", "label", "text", "start", "end")
    )
    for pk, document_pk, ordinal, label, text, start, end in rows.iterator(chunk_size=5000):
        document_id = external[document_pk]
        by_document.setdefault(document_id, []).append(
            SourceSentence(pk, document_id, titles[document_pk], ordinal, label, text, start, end)
        )
    sentences = {doc: tuple(items) for doc, items in by_document.items()}
    passages: dict[Unit, list[Passage]] = {"document": [], "chunk": [], "sentence": []}
    for document_id, own in sentences.items():
        title = own[0].document_title
        passages["document"].append(
            Passage(
                f"document:{document_id}", "document", document_id, title, " ".join(s.text for s in own), own
            )
        )
        passages["sentence"].extend(
            Passage(f"sentence:{s.id}", "sentence", document_id, title, s.text, (s,)) for s in own
        )
    chunk_rows = Chunk.objects.filter(document__in=ready).values_list(
        "pk", "document_id", "first_ordinal", "last_ordinal", "text"
    )
    for pk, document_pk, first, last, text in chunk_rows.iterator(chunk_size=5000):
        document_id = external[document_pk]
        own = sentences.get(document_id, ())
        passages["chunk"].append(
            Passage(f"chunk:{pk}", "chunk", document_id, titles[document_pk], text, own[first : last + 1])
        )
    by_key = {p.key: p for unit_passages in passages.values() for p in unit_passages}
    return _Snapshot(version, sentences, passages, by_key, {})


class DjangoCorpusIndex:
    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        self._snapshot = load_snapshot(corpus)

    def passages(self, unit: Unit) -> Sequence[Passage]:
        return self._snapshot.passages[unit]

    def passage(self, key: str) -> Passage:
        return self._snapshot.by_key[key]

    def has_passage(self, key: str) -> bool:
        return key in self._snapshot.by_key

    def lexical_search(self, query: str, unit: Unit, k: int) -> list[tuple[str, float]]:
        snapshot = self._snapshot
        index = snapshot.bm25.get(unit)
        if index is None:
            # Building is idempotent, so two threads racing here only waste work.
            index = BM25Index((p.key, p.text) for p in snapshot.passages[unit])
            snapshot.bm25[unit] = index
        return index.search(query, k)

    def dense_search(self, query_vector: np.ndarray, unit: Unit, k: int) -> list[tuple[str, float]]:
        vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if unit == "document":
            qs = Document.objects.filter(
                corpus=self.corpus, status=Document.Status.READY, embedding__isnull=False
            )
            key_of = "external_id"
            prefix = "document:"
        else:
            model = Sentence if unit == "sentence" else Chunk
            qs = model.objects.filter(document__corpus=self.corpus, document__status=Document.Status.READY)
            key_of = "pk"
            prefix = f"{unit}:"
        qs = qs.annotate(distance=CosineDistance("embedding", vector)).order_by("distance")
        with transaction.atomic():
            with connection.cursor() as cursor:
                # Without iterative scans a corpus filter applied after the HNSW
                # scan can return fewer than k rows when corpora share the index.
                cursor.execute("SET LOCAL hnsw.iterative_scan = 'relaxed_order'")
                cursor.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, k)}")
            rows = list(qs.values_list(key_of, "distance")[:k])
        hits = [(f"{prefix}{key}", 1.0 - float(distance)) for key, distance in rows]
        # relaxed_order may return rows slightly out of order; restore it.
        hits = [hit for hit in hits if hit[0] in self._snapshot.by_key]
        hits.sort(key=lambda hit: -hit[1])
        return hits

    def document_sentences(self, document_id: str) -> Sequence[SourceSentence]:
        return self._snapshot.sentences.get(document_id, ())

    def sentence_vectors(self, sentence_ids: Sequence[int]) -> np.ndarray:
        """Stored sentence vectors in the given order (rerankers use them; no re-encoding)."""
        ids = list(sentence_ids)
        vectors = dict(Sentence.objects.filter(pk__in=ids).values_list("pk", "embedding"))
        return np.asarray([vectors[i] for i in ids], dtype=np.float32).reshape(len(ids), -1)
