"""The one place that turns ORM rows and pgvector queries into pipeline values.

``DjangoCorpusIndex`` satisfies ``qa.pipeline.core.protocols.CorpusIndex`` for one
corpus at one version, and keeps nothing of the corpus in the worker: BM25
runs in PostgreSQL over the postings (documents/lexical.py), dense search over
the HNSW indexes, and only the passages a search returned are read, then
kept for the life of the index object (one stage of one question). A
worker's memory therefore does not grow with the corpus, and a document that
turns ready is searchable by the next query without any rebuild. Passage
keys match ``InMemoryCorpusIndex``'s scheme: "sentence:<pk>", "chunk:<pk>",
"document:<external id>".

Versions: ``Corpus.version`` goes up in the transaction that makes a
document's content live (``Document.ready_version`` records that version)
and in the one that deletes a document (documents/services/uploads.py). The index
reads the corpus at the version it was given (an earlier stage's, recorded on
the question) or at the current one, and every read filters on
``ready_version <= version``: the corpus at version V, as far as it still
exists, is the current one without the documents whose content went live
after V. A document deleted since is absent, one replaced since is absent
too (its old rows are gone) rather than mixed in. Each read is one snapshot
(REPEATABLE READ where the caller is not already in a transaction), so a
passage is never half old and half new, and a stage never fails because a
document changed under it: a search drops what it can no longer read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from pgvector.django import CosineDistance

from documents import lexical, vectors
from documents.models import (
    EMBEDDING_DIM,
    Chunk,
    Corpus,
    Document,
    EmbeddingSpace,
    LexicalUnit,
    Sentence,
    StoredVector,
)
from qa.pipeline.core.types import Passage, SourceSentence, Unit
from qa.pipeline.reading.dates import DocumentScope

UNITS: tuple[Unit, ...] = ("document", "chunk", "sentence")

_SENTENCE_COLUMNS = (
    's.id, d.external_id, d.title, s.ordinal, s.label, s.text, s.start, s."end", s.role, s.section, s.page'
)
_DOCUMENT_COLUMNS = "d.published, d.source"
# A scope admitting at most this share of a corpus's documents is searched densely by an exact
# scan of its own rows: an HNSW scan filtered that hard would visit most of the graph to find k
# rows in scope (and may stop short of k). A wider scope keeps the index, with iterative scans.
EXACT_SCAN_SHARE = 0.25


# The in-memory path, and the only one. Retrievers that encode or recut the corpus themselves
# (qa/pipeline/search/retrievers.py: static, instruction-dense, multi-vector; rechunk.py) need every
# passage of a unit, and cache their work by the identity of that sequence; so a whole unit is
# read once per (corpus, version, unit) in a process and the same tuple handed out until the
# corpus changes. Presets searching with bm25, dense or hybrid over the stored units never
# call passages(): their memory stays flat as the corpus grows. These entries grow with it.
WHOLE_UNITS_KEPT = 6
_WHOLE_UNITS: OrderedDict[tuple[int, int, str], tuple[Passage, ...]] = OrderedDict()
_whole_lock = threading.Lock()


class CorpusGone(LookupError):
    """The corpus was deleted while a question about it was being answered."""


@contextmanager
def _one_version():
    """Every read inside sees the same committed state.

    Outside a transaction this is a REPEATABLE READ transaction of its own.
    Inside one (the test suite, a caller's atomic block) the isolation level can
    no longer change; the reads then see the latest commits, which the version
    filter and the dropping of unreadable hits tolerate.
    """
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def corpus_version(corpus_id: int) -> int:
    version = Corpus.objects.filter(pk=corpus_id).values_list("version", flat=True).first()
    if version is None:
        raise CorpusGone(f"corpus {corpus_id} no longer exists")
    return version


class DjangoCorpusIndex:
    """The corpus at one version: the current one, or ``version`` recorded by an earlier stage."""

    def __init__(self, corpus: Corpus, *, version: int | None = None, scope: DocumentScope | None = None):
        self.corpus = corpus
        self.version = corpus_version(corpus.pk) if version is None else version
        # The embedding model whose vectors this version searches (None: the site's, in the columns).
        self.space: EmbeddingSpace | None = vectors.space_at(corpus.pk, self.version)
        # Searches and whole-unit reads see only the documents in scope; a passage asked for by key
        # (a ranking read back by a later stage) is read whatever its document.
        self.scope = scope if scope else None
        self._passages: dict[str, Passage] = {}  # what this index has read, by key

    # --- protocols.CorpusIndex -------------------------------------------------

    def passages(self, unit: Unit) -> Sequence[Passage]:
        """Every passage of the unit: the in-memory path, see ``whole_unit``."""
        cache_key = (self.corpus.pk, self.version, unit, self.scope)
        with _whole_lock:
            cached = _WHOLE_UNITS.get(cache_key)
            if cached is not None:
                _WHOLE_UNITS.move_to_end(cache_key)
                return cached
        with _one_version():
            keys = self._all_keys(unit)
            self._read(keys)
        whole = tuple(self._passages[key] for key in keys if key in self._passages)
        with _whole_lock:
            _WHOLE_UNITS[cache_key] = whole
            while len(_WHOLE_UNITS) > WHOLE_UNITS_KEPT:
                _WHOLE_UNITS.popitem(last=False)
        return whole

    def prefetch(self, keys: Sequence[str]) -> None:
        """``protocols.PrefetchingIndex``: one read for a stage's whole ranking."""
        with _one_version():
            self._read(keys)

    def passage(self, key: str) -> Passage:
        if key not in self._passages:
            with _one_version():
                self._read([key])
        return self._passages[key]

    def lexical_search(self, query: str, unit: Unit, k: int) -> list[tuple[str, float]]:
        with _one_version():
            hits = lexical.bm25_search(
                corpus_id=self.corpus.pk,
                unit=unit,
                query=query,
                version=self.version,
                k=k,
                scope=self.scope,
            )
            if unit == "document":
                external = dict(
                    Document.objects.filter(pk__in=[item for item, _ in hits]).values_list(
                        "pk", "external_id"
                    )
                )
                ranked = [(f"document:{external[item]}", score) for item, score in hits if item in external]
            else:
                ranked = [(f"{unit}:{item}", score) for item, score in hits]
            return self._readable(ranked)

    def dense_search(self, query_vector: np.ndarray, unit: Unit, k: int) -> list[tuple[str, float]]:
        vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if self.space is not None:
            return self._stored_dense_search(vector, unit, k)
        if unit == "document":
            qs = Document.objects.filter(
                corpus=self.corpus, ready_version__lte=self.version, embedding__isnull=False
            ).exclude(content_hash="")
            key_of = "external_id"
        else:
            model = Sentence if unit == "sentence" else Chunk
            qs = model.objects.filter(
                document__corpus=self.corpus, document__ready_version__lte=self.version
            ).exclude(document__content_hash="")
            key_of = "pk"
        distance = CosineDistance("embedding", vector)
        exact = False
        if self.scope is not None:
            qs = qs.filter(**self._scope_filter("" if unit == "document" else "document__"))
            exact = self._scope_is_narrow()
        # "+ 0" is no longer the indexed expression, so PostgreSQL scans the filtered rows exactly.
        ranked = qs.annotate(distance=distance + 0.0 if exact else distance).order_by("distance")
        with transaction.atomic():
            _hnsw_settings(k)
            rows = list(ranked.values_list(key_of, "distance")[:k])
        if len(rows) < k and not exact:
            # The HNSW index is shared by every corpus: an iterative scan that gives up (pgvector's
            # max_scan_tuples) before reaching this corpus's or scope's rows returns fewer than k,
            # even none, on a large database. The exact scan of the filtered rows cannot.
            rows = list(
                qs.annotate(distance=distance + 0.0).order_by("distance").values_list(key_of, "distance")[:k]
            )
        return self._dense_hits(unit, rows)

    def _stored_dense_search(self, vector: np.ndarray, unit: Unit, k: int) -> list[tuple[str, float]]:
        """Dense search over StoredVector: the expression and predicate of the space's dimension's
        partial HNSW index (documents 0007), so PostgreSQL can use it."""
        dim = int(self.space.dimension)
        if vector.shape != (dim,):
            raise ValueError(f"the query vector has {vector.shape[0]} dimensions, the corpus's model {dim}")
        key = "d.external_id" if unit == "document" else "v.item"
        distance = f"v.embedding::vector({dim}) <=> %(query)s::vector({dim})"
        # "+ 0" is no longer the indexed expression: a narrow scope's rows are scanned exactly.
        order = f"({distance}) + 0" if self.scope is not None and self._scope_is_narrow() else "distance"
        sql = (
            f"SELECT {key}, {distance} AS distance"
            " FROM documents_storedvector AS v JOIN documents_document AS d ON d.id = v.document_id"
            f" WHERE v.dimension = {dim} AND v.space_id = %(space)s AND v.unit = %(unit)s"
            " AND d.corpus_id = %(corpus)s AND d.ready_version <= %(version)s AND d.content_hash <> ''"
            f"{lexical.SCOPE_CONDITIONS if self.scope is not None else ''}"
            f" ORDER BY {order} LIMIT %(k)s"
        )
        params = {
            **self._live(),
            **lexical.scope_params(self.scope),
            "query": "[" + ",".join(repr(float(x)) for x in vector) + "]",
            "space": self.space.pk,
            "unit": int(_UNIT_CODES[unit]),
            "k": k,
        }
        with transaction.atomic():
            _hnsw_settings(k)
            rows = _fetch(sql, params)
        return self._dense_hits(unit, rows)

    def _dense_hits(self, unit: Unit, rows) -> list[tuple[str, float]]:
        hits = [(f"{unit}:{key}", 1.0 - float(distance)) for key, distance in rows]
        # relaxed_order may return rows slightly out of order.
        hits.sort(key=lambda hit: -hit[1])
        with _one_version():
            return self._readable(hits)

    def document_sentences(self, document_id: str) -> Sequence[SourceSentence]:
        key = f"document:{document_id}"
        try:
            return self.passage(key).sentences
        except KeyError:
            return ()

    # --- beyond the protocol ----------------------------------------------------

    def sentence_vectors(self, sentence_ids: Sequence[int]) -> np.ndarray:
        """Stored sentence vectors in the given order (rerankers use them; no re-encoding).

        A sentence deleted since retrieval (its document replaced or removed) gets a zero
        vector: it then ranks last instead of failing the question.
        """
        ids = list(sentence_ids)
        if self.space is None:
            found = dict(Sentence.objects.filter(pk__in=ids).values_list("pk", "embedding"))
            dim = EMBEDDING_DIM
        else:
            found = dict(
                StoredVector.objects.filter(
                    space=self.space, unit=LexicalUnit.SENTENCE, item__in=ids
                ).values_list("item", "embedding")
            )
            dim = self.space.dimension
        rows = [found[i] if found.get(i) is not None else np.zeros(dim, dtype=np.float32) for i in ids]
        return np.asarray(rows, dtype=np.float32).reshape(len(ids), -1)

    # --- the scope ----------------------------------------------------------------

    def _scope_filter(self, prefix: str) -> dict[str, object]:
        scope = self.scope
        if scope is None:
            return {}
        conditions: dict[str, object] = {}
        if scope.sources:
            conditions[f"{prefix}source__in"] = list(scope.sources)
        if scope.dated:
            conditions[f"{prefix}published__isnull"] = False
        if scope.published_from:
            conditions[f"{prefix}published__gte"] = scope.published_from
        if scope.published_to:
            conditions[f"{prefix}published__lte"] = scope.published_to
        return conditions

    def _scope_is_narrow(self) -> bool:
        live = Document.objects.filter(corpus=self.corpus, ready_version__lte=self.version).exclude(
            content_hash=""
        )
        total = live.count()
        return live.filter(**self._scope_filter("")).count() <= EXACT_SCAN_SHARE * total

    # --- reading passages ---------------------------------------------------------

    def _readable(self, hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """``hits`` whose passages could be read (and now are); a hit deleted since the search is dropped."""
        self._read([key for key, _ in hits])
        return [hit for hit in hits if hit[0] in self._passages]

    def _read(self, keys: Iterable[str]) -> None:
        wanted: dict[str, list[str]] = {unit: [] for unit in UNITS}
        for key in keys:
            if key not in self._passages:
                unit, _, ident = key.partition(":")
                if unit in wanted:
                    wanted[unit].append(ident)
        if wanted["sentence"]:
            self._read_sentences([int(i) for i in wanted["sentence"]])
        if wanted["chunk"]:
            self._read_chunks([int(i) for i in wanted["chunk"]])
        if wanted["document"]:
            self._read_documents(wanted["document"])

    def _live(self) -> dict[str, object]:
        return {"corpus": self.corpus.pk, "version": self.version}

    def _read_sentences(self, ids: list[int]) -> None:
        rows = _fetch(
            f"SELECT {_DOCUMENT_COLUMNS}, {_SENTENCE_COLUMNS} FROM documents_sentence AS s"
            " JOIN documents_document AS d ON d.id = s.document_id"
            " WHERE s.id = ANY(%(ids)s) AND d.corpus_id = %(corpus)s AND d.ready_version <= %(version)s"
            " AND d.content_hash <> ''",
            {**self._live(), "ids": ids},
        )
        for published, source, *columns in rows:
            sentence = SourceSentence(*columns)
            self._passages[f"sentence:{sentence.id}"] = Passage(
                f"sentence:{sentence.id}",
                "sentence",
                sentence.document_id,
                sentence.document_title,
                sentence.text,
                (sentence,),
                published,
                source,
            )

    def _read_chunks(self, ids: list[int]) -> None:
        rows = _fetch(
            f"SELECT c.id, c.text, {_DOCUMENT_COLUMNS}, {_SENTENCE_COLUMNS} FROM documents_chunk AS c"
            " JOIN documents_document AS d ON d.id = c.document_id"
            " JOIN documents_sentence AS s ON s.document_id = c.document_id"
            "  AND s.ordinal BETWEEN c.first_ordinal AND c.last_ordinal"
            " WHERE c.id = ANY(%(ids)s) AND d.corpus_id = %(corpus)s AND d.ready_version <= %(version)s"
            " AND d.content_hash <> '' ORDER BY c.id, s.ordinal",
            {**self._live(), "ids": ids},
        )
        for chunk_id, text, (published, source), sentences in _grouped(rows):
            first = sentences[0]
            self._passages[f"chunk:{chunk_id}"] = Passage(
                f"chunk:{chunk_id}",
                "chunk",
                first.document_id,
                first.document_title,
                text,
                sentences,
                published,
                source,
            )

    def _read_documents(self, external_ids: list[str]) -> None:
        rows = _fetch(
            f"SELECT d.external_id, NULL, {_DOCUMENT_COLUMNS}, {_SENTENCE_COLUMNS}"
            " FROM documents_document AS d"
            " JOIN documents_sentence AS s ON s.document_id = d.id"
            " WHERE d.external_id = ANY(%(ids)s) AND d.corpus_id = %(corpus)s"
            " AND d.ready_version <= %(version)s AND d.content_hash <> ''"
            " ORDER BY d.external_id, s.ordinal",
            {**self._live(), "ids": external_ids},
        )
        for external_id, _, (published, source), sentences in _grouped(rows):
            whole = " ".join(s.text for s in sentences)
            self._passages[f"document:{external_id}"] = Passage(
                f"document:{external_id}",
                "document",
                external_id,
                sentences[0].document_title,
                whole,
                sentences,
                published,
                source,
            )

    def _all_keys(self, unit: Unit) -> list[str]:
        live = {
            "document__corpus": self.corpus,
            "document__ready_version__lte": self.version,
        }
        if unit == "document":
            external_ids = (
                Document.objects.filter(
                    corpus=self.corpus, ready_version__lte=self.version, **self._scope_filter("")
                )
                .exclude(content_hash="")
                .order_by("external_id")
                .values_list("external_id", flat=True)
            )
            return [f"document:{e}" for e in external_ids]
        model = Sentence if unit == "sentence" else Chunk
        order = ("document__external_id", "ordinal" if unit == "sentence" else "first_ordinal")
        pks = model.objects.filter(**live, **self._scope_filter("document__"))
        pks = pks.exclude(document__content_hash="").order_by(*order)
        return [f"{unit}:{pk}" for pk in pks.values_list("pk", flat=True)]


_UNIT_CODES = {unit.label: unit.value for unit in LexicalUnit}


def _hnsw_settings(k: int) -> None:
    """For the transaction the caller opened around one dense search."""
    with connection.cursor() as cursor:
        # Without iterative scans a corpus filter applied after the HNSW
        # scan can return fewer than k rows when corpora share the index.
        cursor.execute("SET LOCAL hnsw.iterative_scan = 'relaxed_order'")
        # The breadth sets recall against the exact ranking (QA_HNSW_EF_SEARCH).
        ef_search = min(max(settings.QA_HNSW_EF_SEARCH, k), 1000)
        cursor.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")


def _fetch(sql: str, params: dict[str, object]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _grouped(
    rows: list[tuple],
) -> Iterable[tuple[object, str | None, tuple[object, object], tuple[SourceSentence, ...]]]:
    """(group id, group text, (published, source), its sentences) from rows sorted by group:
    (id, text, published, source, *sentence columns)."""
    current, text, document, sentences = None, None, (None, ""), []
    for group, group_text, published, source, *columns in rows:
        if sentences and group != current:
            yield current, text, document, tuple(sentences)
            sentences = []
        current, text, document = group, group_text, (published, source)
        sentences.append(SourceSentence(*columns))
    if sentences:
        yield current, text, document, tuple(sentences)
