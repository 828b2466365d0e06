"""The one place that turns ORM rows and pgvector queries into pipeline values.

``DjangoCorpusIndex`` satisfies ``qa.pipeline.protocols.CorpusIndex`` for one
corpus at one version. Dense search runs in PostgreSQL over the HNSW indexes;
BM25 runs in process over a snapshot of the corpus's live sentences. Passage
keys match ``InMemoryCorpusIndex``'s scheme: "sentence:<pk>", "chunk:<pk>",
"document:<external id>".

Versions: ``Corpus.version`` goes up in the transaction that makes a document's
content live (``Document.ready_version`` records that version) and in the one
that deletes a document (documents/services.py). A snapshot is read in one
REPEATABLE READ transaction, so it holds exactly one version; retrieval records
that version on the question and later stages ask for the same one. The
corpus at an older version V, as far as it still exists, is the current
snapshot without the documents whose content went live after V: a document
deleted since is simply absent, one replaced since is absent (its old rows are
gone) rather than mixed in. A stage therefore never sees two versions and
never fails because a document changed under it.

Snapshots are built per document and reused across versions, so a document
becoming ready costs every worker one read of that document, not of the corpus.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from django.db import connection, transaction
from pgvector.django import CosineDistance

from documents.models import EMBEDDING_DIM, Chunk, Corpus, Document, Sentence
from qa.pipeline.bm25 import BM25Index
from qa.pipeline.types import Passage, SourceSentence, Unit

# HNSW search breadth; with iterative scans, a corpus filter still yields k rows.
HNSW_EF_SEARCH = 100
UNITS: tuple[Unit, ...] = ("document", "chunk", "sentence")


class CorpusGone(LookupError):
    """The corpus was deleted while a question about it was being answered."""


@dataclass(frozen=True)
class _DocumentEntry:
    """One document's live content as pipeline values, valid for as long as its ready_version holds."""

    pk: int
    ready_version: int
    external_id: str
    sentences: tuple[SourceSentence, ...]
    passages: dict[Unit, tuple[Passage, ...]]


@dataclass
class _Snapshot:
    version: int
    documents: dict[int, _DocumentEntry]  # by Document pk
    sentences: dict[str, tuple[SourceSentence, ...]] = field(init=False)  # by external id
    passages: dict[Unit, list[Passage]] = field(init=False)
    by_key: dict[str, Passage] = field(init=False)
    bm25: dict[Unit, BM25Index] = field(default_factory=dict)
    _views: dict[int, _Snapshot] = field(default_factory=dict)

    def __post_init__(self) -> None:
        entries = sorted(self.documents.values(), key=lambda e: e.external_id)
        self.sentences = {e.external_id: e.sentences for e in entries}
        self.passages = {unit: [p for e in entries for p in e.passages[unit]] for unit in UNITS}
        self.by_key = {p.key: p for unit in UNITS for p in self.passages[unit]}

    def as_of(self, version: int) -> _Snapshot:
        """This corpus at an earlier ``version``, minus what was deleted or replaced since."""
        if version >= self.version:
            return self
        with _lock:
            view = self._views.get(version)
            if view is None:
                kept = {pk: e for pk, e in self.documents.items() if e.ready_version <= version}
                view = self._views[version] = _Snapshot(version, kept)
        return view


_snapshots: dict[int, _Snapshot] = {}
_lock = threading.Lock()


@contextmanager
def _one_version():
    """Every read inside sees the same committed state.

    Outside a transaction this is a REPEATABLE READ transaction of its own.
    Inside one (the test suite, a caller's atomic block) the isolation level can
    no longer change; the reads then see the latest commits, and the build below
    tolerates a document that appears or vanishes between two of them.
    """
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def load_snapshot(corpus_id: int, version: int | None = None) -> _Snapshot:
    """The corpus's current snapshot, or the one at ``version`` (an earlier stage's)."""
    with _one_version():
        current = Corpus.objects.filter(pk=corpus_id).values_list("version", flat=True).first()
        if current is None:
            raise CorpusGone(f"corpus {corpus_id} no longer exists")
        with _lock:
            cached = _snapshots.get(corpus_id)
        if cached is None or cached.version != current:
            cached = _refresh(corpus_id, current, cached)
            with _lock:
                _snapshots[corpus_id] = cached
    return cached if version is None else cached.as_of(version)


def _refresh(corpus_id: int, version: int, previous: _Snapshot | None) -> _Snapshot:
    live = list(
        Document.objects.filter(corpus_id=corpus_id)
        .exclude(content_hash="")
        .values_list("pk", "ready_version", "external_id", "title")
    )
    known = previous.documents if previous is not None else {}
    kept = {pk: known[pk] for pk, ready, *_ in live if pk in known and known[pk].ready_version == ready}
    needed = [row for row in live if row[0] not in kept]
    return _Snapshot(version, {**kept, **_load_entries(needed)})


