"""The HNSW indexes' build parameters, and rebuilding them in place for a large corpus.

The migration builds both indexes with m=16, ef_construction=64: every
sentence a worker makes live is inserted into the graph, and a denser graph
costs several times more per insert (bench/README.md, "HNSW choice"). A corpus
past a few hundred thousand sentences, loaded in bulk, gets its recall back
with one rebuild at m=32, ef_construction=256 (recall@10 0.96 at 1M with
``QA_HNSW_EF_SEARCH`` 400, against 0.87 for the migration's index). The new
index is built next to the old one (CREATE INDEX CONCURRENTLY: searches and
ingestion go on) and takes its name in one short transaction.
"""

from __future__ import annotations

import time

from django.db import connection, transaction

from documents.errors import Invalid

INDEXES = {
    "sentence": ("sentence_embedding_hnsw", "documents_sentence"),
    "chunk": ("chunk_embedding_hnsw", "documents_chunk"),
}
PGVECTOR_DEFAULTS = (16, 64)


def index_parameters(unit: str) -> tuple[int, int]:
    """(m, ef_construction) the unit's index was built with."""
    name, _ = INDEXES[unit]
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [name])
        row = cursor.fetchone()
    if row is None:
        raise Invalid(f"the {unit} index {name} does not exist; run manage.py migrate")
    options = dict(option.split("=", 1) for option in row[0] or [])
    return int(options.get("m", PGVECTOR_DEFAULTS[0])), int(
        options.get("ef_construction", PGVECTOR_DEFAULTS[1])
    )


def hnsw_rebuild(*, unit: str, m: int, ef_construction: int, maintenance_work_mem: str = "2GB") -> float:
    """Rebuild the unit's HNSW index with these parameters; return the seconds the build took.

    ``maintenance_work_mem`` should hold the whole graph (about 3.5 GB at 1M sentences
    and m=32); pgvector says so in the server log when it does not, and slows down.
    """
    if unit not in INDEXES:
        raise Invalid(f"unit must be one of {', '.join(INDEXES)}, not {unit!r}")
    if not 2 <= m <= 100:
        raise Invalid(f"m must be between 2 and 100 (pgvector's range), not {m}")
    if not 2 * m <= ef_construction <= 1000:
        raise Invalid(f"ef_construction must be between 2 * m ({2 * m}) and 1000, not {ef_construction}")
    name, table = INDEXES[unit]
    building = f"{name}_rebuild"
    with connection.cursor() as cursor:
        # An interrupted rebuild leaves an invalid index behind under the temporary name.
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {building}")
        cursor.execute("SELECT set_config('maintenance_work_mem', %s, false)", [maintenance_work_mem])
        started = time.perf_counter()
        cursor.execute(
            f"CREATE INDEX CONCURRENTLY {building} ON {table} USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
        )
        seconds = time.perf_counter() - started
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name}")
        cursor.execute(f"ALTER INDEX {building} RENAME TO {name}")
    return seconds
