"""Celery entry points of the documents app: load by id, call a service, return."""

from __future__ import annotations

import logging

from celery import shared_task

from documents import reembedding, services
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


@shared_task(acks_late=True)
def reembed_corpus(space_id: int) -> str:
    """Embed a corpus with another model and switch it over. Safe to run twice: the claim decides."""
    space = reembedding.reembedding_run(space_id=space_id)
    return "skipped" if space is None else space.status