def _load_entries(rows: Sequence[tuple[int, int, str, str]]) -> dict[int, _DocumentEntry]:
    if not rows:
        return {}
    meta = {pk: (ready, external_id, title) for pk, ready, external_id, title in rows}
    by_document: dict[int, list[SourceSentence]] = {}
    sentence_rows = (
        Sentence.objects.filter(document_id__in=list(meta))
        .order_by("document_id", "ordinal")
        .values_list("pk", "document_id", "ordinal", "label", "text", "start", "end")
    )
    for pk, document_pk, ordinal, label, text, start, end in sentence_rows.iterator(chunk_size=5000):
        _, external_id, title = meta[document_pk]
        by_document.setdefault(document_pk, []).append(
            SourceSentence(pk, external_id, title, ordinal, label, text, start, end)
        )
    chunks: dict[int, list[tuple[int, int, int, str]]] = {}
    chunk_rows = (
        Chunk.objects.filter(document_id__in=list(meta))
        .order_by("document_id", "first_ordinal")
        .values_list("pk", "document_id", "first_ordinal", "last_ordinal", "text")
    )
    for pk, document_pk, first, last, text in chunk_rows.iterator(chunk_size=5000):
        chunks.setdefault(document_pk, []).append((pk, first, last, text))
    entries = {}
    for document_pk, own in by_document.items():
        ready, external_id, title = meta[document_pk]
        entries[document_pk] = _entry(
            document_pk, ready, external_id, title, tuple(own), chunks.get(document_pk, ())
        )
    # A document listed as live but without sentences was deleted between the reads
    # (possible only inside a caller's transaction); it is left out, not an error.
    return entries


def _entry(
    pk: int,
    ready_version: int,
    external_id: str,
    title: str,
    sentences: tuple[SourceSentence, ...],
    chunks: Iterable[tuple[int, int, int, str]],
) -> _DocumentEntry:
    whole = " ".join(s.text for s in sentences)
    passages: dict[Unit, tuple[Passage, ...]] = {
        "document": (Passage(f"document:{external_id}", "document", external_id, title, whole, sentences),),
        "chunk": tuple(
            Passage(f"chunk:{chunk_pk}", "chunk", external_id, title, text, sentences[first : last + 1])
            for chunk_pk, first, last, text in chunks
        ),
        "sentence": tuple(
            Passage(f"sentence:{s.id}", "sentence", external_id, title, s.text, (s,)) for s in sentences
        ),
    }
    return _DocumentEntry(pk, ready_version, external_id, sentences, passages)


class DjangoCorpusIndex:
    """The corpus at one version: the current one, or ``version`` recorded by an earlier stage."""

    def __init__(self, corpus: Corpus, *, version: int | None = None):
        self.corpus = corpus
        self._snapshot = load_snapshot(corpus.pk, version)
        self.version = self._snapshot.version

    def passages(self, unit: Unit) -> Sequence[Passage]:
        return self._snapshot.passages[unit]

    def passage(self, key: str) -> Passage:
        return self._snapshot.by_key[key]

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
                corpus=self.corpus, ready_version__lte=self.version, embedding__isnull=False
            ).exclude(content_hash="")
            key_of = "external_id"
            prefix = "document:"
        else:
            model = Sentence if unit == "sentence" else Chunk
            qs = model.objects.filter(
                document__corpus=self.corpus, document__ready_version__lte=self.version
            ).exclude(document__content_hash="")
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
        # Rows committed after this version's snapshot are not in it; relaxed_order
        # may return rows slightly out of order, so the order is restored too.
        hits = [hit for hit in hits if hit[0] in self._snapshot.by_key]
        hits.sort(key=lambda hit: -hit[1])
        return hits

    def document_sentences(self, document_id: str) -> Sequence[SourceSentence]:
        return self._snapshot.sentences.get(document_id, ())

    def sentence_vectors(self, sentence_ids: Sequence[int]) -> np.ndarray:
        """Stored sentence vectors in the given order (rerankers use them; no re-encoding).

        A sentence deleted since retrieval (its document replaced or removed) gets a zero
        vector: it then ranks last instead of failing the question.
        """
        ids = list(sentence_ids)
        vectors = dict(Sentence.objects.filter(pk__in=ids).values_list("pk", "embedding"))
        dim = len(next(iter(vectors.values()))) if vectors else EMBEDDING_DIM
        rows = [vectors[i] if i in vectors else np.zeros(dim, dtype=np.float32) for i in ids]
        return np.asarray(rows, dtype=np.float32).reshape(len(ids), -1)
