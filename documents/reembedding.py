"""Re-embedding a corpus with another model: a job with progress that never mixes two models.

``reembedding_start`` checks that the model loads (its dimension is recorded)
and queues an ``EmbeddingSpace``. ``reembedding_run`` (the Celery task
``documents.tasks.reembed_corpus``) claims it under a lease, as every job
here, and embeds the corpus's live documents one at a time into the new
space, each document's vectors written in one transaction and at most once
((space, unit, item) is unique), so a worker that dies loses at most the
document it was on and a re-run skips what is done. Questions meanwhile
read the corpus's current space. When no live document lacks vectors in the
new space (documents that went live meanwhile are embedded too), one
transaction holding the corpus row makes the new space the corpus's and
moves the corpus version: questions asked before read the old model at their
version, questions after the new one.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from documents import vectors
from documents.embedding import installed_models_help, is_site_model, model_named, site_model_name
from documents.errors import Conflict, Invalid
from documents.models import EMBEDDING_DIM, Chunk, Corpus, Document, EmbeddingSpace, Sentence, StoredVector
from documents.services import corpus_create
from documents.vectors import pool
from groundedqa_site import jobs
from qa.pipeline.core.protocols import Embedder
from qa.pipeline.search.embedding import ModelNotAvailable

logger = logging.getLogger(__name__)

REEMBED_TASK = "documents.tasks.reembed_corpus"
# Bulk work: the lane of imports, so an analyst's upload never waits behind a re-embedding.
REEMBED_QUEUE = "ingestion-bulk"
UNFINISHED = (EmbeddingSpace.Status.QUEUED, EmbeddingSpace.Status.RUNNING)


class EmbeddingModelInvalid(Invalid):
    """A model name that is empty or cannot be loaded here."""


class ReembeddingConflict(Conflict):
    """The corpus is being re-embedded already, or already uses that model."""


class _LeaseLost(Exception):
    """The reaper gave this job to another worker; stop without writing anything more."""


def corpus_model(corpus: Corpus) -> tuple[str, int]:
    """(model name, dimension) of the vectors questions about the corpus search now."""
    space = corpus.embedding_space
    if space is None:
        return site_model_name(), EMBEDDING_DIM
    return space.model, space.dimension


def reembedding_start(
    *, corpus: Corpus, model: str, requested_by=None, enqueue: bool = True
) -> EmbeddingSpace:
    """Queue re-embedding ``corpus`` with ``model``; refused when it cannot load or is the corpus's.

    ``enqueue=False`` sends no task: the caller runs ``reembedding_run`` itself.
    """
    name = model.strip()
    loaded = _loaded(name)
    in_columns = is_site_model(name)
    with transaction.atomic():
        corpus = (
            Corpus.objects.select_for_update(of=("self",)).select_related("embedding_space").get(pk=corpus.pk)
        )
        running = corpus.embedding_spaces.filter(status__in=UNFINISHED).first()
        if running is not None:
            raise ReembeddingConflict(
                f"Corpus {corpus.name!r} is being re-embedded with {running.model!r} already "
                f"({running.progress}% done); wait for it to finish."
            )
        current, _ = corpus_model(corpus)
        if current == loaded.name:
            raise ReembeddingConflict(f"Corpus {corpus.name!r} is embedded with {current!r} already.")
        space = EmbeddingSpace.objects.create(
            corpus=corpus,
            model=loaded.name,
            dimension=loaded.dimension,
            in_columns=in_columns,
            requested_by=requested_by,
            resend_at=jobs.lease_until() if enqueue else None,
        )
        space_id = space.pk
        if enqueue:
            transaction.on_commit(lambda: _send(space_id))
    return space


def _loaded(name: str):
    if not name:
        raise EmbeddingModelInvalid(f"model: name an embedding model: {installed_models_help()}.")
    try:
        return model_named(name)
    except ModelNotAvailable as exc:
        raise EmbeddingModelInvalid(
            f"model: {name!r} is not an embedding model installed here ({exc.__cause__ or exc}). "
            f"Use {installed_models_help()}."
        ) from exc


def corpus_create_with_model(
    *, name: str, team, description: str = "", model: str = "", actor=None
) -> Corpus:
    """A new corpus whose documents will be embedded with ``model`` (empty: the site's)."""
    model = model.strip()
    if not model or is_site_model(model):
        return corpus_create(name=name, team=team, description=description, actor=actor)
    try:
        loaded = _loaded(model)
    except EmbeddingModelInvalid as exc:
        raise EmbeddingModelInvalid(str(exc).replace("model:", "embedding_model:", 1)) from exc
    with transaction.atomic():
        corpus = corpus_create(name=name, team=team, description=description, actor=actor)
        # Active from version 0: the corpus has nothing to re-embed, and every version reads it.
        corpus.embedding_space = EmbeddingSpace.objects.create(
            corpus=corpus,
            model=loaded.name,
            dimension=loaded.dimension,
            status=EmbeddingSpace.Status.ACTIVE,
            activated_version=corpus.version,
            progress=100,
            requested_by=actor,
            finished_at=timezone.now(),
        )
        corpus.save(update_fields=["embedding_space"])
    return corpus


def _send(space_id: int) -> None:
    jobs.enqueue(REEMBED_TASK, space_id, queue=REEMBED_QUEUE)


def reembedding_run(*, space_id: int, on_progress=None) -> EmbeddingSpace | None:
    """Embed the corpus into a queued space and make it the corpus's; None when not claimable."""
    owner = jobs.new_owner()
    now = timezone.now()
    claimed = EmbeddingSpace.objects.filter(pk=space_id, status=EmbeddingSpace.Status.QUEUED).update(
        status=EmbeddingSpace.Status.RUNNING, updated_at=now, **jobs.lease_taken(owner, now)
    )
    if not claimed:
        logger.info("embedding space %s: not claimable (done, running elsewhere or gone)", space_id)
        return None
    with jobs.heartbeat(EmbeddingSpace, space_id, owner):
        space = EmbeddingSpace.objects.get(pk=space_id)
        try:
            encoder = model_named(space.model).passage
            while True:
                _fill(space, encoder, owner, on_progress)
                if _activate(space, owner):
                    break
        except _LeaseLost:
            logger.warning("embedding space %s: lease lost; another worker carries on", space_id)
            return None
        except Exception as exc:  # noqa: BLE001 - the job must end failed with a reason, not hang
            logger.exception("embedding space %s failed", space_id)
            _fail(space_id, owner, str(exc) or exc.__class__.__name__)
        return EmbeddingSpace.objects.get(pk=space_id)


def _fill(space: EmbeddingSpace, encoder: Embedder, owner: str, on_progress) -> None:
    """Embed every live document that lacks vectors in ``space``, reporting progress per document."""
    missing = _documents_missing(space)
    total = Document.objects.filter(corpus_id=space.corpus_id).exclude(content_hash="").count()
    done = max(total - len(missing), 0)
    _progress(space, owner, done, total)
    for document_id in missing:
        _embed_document(space, document_id, encoder, owner)
        done += 1
        _progress(space, owner, done, max(total, done))
        if on_progress is not None:
            on_progress(done, max(total, done))


def _documents_missing(space: EmbeddingSpace) -> list[int]:
    """Live documents of the corpus with a sentence that has no vector in ``space``."""
    if space.in_columns:
        lacking = "s.embedding IS NULL"
    else:
        lacking = (
            "NOT EXISTS (SELECT 1 FROM documents_storedvector AS v"
            " WHERE v.space_id = %(space)s AND v.unit = 2 AND v.item = s.id)"
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT s.document_id FROM documents_sentence AS s"
            " JOIN documents_document AS d ON d.id = s.document_id"
            f" WHERE d.corpus_id = %(corpus)s AND d.content_hash <> '' AND {lacking}"
            " ORDER BY s.document_id",
            {"corpus": space.corpus_id, "space": space.pk},
        )
        return [row[0] for row in cursor.fetchall()]


def _embed_document(space: EmbeddingSpace, document_id: int, encoder: Embedder, owner: str) -> None:
    """One document's sentence, chunk and document vectors in ``space``, written in one transaction."""
    content_hash = Document.objects.filter(pk=document_id).values_list("content_hash", flat=True).first()
    sentences = list(
        Sentence.objects.filter(document_id=document_id).order_by("ordinal").values_list("pk", "text")
    )
    if not content_hash or not sentences:
        return  # deleted or replaced since it was listed: the next pass sees its new version
    encoded = np.asarray(encoder.encode([text for _, text in sentences]), dtype=np.float32)
    if encoded.shape != (len(sentences), space.dimension) or not np.isfinite(encoded).all():
        raise ValueError(f"the embedding model returned an unusable result of shape {encoded.shape}")
    with transaction.atomic():
        document = Document.objects.select_for_update().filter(pk=document_id).first()
        _check_lease(space.pk, owner)
        if document is None or document.content_hash != content_hash:
            return  # replaced while it was encoded: its rows are new, the next pass embeds them
        # Read under the document's lock: restructure_documents may have recut them while we encoded.
        chunks = Chunk.objects.filter(document_id=document_id).values_list(
            "pk", "first_ordinal", "last_ordinal"
        )
        written = {
            "sentences": [(pk, vector) for (pk, _), vector in zip(sentences, encoded, strict=True)],
            "chunks": [(pk, pool(encoded[first : last + 1])) for pk, first, last in chunks],
            "document": pool(encoded),
        }
        if space.in_columns:
            vectors.write_column_vectors(document_id, **written)
        else:
            vectors.write_document_vectors(space, document_id, **written)


def _check_lease(space_id: int, owner: str) -> None:
    held = EmbeddingSpace.objects.filter(pk=space_id, lease_owner=owner, status=EmbeddingSpace.Status.RUNNING)
    if not held.exists():
        raise _LeaseLost


def _progress(space: EmbeddingSpace, owner: str, done: int, total: int) -> None:
    EmbeddingSpace.objects.filter(pk=space.pk, lease_owner=owner).update(
        documents_done=done,
        documents_total=total,
        progress=int(100 * done / total) if total else 100,
        updated_at=timezone.now(),
    )


def _activate(space: EmbeddingSpace, owner: str) -> bool:
    """Make ``space`` the corpus's, unless a document went live without its vectors meanwhile."""
    with transaction.atomic():
        corpus = Corpus.objects.select_for_update().get(pk=space.corpus_id)
        # With the corpus row locked no document can go live, so this check holds until commit.
        if _documents_missing(space):
            return False
        _check_lease(space.pk, owner)
        previous = corpus.embedding_space_id
        corpus.version += 1
        corpus.embedding_space_id = space.pk
        corpus.save(update_fields=["version", "embedding_space"])
        now = timezone.now()
        EmbeddingSpace.objects.filter(pk=space.pk).update(
            status=EmbeddingSpace.Status.ACTIVE,
            activated_version=corpus.version,
            progress=100,
            finished_at=now,
            updated_at=now,
            **jobs.RELEASED,
        )
        older = EmbeddingSpace.objects.filter(corpus_id=corpus.pk, status=EmbeddingSpace.Status.RETIRED)
        stale = list(older.exclude(pk=previous).values_list("pk", flat=True))
        if previous is not None:
            EmbeddingSpace.objects.filter(pk=previous).update(
                status=EmbeddingSpace.Status.RETIRED, updated_at=now
            )
    # The space replaced now stays readable for questions still at an older version; the ones
    # before it have had a whole re-embedding's time to finish.
    StoredVector.objects.filter(space_id__in=stale).delete()
    logger.info("corpus %s: now embedded with %s (version %s)", corpus.pk, space.model, corpus.version)
    return True


def _fail(space_id: int, owner: str | None, reason: str) -> int:
    """End the job failed; the corpus keeps its model. Vectors written so far go with the space."""
    row = EmbeddingSpace.objects.filter(pk=space_id, status__in=UNFINISHED)
    if owner is not None:
        row = row.filter(lease_owner=owner)
    failed = row.update(
        status=EmbeddingSpace.Status.FAILED,
        error=reason[:2000],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
        **jobs.RELEASED,
    )
    if failed:
        StoredVector.objects.filter(space_id=space_id).delete()
    return failed


def reembeddings_reap(*, now=None) -> int:
    """Re-queue re-embeddings whose worker died (lease expired), fail those that died too often,
    and send again those whose message seems lost."""
    now = now or timezone.now()
    lease = timedelta(seconds=settings.JOB_LEASE_SECONDS)
    expired = EmbeddingSpace.objects.filter(
        Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True, updated_at__lt=now - lease),
        status=EmbeddingSpace.Status.RUNNING,
    )
    touched = 0
    for pk, attempts, owner in expired.values_list("pk", "attempts", "lease_owner"):
        if jobs.attempts_exhausted(attempts):
            reason = (
                f"The re-embedding stopped its worker {attempts} times (killed, out of memory or "
                "restarted), so it was given up; the corpus keeps its model. Start it again to retry."
            )
            touched += _fail(pk, owner, reason)
            continue
        requeued = EmbeddingSpace.objects.filter(
            pk=pk, status=EmbeddingSpace.Status.RUNNING, lease_owner=owner
        ).update(
            status=EmbeddingSpace.Status.QUEUED,
            resend_at=jobs.lease_until(now),
            updated_at=now,
            **jobs.RELEASED,
        )
        if requeued:
            _send(pk)
            touched += 1
    due = EmbeddingSpace.objects.filter(status=EmbeddingSpace.Status.QUEUED, resend_at__lte=now)
    for pk, queued_at in due.values_list("pk", "updated_at"):
        # Behind a long bulk import the message only waits its turn: resend less and less often.
        pause = max(lease, now - queued_at)
        if EmbeddingSpace.objects.filter(
            pk=pk, status=EmbeddingSpace.Status.QUEUED, resend_at__lte=now
        ).update(resend_at=now + pause):
            _send(pk)
            touched += 1
    return touched
