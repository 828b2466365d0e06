"""The proposed ``documents.services._swap_in``: the same rows written by binary COPY.

bench/proposed_services.patch makes this change in documents/services.py;
until it lands, the ingestion benchmark measures it by swapping this function
in (in process, and in a worker started with ``--copy-swap``). Django's
``bulk_create`` sends each vector as 384 decimal numbers that Python formats
(pgvector's ``Vector.to_text``) and PostgreSQL parses back; binary COPY sends
the 1,536 bytes of float32 as they are.
"""

from __future__ import annotations

import numpy as np
from django.db import connection, transaction

from documents.models import Chunk, Document, Sentence

SENTENCE_COLUMNS = (
    ("document_id", "int8"),
    ("ordinal", "int4"),
    ("label", "text"),
    ("text", "text"),
    ("start", "int4"),
    ("end", "int4"),
    ("embedding", "vector"),
)
CHUNK_COLUMNS = (
    ("document_id", "int8"),
    ("first_ordinal", "int4"),
    ("last_ordinal", "int4"),
    ("text", "text"),
    ("embedding", "vector"),
)


def copy_rows(model, columns, rows) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``model``'s table by binary COPY."""
    from pgvector.psycopg.vector import register_vector_info
    from psycopg.types import TypeInfo

    names = ", ".join(connection.ops.quote_name(name) for name, _ in columns)
    with connection.cursor() as cursor:
        raw = cursor.cursor
        # Registered on this cursor only: the rest of the connection keeps Django's text vectors.
        register_vector_info(raw, TypeInfo.fetch(raw.connection, "vector"))
        with raw.copy(f"COPY {model._meta.db_table} ({names}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types([kind for _, kind in columns])
            for row in rows:
                copy.write_row(row)


def swap_in_copy(document_id, expected_hash, sentences, windows, vectors):
    from documents.services import logger, pool

    with transaction.atomic():
        document = Document.objects.select_for_update().filter(pk=document_id).first()
        if document is None or document.pending_hash != expected_hash:
            logger.info("document %s: version %s superseded; discarding", document_id, expected_hash[:8])
            return None
        vectors = np.asarray(vectors, dtype=np.float32)
        Sentence.objects.filter(document_id=document_id).delete()
        Chunk.objects.filter(document_id=document_id).delete()
        copy_rows(
            Sentence,
            SENTENCE_COLUMNS,
            (
                (document_id, s.ordinal, s.label, s.text, s.start, s.end, vector)
                for s, vector in zip(sentences, vectors, strict=True)
            ),
        )
        copy_rows(
            Chunk,
            CHUNK_COLUMNS,
            (
                (
                    document_id,
                    first,
                    last,
                    " ".join(s.text for s in sentences[first : last + 1]),
                    pool(vectors[first : last + 1]).astype(np.float32),
                )
                for first, last in windows
            ),
        )
        staged = document.pending_sentences
        document.text = document.pending_text
        document.content_hash = expected_hash
        document.title = staged.get("title") or document.title
        document.source = staged.get("source") or ""
        document.url = staged.get("url") or ""
        document.published = staged.get("published")
        document.embedding = pool(vectors)
        document.pending_text = ""
        document.pending_hash = ""
        document.pending_sentences = []
        document.status = Document.Status.READY
        document.progress = 100
        document.error = ""
        document.save()
    return document


def install() -> None:
    """Use the COPY version in this process (a benchmark's worker or in-process run)."""
    import documents.services

    documents.services._swap_in = swap_in_copy
