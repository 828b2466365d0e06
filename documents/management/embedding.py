"""For commands that stage documents (ingest, import_benchmark): embed them here, or watch the workers."""

from __future__ import annotations

import time

from django.core.management.base import CommandError
from tqdm import tqdm

from documents import services
from documents.models import Document

WAIT_WITHOUT_PROGRESS_SECONDS = 120


def embed_in_process(document_ids: list[int]) -> None:
    from documents.embedding import get_embedder

    embedder = get_embedder()
    for document_id in tqdm(document_ids, desc="embedding", unit="doc", disable=None):
        document = Document.objects.get(pk=document_id)
        services.document_embed(
            document_id=document_id, expected_hash=document.pending_hash, embedder=embedder
        )


def wait_for_workers(document_ids: list[int], *, left_behind: str = "The documents stay queued.") -> None:
    """Poll until every document is ready or failed; give up after two minutes without progress."""
    finished = [Document.Status.READY, Document.Status.FAILED]
    last_done, last_change = -1, time.monotonic()
    with tqdm(total=len(document_ids), desc="embedding", unit="doc", disable=None) as bar:
        while True:
            done = Document.objects.filter(pk__in=document_ids, status__in=finished, pending_hash="").count()
            bar.update(done - bar.n)
            if done == len(document_ids):
                return
            if done != last_done:
                last_done, last_change = done, time.monotonic()
            elif time.monotonic() - last_change > WAIT_WITHOUT_PROGRESS_SECONDS:
                raise CommandError(
                    "No progress for two minutes: is a Celery worker consuming the 'ingestion' queue? "
                    "Start one (make run starts them) or re-run with --in-process. "
                    f"{left_behind}"
                )
            time.sleep(1)


def failed_documents(document_ids: list[int]) -> list[str]:
    failed = Document.objects.filter(pk__in=document_ids, status=Document.Status.FAILED)
    return [f"{document.external_id}: {document.error}" for document in failed]
