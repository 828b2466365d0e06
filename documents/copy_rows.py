"""A document's sentence and chunk rows written by binary COPY, the write half of its swap-in.

``bulk_create`` sends every vector as decimal text that Python formats and
PostgreSQL parses again (384 numbers a row); binary COPY sends the 4-byte
floats as they are. Ids are taken from each table's own sequence before the
COPY, because the postings and stored vectors written next name the rows by
id; a sequence hands each value out once, so concurrent writers never collide.
Runs inside the caller's transaction: a failure leaves no row behind.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import connection
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo

from documents.models import Chunk, Sentence

SENTENCE_COLUMNS = (
    "id", "document_id", "ordinal", "label", "text", "start", '"end"', "role", "section", "page", "embedding"
)  # fmt: skip
SENTENCE_TYPES = (
    "int8",
    "int8",
    "int4",
    "varchar",
    "text",
    "int4",
    "int4",
    "varchar",
    "text",
    "int4",
    "vector",
)
CHUNK_COLUMNS = ("id", "document_id", "first_ordinal", "last_ordinal", "text", "embedding")
CHUNK_TYPES = ("int8", "int8", "int4", "int4", "text", "vector")


def _copy_cursor(cursor):
    """The psycopg cursor under Django's, able to send vectors in binary.

    Registered on this cursor only: on the connection, pgvector's loaders would
    hand every later ORM read a numpy array where Django's VectorField expects text.
    """
    raw = cursor.cursor
    register_vector_info(raw, TypeInfo.fetch(raw.connection, "vector"))
    return raw


def _new_ids(cursor, table: str, n: int) -> list[int]:
    cursor.execute(
        f"SELECT nextval(pg_get_serial_sequence('{table}', 'id')) FROM generate_series(1, %s)", [n]
    )
    return [row[0] for row in cursor.fetchall()]


def _vector(value) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=np.float32)


def _copy(model, columns: Sequence[str], types: Sequence[str], objects: Sequence, values) -> None:
    """Insert unsaved ``objects`` of ``model``, one row each from ``values(pk, obj)``; set their pks."""
    if not objects:
        return
    table = model._meta.db_table
    with connection.cursor() as cursor:
        ids = _new_ids(cursor, table, len(objects))
        statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN WITH (FORMAT BINARY)"
        with _copy_cursor(cursor).copy(statement) as copy:
            copy.set_types(list(types))
            for pk, obj in zip(ids, objects, strict=True):
                copy.write_row(values(pk, obj))
    for pk, obj in zip(ids, objects, strict=True):
        obj.pk = pk
        obj._state.adding = False


def copy_sentences(sentences: Sequence[Sentence]) -> None:
    """Insert ``sentences`` (unsaved) and give each its new pk."""
    _copy(
        Sentence,
        SENTENCE_COLUMNS,
        SENTENCE_TYPES,
        sentences,
        lambda pk, s: (
            pk,
            s.document_id,
            s.ordinal,
            s.label,
            s.text,
            s.start,
            s.end,
            s.role,
            s.section,
            s.page,
            _vector(s.embedding),
        ),  # fmt: skip
    )


def copy_chunks(chunks: Sequence[Chunk]) -> None:
    """Insert ``chunks`` (unsaved) and give each its new pk."""
    _copy(
        Chunk,
        CHUNK_COLUMNS,
        CHUNK_TYPES,
        chunks,
        lambda pk, c: (pk, c.document_id, c.first_ordinal, c.last_ordinal, c.text, _vector(c.embedding)),
    )
