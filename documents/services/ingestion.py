"""Ingestion: a staged document version embedded and swapped in.

``document_embed`` runs in a Celery worker: it claims the staged version under
a lease (with other queued documents of the same corpus and lane, encoded in
the same calls), embeds the sentences and swaps them in with one transaction
per document, so a document is either ready with all its sentences and vectors
or has none of the new ones. The swap-ins of one wave of documents run on a
write-behind thread while the next wave encodes (documents/services/write_behind.py).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Func, IntegerField
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from documents import copy_rows, lexical, vectors
from documents.embedding import model_named
from documents.models import EMBEDDING_DIM, Chunk, Corpus, Document, EmbeddingSpace, Sentence, StoredVector
from documents.parsing import section_windows
from documents.services.write_behind import WriteBehind
from documents.vectors import pool
from groundedqa_site import jobs
from qa.pipeline.core.protocols import Embedder

logger = logging.getLogger(__name__)

# Queued documents looked at for one shared encode (the sentence budget usually stops it first).
COMPANIONS_MAX = 200


def _claim(document_id: int, expected_hash: str, owner: str | None = None) -> str | None:
    """Move a staged document to PARSING under a lease; only one worker wins. Returns the lease owner.

    A worker that died mid-job is noticed by its lease running out (documents_reap).
    """
    owner = owner or jobs.new_owner()
    now = timezone.now()
    claimed = Document.objects.filter(
        pk=document_id, pending_hash=expected_hash, status=Document.Status.QUEUED
    ).update(
        status=Document.Status.PARSING,
        progress=0,
        updated_at=now,
        **jobs.lease_taken(owner, now),
    )
    return owner if claimed else None


def _set_progress(document_ids: list[int], status: str, progress: int) -> None:
    Document.objects.filter(pk__in=document_ids).update(
        status=status, progress=progress, updated_at=timezone.now()
    )


# How often one document is encoded again because its corpus switched models while it was encoded.
MODEL_SWITCH_RETRIES = 3


def document_embed(
    *,
    document_id: int,
    expected_hash: str,
    embedder: Embedder,
    on_progress: Callable[[int, int], None] | None = None,
) -> Document | None:
    """Embed a staged version and make it live. Returns None when there was nothing to do.

    ``embedder`` is the site's model; a corpus embedded with another model
    (``Corpus.embedding_space``) is encoded by that one.

    Other queued documents of the same corpus and lane are claimed with it and
    encoded in the same calls (``_claim_companions``): one document at a time,
    the encoder pads a few long lines and many short ones into the same batches,
    and a short document makes a batch of its own. They are encoded in waves,
    each wave swapped in on a write-behind thread while the next one encodes
    (``_embed_in_waves``). Each document is still swapped in by its own
    transaction, and their own messages later find nothing to claim.
    """
    owner = _claim(document_id, expected_hash)
    if owner is None:
        logger.info(
            "document %s: version %s not claimable (done, superseded or gone)", document_id, expected_hash[:8]
        )
        return None
    claimed = {document_id: expected_hash}
    claimed.update(_claim_companions(document_id, owner))
    outcomes: dict[int, Document | None] = {}
    with jobs.heartbeat(Document, list(claimed), owner):
        built = {}
        for pk, digest in claimed.items():
            try:
                built[pk] = _build_rows(Document.objects.get(pk=pk))
            except Exception as exc:  # noqa: BLE001 - any failure is reported on the document itself
                logger.exception("document %s failed to embed", pk)
                outcomes[pk] = fail_version(pk, digest, _readable(exc), owner=owner)
        corpus_id = Document.objects.filter(pk=document_id).values_list("corpus_id", flat=True).first()
        for _ in range(MODEL_SWITCH_RETRIES):
            if not built:
                break
            space = vectors.current_space(corpus_id)
            done, built = _embed_in_waves(built, claimed, embedder, space, owner, on_progress)
            outcomes.update(done)
            if built:
                logger.info("documents %s: their corpus switched embedding models; again", sorted(built))
        reason = (
            "Its corpus kept switching embedding models while the document was embedded; upload it again."
        )
        outcomes.update({pk: fail_version(pk, claimed[pk], reason, owner=owner) for pk in built})
    if len(claimed) > 1:
        logger.info("document %s embedded with %s other queued documents", document_id, len(claimed) - 1)
    return outcomes.get(document_id)


Built = tuple[list[Sentence], list[tuple[int, int]]]


def _embed_in_waves(
    built: dict[int, Built],
    claimed: dict[int, str],
    embedder: Embedder,
    space: EmbeddingSpace | None,
    owner: str,
    on_progress: Callable[[int, int], None] | None,
) -> tuple[dict[int, Document | None], dict[int, Built]]:
    """Encode the built documents wave by wave (``_waves``), each wave swapped in while the next
    one encodes; (outcomes, the documents to encode again because their corpus switched models).

    A failed encode fails the documents not yet handed to the writer; the waves
    before it are live already.
    """
    outcomes: dict[int, Document | None] = {}
    waves = _waves({pk: len(sentences) for pk, (sentences, _) in built.items()})
    progress = _Progress(list(built), sum(len(sentences) for sentences, _ in built.values()), on_progress)
    progress.encoded(0)
    dimension = EMBEDDING_DIM if space is None else space.dimension
    with WriteBehind() as writer:
        for wave in waves:
            try:
                # Inside the try: a model that cannot be loaded fails the documents like a failed encode.
                encoder = embedder if space is None else model_named(space.model).passage
                texts = {pk: [s.text for s in built[pk][0]] for pk in wave}
                encoded = _encode(texts, encoder, progress, dimension, writer)
            except Exception as exc:  # noqa: BLE001 - any failure is reported on the documents themselves
                logger.exception("documents %s failed to embed", progress.waiting)
                reason = _readable(exc)
                outcomes.update(
                    {pk: fail_version(pk, claimed[pk], reason, owner=owner) for pk in progress.waiting}
                )
                break
            progress.handed_over(wave)
            for pk in wave:
                writer.submit(
                    pk, _swap_in, pk, claimed[pk], *built[pk], encoded[pk], owner=owner, space=space
                )
    switched = {}
    for pk, swapped in writer.results().items():
        if swapped is MODEL_SWITCHED:
            switched[pk] = built[pk]
        else:
            outcomes[pk] = swapped
    return outcomes, switched


def _waves(sizes: dict[int, int]) -> list[list[int]]:
    """The documents cut into consecutive waves of at least ``INGEST_WAVE_SENTENCES`` sentences,
    but the last document in a wave of its own; one wave of all of them when the setting is 0.

    Every wave's swap-in but the last runs while a later wave encodes; the
    last one's is all that is left to wait for once the encoder is done.
    """
    least = settings.INGEST_WAVE_SENTENCES
    waves: list[list[int]] = [[]]
    count = 0
    for pk, size in sizes.items():
        if least and count >= least:
            waves.append([])
            count = 0
        waves[-1].append(pk)
        count += size
    if least and len(waves[-1]) > 1:
        waves.append([waves[-1].pop()])
    return waves


class _Progress:
    """Progress of a group's encoding, shown on its documents still waiting for their swap-in.

    A document handed to the writer is left alone from then on: its swap-in
    makes it ready, and a later progress update must not turn it back.
    """

    def __init__(self, pks: list[int], total: int, on_progress) -> None:
        self.waiting, self.total, self.done, self._on_progress = list(pks), total, 0, on_progress

    def encoded(self, n: int) -> None:
        self.done += n
        _set_progress(self.waiting, Document.Status.EMBEDDING, int(100 * self.done / self.total))
        if self._on_progress:
            self._on_progress(self.done, self.total)

    def handed_over(self, pks: list[int]) -> None:
        self.waiting = [pk for pk in self.waiting if pk not in pks]


def _claim_companions(document_id: int, owner: str) -> dict[int, str]:
    """Claim queued documents of ``document_id``'s corpus and lane, oldest first, while the
    sentences of all of them stay within ``INGEST_ENCODE_SENTENCES``; {pk: pending hash}.

    The same conditional claim as the document's own, so each is still claimed
    exactly once, by whichever worker gets there first.
    """
    budget = settings.INGEST_ENCODE_SENTENCES
    first = Document.objects.filter(pk=document_id).values("corpus_id", "bulk", "pending_sentences").first()
    if first is None or budget <= 0:
        return {}
    budget -= len((first["pending_sentences"] or {}).get("sentences", []))
    queued = (
        Document.objects.filter(
            corpus_id=first["corpus_id"], bulk=first["bulk"], status=Document.Status.QUEUED
        )
        .exclude(pk=document_id)
        .annotate(
            n_sentences=Func(
                KeyTransform("sentences", "pending_sentences"),
                function="jsonb_array_length",
                output_field=IntegerField(),
            )
        )
        .order_by("pk")
        .values_list("pk", "pending_hash", "n_sentences")[:COMPANIONS_MAX]
    )
    companions = {}
    # One commit for all the claims instead of one each (a commit waits for its WAL flush); the
    # rows are taken in pk order, as every worker takes them, so two workers cannot deadlock.
    with transaction.atomic():
        for pk, digest, n_sentences in queued:
            if (n_sentences or 0) > budget:
                break
            if _claim(pk, digest, owner):
                companions[pk] = digest
                budget -= n_sentences or 0
    return companions


def _build_rows(document: Document) -> tuple[list[Sentence], list[tuple[int, int]]]:
    staged = document.pending_sentences or {}
    text = document.pending_text
    sentences = []
    for ordinal, (start, end, label, *structure) in enumerate(staged.get("sentences", [])):
        # Staged before structure was kept, or plain prose: [start, end, label] alone.
        role, section, page = structure or ("paragraph", "", None)
        sentence_text = text[start:end]
        if not sentence_text.strip():
            continue
        sentences.append(
            Sentence(
                document_id=document.pk,
                ordinal=len(sentences),
                label=label or str(ordinal + 1),
                text=sentence_text,
                start=start,
                end=end,
                role=role,
                section=section,
                page=page,
            )
        )
    if not sentences:
        raise ValueError("the document has no sentences to index")
    # Chunks stay inside a section: a table's last rows are not searched as one text with the next
    # section's heading (docs/structure.md).
    windows = section_windows(
        [s.section for s in sentences], settings.CHUNK_SENTENCES, settings.CHUNK_OVERLAP
    )
    return sentences, windows


def _encode(
    texts: dict[int, list[str]],
    embedder,
    progress: _Progress,
    dimension: int = EMBEDDING_DIM,
    writer: WriteBehind | None = None,
) -> dict[int, np.ndarray]:
    """Vectors of every document's sentences, {pk: (n, dim)}, encoded together.

    The sentences of all documents are sorted by length before they are cut into
    calls, so each call (and each batch the encoder makes of it) holds lines of
    similar length; progress is reported every 256 sentences or so. While ``writer``
    makes the previous wave live, the calls leave it a core and hold one batch each.
    """
    pks = list(texts)
    flat = [text for pk in pks for text in texts[pk]]
    order = sorted(range(len(flat)), key=lambda i: len(flat[i]), reverse=True)
    out = np.empty((len(flat), dimension), dtype=np.float32)
    long_call = max(settings.QA_EMBEDDING_BATCH_SIZE * 16, 256)
    begin = unreported = 0
    while begin < len(order):
        with writer.cores_shared() if writer is not None else contextlib.nullcontext(False) as shared:
            rows = order[begin : begin + (settings.QA_EMBEDDING_BATCH_SIZE if shared else long_call)]
            part = np.asarray(embedder.encode([flat[i] for i in rows]), dtype=np.float32)
        if part.shape != (len(rows), dimension) or not np.isfinite(part).all():
            raise ValueError(f"the embedding model returned an unusable result of shape {part.shape}")
        out[rows] = part
        begin, unreported = begin + len(rows), unreported + len(rows)
        if unreported >= long_call or begin == len(order):  # short calls report as a long one would
            progress.encoded(unreported)
            unreported = 0
    bounds = np.cumsum([0] + [len(texts[pk]) for pk in pks])
    return {pk: out[bounds[i] : bounds[i + 1]] for i, pk in enumerate(pks)}


def next_corpus_version(corpus_id: int) -> int:
    """Lock the corpus row and move it to its next version (committed with the caller's change).

    Callers lock the corpus before any of its documents, so a swap and a delete
    of the same corpus queue up instead of deadlocking.
    """
    corpus = Corpus.objects.select_for_update().only("version").get(pk=corpus_id)
    corpus.version += 1
    corpus.save(update_fields=["version"])
    return corpus.version


class _ModelSwitched(Exception):
    """The corpus's embedding space is no longer the one a document was encoded for."""


MODEL_SWITCHED = object()  # _swap_in's answer then: encode again with the corpus's new model


def _swap_in(
    document_id,
    expected_hash,
    sentences,
    windows,
    encoded,
    *,
    owner=None,
    space: EmbeddingSpace | None = None,
):
    """Make the encoded version live; ``space`` is the one it was encoded for (None: the columns)."""
    corpus_id = Document.objects.filter(pk=document_id).values_list("corpus_id", flat=True).first()
    if corpus_id is None:
        logger.info("document %s was deleted while it embedded; discarding", document_id)
        return None
    try:
        with transaction.atomic():
            version = next_corpus_version(corpus_id)
            # The corpus row is locked now: a re-embedding cannot switch its model before commit.
            if vectors.space_key(vectors.current_space(corpus_id)) != vectors.space_key(space):
                raise _ModelSwitched
            document = Document.objects.select_for_update().filter(pk=document_id).first()
            if not _still_ours(document, expected_hash, owner):
                # Deleted, replaced by a newer upload, or presumed dead and re-queued while we embedded.
                logger.info("document %s: version %s superseded; discarding", document_id, expected_hash[:8])
                return None
            _replace_rows(document, sentences, windows, encoded, space=space, version=version)
            _make_live(document, expected_hash, version, None if space is not None else pool(encoded))
    except _ModelSwitched:
        return MODEL_SWITCHED
    return document


def _replace_rows(document, sentences, windows, encoded, *, space, version) -> None:
    """The document's sentences, chunks, postings and vectors, replaced by the encoded version's."""
    document_id, corpus_id = document.pk, document.corpus_id
    columns = space is None
    for sentence, vector in zip(sentences, encoded, strict=True):
        sentence.embedding = vector if columns else None
    chunks = chunk_rows(document_id, sentences, windows, encoded if columns else None)
    if document.content_hash:
        # Only a version once made live has rows (they are written nowhere else): a new
        # document skips five statements that would find nothing.
        lexical.unindex_document(corpus_id=corpus_id, document_id=document_id)
        # Vectors of every space go with the rows they belong to; a re-embedding in progress
        # finds the document without its vectors and embeds the new version.
        StoredVector.objects.filter(document_id=document_id).delete()
        Sentence.objects.filter(document_id=document_id).delete()
        Chunk.objects.filter(document_id=document_id).delete()
    copy_rows.copy_sentences(sentences)
    copy_rows.copy_chunks(chunks)
    if not columns:
        vectors.write_document_vectors(
            space,
            document_id,
            sentences=[(s.pk, v) for s, v in zip(sentences, encoded, strict=True)],
            chunks=[(c.pk, pool(encoded[c.first_ordinal : c.last_ordinal + 1])) for c in chunks],
            document=pool(encoded),
        )
    lexical.index_document(
        corpus_id=corpus_id,
        document_id=document_id,
        ready_version=version,
        sentences=[(s.pk, s.text) for s in sentences],
        chunks=[(c.pk, c.first_ordinal, c.last_ordinal) for c in chunks],
    )


def chunk_rows(document_id: int, sentences, windows, encoded: np.ndarray | None) -> list[Chunk]:
    """The unsaved chunk rows of ``windows`` (first, last ordinal) over ``sentences``: their texts
    joined, their vector pooled from ``encoded``, the sentences' vectors (None: no column vector)."""
    return [
        Chunk(
            document_id=document_id,
            first_ordinal=first,
            last_ordinal=last,
            text=" ".join(s.text for s in sentences[first : last + 1]),
            embedding=None if encoded is None else pool(encoded[first : last + 1]),
        )
        for first, last in windows
    ]


def _make_live(document: Document, expected_hash: str, version: int, embedding) -> None:
    staged = document.pending_sentences
    document.text = document.pending_text
    document.content_hash = expected_hash
    document.title = staged.get("title") or document.title
    document.source = staged.get("source") or ""
    document.url = staged.get("url") or ""
    document.published = staged.get("published")
    document.embedding = embedding
    document.pending_text = ""
    document.pending_hash = ""
    document.pending_sentences = []
    document.ready_version = version
    document.lease_owner = ""
    document.lease_expires_at = None
    document.attempts = 0
    document.status = Document.Status.READY
    document.progress = 100
    document.error = ""
    document.save()


def _still_ours(document: Document | None, expected_hash: str, owner: str | None) -> bool:
    if document is None or document.pending_hash != expected_hash:
        return False
    return owner is None or document.lease_owner == owner


def fail_version(
    document_id: int, expected_hash: str, reason: str, *, owner: str | None = None
) -> Document | None:
    with transaction.atomic():
        document = Document.objects.select_for_update().filter(pk=document_id).first()
        if not _still_ours(document, expected_hash, owner):
            return None
        document.lease_owner = ""
        document.lease_expires_at = None
        document.pending_text = ""
        document.pending_hash = ""
        document.pending_sentences = []
        document.progress = 0
        if document.content_hash:
            # The previous version's sentences are untouched and still served.
            document.status = Document.Status.READY
            document.error = f"Update failed, the previous version is still in use: {reason}"
        else:
            document.status = Document.Status.FAILED
            document.error = reason
        document.save()
    return document


def _readable(exc: Exception) -> str:
    message = str(exc).strip() or exc.__class__.__name__
    return message[0].upper() + message[1:] if message else message
