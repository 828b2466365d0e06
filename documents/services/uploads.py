"""Uploads: corpora, files checked and parsed, document versions staged for embedding, deletes.

``documents_submit`` validates and parses a file in the caller's process, so
bad input is refused at once, before anything is written, and stages each
document's new version in its row; the embedding is queued on commit
(``documents.tasks.embed_document``, run by ``ingestion.document_embed``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from audit.models import AuditEvent
from audit.services import audit_record
from documents import lexical
from documents.errors import CorpusExists, CorpusInvalid, IngestError, UploadTooLarge, UploadUnsupported
from documents.models import Corpus, Document, Team
from documents.parsing import (
    SUPPORTED_EXTENSIONS,
    ParsedDocument,
    ParseError,
    UnsupportedFileType,
    parse_bytes,
)
from documents.services.ingestion import next_corpus_version
from groundedqa_site import jobs

EMBED_DOCUMENT_TASK = "documents.tasks.embed_document"


@dataclass(frozen=True)
class Submitted:
    document: Document
    changed: bool  # False when the same content was already stored or queued


@dataclass(frozen=True)
class Refused:
    filename: str
    error: IngestError


@dataclass(frozen=True)
class UploadOutcome:
    submitted: tuple[Submitted, ...]
    refused: tuple[Refused, ...]

    @property
    def changed(self) -> int:
        return sum(s.changed for s in self.submitted)


def corpus_create(*, name: str, team: Team, description: str = "", actor=None) -> Corpus:
    name = name.strip()
    if not name:
        raise CorpusInvalid("A corpus needs a name.")
    if Corpus.objects.filter(name=name).exists():
        raise CorpusExists(f"A corpus named {name!r} already exists.")
    with transaction.atomic():
        corpus = Corpus.objects.create(name=name, team=team, description=description)
        _audit_corpus(actor, AuditEvent.Action.CORPUS_CREATE, corpus)
    return corpus


def check_upload(*, filename: str, size: int) -> None:
    """Refuse a file before reading it: too big, or of a type we cannot parse."""
    limit = settings.UPLOAD_MAX_BYTES
    if size > limit:
        raise UploadTooLarge(
            f"{filename}: {size:,} bytes is over the upload limit of {limit:,} bytes (UPLOAD_MAX_BYTES)."
        )
    if Path(filename).suffix.lower() not in SUPPORTED_EXTENSIONS:
        raise UploadUnsupported(
            f"{filename}: unsupported file type; supported: {', '.join(SUPPORTED_EXTENSIONS)}."
        )


def parse_upload(*, filename: str, data: bytes, external_id: str | None = None) -> list[ParsedDocument]:
    check_upload(filename=filename, size=len(data))
    try:
        return parse_bytes(data, filename, external_id=external_id)
    except UnsupportedFileType as exc:
        raise UploadUnsupported(str(exc)) from exc
    except ParseError as exc:
        raise IngestError(str(exc)) from exc


def documents_submit(
    *,
    corpus: Corpus,
    filename: str,
    data: bytes,
    uploaded_by=None,
    external_id: str | None = None,
) -> list[Submitted]:
    """Parse one uploaded file and stage its documents; queue embedding on commit.

    A file holding more than INGEST_BULK_DOCUMENTS documents (a JSONL export, say)
    is a bulk import and goes to the bulk queue.
    """
    parsed = parse_upload(filename=filename, data=data, external_id=external_id)
    bulk = len(parsed) > settings.INGEST_BULK_DOCUMENTS
    with transaction.atomic():
        submitted = [
            document_stage(corpus=corpus, parsed=doc, filename=filename, uploaded_by=uploaded_by, bulk=bulk)
            for doc in parsed
        ]
        for item in submitted:
            _audit_document(
                uploaded_by,
                AuditEvent.Action.DOCUMENT_UPLOAD,
                item.document,
                {"filename": filename, "changed": item.changed},
            )
    return submitted


def documents_upload(
    *, corpus: Corpus, files: Iterable, uploaded_by=None, external_id: str | None = None
) -> UploadOutcome:
    """Stage every uploaded file (Django UploadedFiles) on its own: one bad file never stops the others.

    The size and type are checked before a file is read, so a huge upload is refused unread.
    """
    submitted, refused = [], []
    for upload in files:
        try:
            check_upload(filename=upload.name, size=upload.size)
            submitted.extend(
                documents_submit(
                    corpus=corpus,
                    filename=upload.name,
                    data=upload.read(),
                    uploaded_by=uploaded_by,
                    external_id=external_id,
                )
            )
        except IngestError as exc:
            refused.append(Refused(filename=upload.name, error=exc))
    return UploadOutcome(submitted=tuple(submitted), refused=tuple(refused))


def embed_queue(*, bulk: bool) -> str:
    return "ingestion-bulk" if bulk else "ingestion"


def send_embed(document_id: int, digest: str, *, bulk: bool) -> None:
    jobs.enqueue(EMBED_DOCUMENT_TASK, document_id, digest, queue=embed_queue(bulk=bulk))


def content_hash(parsed: ParsedDocument) -> str:
    """Hash of everything that ends up in the document's rows, boundaries included."""
    payload = {
        "title": parsed.title,
        "source": parsed.source,
        "url": parsed.url,
        "published": parsed.published.isoformat() if parsed.published else None,
        "text": parsed.text,
        "sentences": [[s.start, s.end, s.label, *s.structure] for s in parsed.sentences],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def document_stage(
    *,
    corpus: Corpus,
    parsed: ParsedDocument,
    filename: str = "",
    uploaded_by=None,
    enqueue: bool = True,
    bulk: bool = False,
) -> Submitted:
    """Stage a parsed document's new version; a no-op when that content is stored or queued.

    ``bulk`` (imports of many documents) queues the embedding behind other bulk work
    only, never in front of an analyst's upload.
    """
    digest = content_hash(parsed)
    with transaction.atomic():
        document, created = Document.objects.select_for_update().get_or_create(
            corpus=corpus,
            external_id=parsed.external_id,
            defaults={"title": parsed.title[:500], "filename": filename[:500], "uploaded_by": uploaded_by},
        )
        unchanged = document.content_hash == digest and document.status == Document.Status.READY
        in_flight = document.pending_hash == digest and document.status in (
            Document.Status.QUEUED,
            Document.Status.PARSING,
            Document.Status.EMBEDDING,
        )
        if not created and (unchanged or in_flight):
            return Submitted(document, changed=False)
        document.pending_text = parsed.text
        document.pending_hash = digest
        document.pending_sentences = {
            "title": parsed.title[:500],
            "source": parsed.source[:200],
            "url": parsed.url[:1000],
            "published": parsed.published.isoformat() if parsed.published else None,
            "sentences": [[s.start, s.end, s.label, *s.structure] for s in parsed.sentences],
        }
        document.filename = filename[:500] or document.filename
        document.uploaded_by = uploaded_by or document.uploaded_by
        document.status = Document.Status.QUEUED
        document.progress = 0
        document.error = ""
        # A worker still embedding the previous version loses its lease (and its swap).
        document.lease_owner = ""
        document.lease_expires_at = None
        document.attempts = 0
        # If the message is lost before a worker claims the document (the broker, or a
        # worker's main process dying with it prefetched), the reaper sends it again.
        document.resend_at = jobs.lease_until() if enqueue else None
        document.bulk = bulk
        if not document.content_hash:
            # Nothing live yet: show the title straight away in lists.
            document.title = parsed.title[:500]
        document.save()
        if enqueue:
            document_id = document.pk
            transaction.on_commit(lambda: send_embed(document_id, digest, bulk=bulk))
    return Submitted(document, changed=True)


def _audit_corpus(actor, action: str, corpus: Corpus, detail: dict | None = None) -> None:
    audit_record(
        actor=actor,
        action=action,
        target_type="corpus",
        target_id=corpus.pk,
        target_label=corpus.name,
        team_id=corpus.team_id,
        detail=detail,
    )


def _audit_document(actor, action: str, document: Document, detail: dict | None = None) -> None:
    audit_record(
        actor=actor,
        action=action,
        target_type="document",
        target_id=document.pk,
        target_label=f"{document.title or document.external_id} (corpus {document.corpus.name})",
        team_id=document.corpus.team_id,
        detail=detail,
    )


def document_delete(*, document: Document, actor=None) -> None:
    """Delete a document; questions already past retrieval answer from what remains (qa/adapters.py)."""
    with transaction.atomic():
        _audit_document(actor, AuditEvent.Action.DOCUMENT_DELETE, document)
        next_corpus_version(document.corpus_id)
        lexical.unindex_document(corpus_id=document.corpus_id, document_id=document.pk)
        document.delete()


def corpus_delete(*, corpus: Corpus, actor=None) -> None:
    with transaction.atomic():
        _audit_corpus(actor, AuditEvent.Action.CORPUS_DELETE, corpus, {"documents": corpus.documents.count()})
        corpus.delete()
