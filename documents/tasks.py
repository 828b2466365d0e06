"""Celery entry points of the documents app: load by id, call a service, return."""

from __future__ import annotations

import logging

from celery import shared_task

from documents import services
from documents.embedding import get_embedder

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def embed_document(document_id: int, expected_hash: str) -> str:
    """Embed one staged document version. Safe to run twice: the claim decides."""
    document = services.document_embed(
        document_id=document_id, expected_hash=expected_hash, embedder=get_embedder()
    )
    if document is None:
        return "skipped"
    return document.status
