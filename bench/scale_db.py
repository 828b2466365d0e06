"""Scaled corpora loaded into the app's schema, one database per size on the benchmark server.

``bench_scale_<size>`` is migrated like the app's database and holds one corpus
("scale-<size>") of ready documents, sentences and chunks with their vectors,
written by binary COPY with the HNSW indexes dropped, then the indexes built
(timed). A marker table remembers what was loaded, so the dense and hybrid
benchmarks and later runs reuse a load (a 1M load with its index build takes
the better part of an hour on 2 cores).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import psycopg

from bench.common import BENCH_VAR_DIR, REPO, Stopwatch, bench_environment, log
from bench.corpus import VECTOR_NOISE, ScaledCorpus, chunk_rows

LOAD_VERSION = 2  # 2: BM25 postings written too (documents/lexical.py)
# The HNSW indexes the app's migration creates (documents/models.py).
APP_INDEXES = {
    "sentence_embedding_hnsw": ("documents_sentence", 16, 64),
    "chunk_embedding_hnsw": ("documents_chunk", 16, 64),
}
# Index builds: all memory the graph needs (about 2.5 GB at 1M x 384 with m=16, 3.5 GB with m=32:
# pgvector says so in a NOTICE when the graph outgrows it, and the build then slows several-fold),
# and two parallel workers beside the leader (a build is CPU-bound; the leader mostly waits).
BUILD_SETTINGS = {"maintenance_work_mem": "6GB", "max_parallel_maintenance_workers": 2}


def database_name(size: int) -> str:
    return f"bench_scale_{size}"


def connect(dbname: str = "postgres", *, vectors: bool = True, **kwargs) -> psycopg.Connection:
    from groundedqa_site import embedded_db

    info = embedded_db.ensure_running(BENCH_VAR_DIR / "pg")
    # prepare_threshold=None: a statement psycopg prepared keeps the plan made under the settings of
    # its first runs (PostgreSQL does not replan when enable_indexscan or hnsw.ef_search change), so
    # HNSW queries after the exact scan would silently reuse the sequential-scan plan.
    conn = psycopg.connect(
        host=info["HOST"],
        port=info["PORT"],
        user=info["USER"],
        dbname=dbname,
        autocommit=True,
        prepare_threshold=None,
        **kwargs,
    )
    if vectors:
        from pgvector.psycopg import register_vector

        register_vector(conn)
    return conn


def ensure_database(size: int) -> None:
    name = database_name(size)
    # No vector type needed here: on a fresh benchmark server the postgres database has none yet.
    with connect(vectors=False) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')
    with connect(name, vectors=False) as conn:
        # Created before migrate, so that register_vector finds the type whatever migrate does.
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity=0"],
        cwd=REPO,
        check=True,
        env=bench_environment(GROUNDEDQA_DATABASE_NAME=name),
    )


def fingerprint(corpus: ScaledCorpus, seed: int, vectors: str = "real") -> str:
    stamp = {"size": corpus.size, "seed": seed, "noise": VECTOR_NOISE, "version": LOAD_VERSION}
    # Another source of vectors is another load: the dense benchmark must never measure hashed ones.
    return json.dumps(stamp if vectors == "real" else {**stamp, "vectors": vectors})


def loaded(size: int, expected: str) -> bool:
    with connect(database_name(size)) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_state (key text PRIMARY KEY, value text)")
        row = conn.execute("SELECT value FROM bench_state WHERE key = 'corpus'").fetchone()
        return bool(row and row[0] == expected)


def load(
    corpus: ScaledCorpus,
    *,
    seed: int = 0,
    vectors: str = "real",
    sentence_index: tuple[int, int] | None = None,
) -> dict:
    """Load ``corpus`` into its database unless it is there already; return the timings.

    ``vectors`` names where ``corpus.vectors`` came from when they are not the real encoder's.
    ``sentence_index`` = (m, ef_construction) of the sentence HNSW index when not the app's; a
    reused load whose index was built with other parameters gets only its index rebuilt.
    """
    size, stamp = corpus.size, fingerprint(corpus, seed, vectors)
    wanted = sentence_index or APP_INDEXES["sentence_embedding_hnsw"][1:]
    ensure_database(size)
    if loaded(size, stamp):
        log(f"scale {size:,}: already loaded")
        timings = json.loads(_state(size, "load_timings") or "{}")
        with connect(database_name(size)) as conn:
            if index_parameters(conn, "sentence_embedding_hnsw") != wanted:
                timings["sentence_embedding_hnsw_build_seconds"] = build_hnsw(
                    conn, "sentence_embedding_hnsw", "documents_sentence", *wanted
                )
                conn.execute(
                    "UPDATE bench_state SET value = %s WHERE key = 'load_timings'", [json.dumps(timings)]
                )
        return timings
    timings = {}
    with connect(database_name(size)) as conn:
        conn.execute("DELETE FROM bench_state")
        conn.execute("TRUNCATE documents_corpus, documents_team RESTART IDENTITY CASCADE")
        for name in APP_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
        with Stopwatch() as copy_time:
            _copy_rows(conn, corpus)
        timings["copy_seconds"] = copy_time.seconds
        timings["lexical_index_seconds"] = _index_postings(size)
        conn.execute("ANALYZE")
        for name, (table, m, ef_construction) in APP_INDEXES.items():
            if name == "sentence_embedding_hnsw":
                m, ef_construction = wanted
            timings[f"{name}_build_seconds"] = build_hnsw(conn, name, table, m, ef_construction)
        conn.execute("INSERT INTO bench_state VALUES ('load_timings', %s)", [json.dumps(timings)])
        conn.execute("INSERT INTO bench_state VALUES ('corpus', %s)", [stamp])
    return timings


def _index_postings(size: int) -> float:
    """Write the BM25 postings of every loaded document, as ingestion does (documents/lexical.py)."""
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from documents.lexical import index_existing_documents; print(index_existing_documents())",
        ],
        cwd=REPO,
        check=True,
        env=bench_environment(GROUNDEDQA_DATABASE_NAME=database_name(size)),
    )
    seconds = time.perf_counter() - start
    log(f"scale {size:,}: BM25 postings written in {seconds:.0f}s")
    return seconds


def _state(size: int, key: str) -> str | None:
    with connect(database_name(size)) as conn:
        row = conn.execute("SELECT value FROM bench_state WHERE key = %s", [key]).fetchone()
    return row[0] if row else None


def index_parameters(conn: psycopg.Connection, name: str) -> tuple[int, int] | None:
    """(m, ef_construction) of an HNSW index as built, None when it does not exist."""
    row = conn.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [name]).fetchone()
    if not row:
        return None
    options = dict(option.split("=", 1) for option in row[0] or [])
    return int(options.get("m", 16)), int(options.get("ef_construction", 64))  # pgvector's defaults


def build_hnsw(conn: psycopg.Connection, name: str, table: str, m: int, ef_construction: int) -> float:
    """(Re)build one cosine HNSW index and return the seconds it took."""
    conn.execute(f"DROP INDEX IF EXISTS {name}")
    for setting, value in BUILD_SETTINGS.items():
        conn.execute(f"SET {setting} = '{value}'")
    log(f"building {name} on {table} (m={m}, ef_construction={ef_construction})")
    conn.add_notice_handler(lambda notice: log(f"PostgreSQL: {notice.message_primary}"))
    start = time.perf_counter()
    conn.execute(
        f"CREATE INDEX {name} ON {table} USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )
    seconds = time.perf_counter() - start
    log(f"built {name} in {seconds:.0f}s")
    return seconds


def _copy_rows(conn: psycopg.Connection, corpus: ScaledCorpus) -> None:
    now = time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime())
    conn.execute("INSERT INTO documents_team (id, name) VALUES (1, 'bench')")
    conn.execute(
        "INSERT INTO documents_corpus (id, name, description, team_id, created_at, version)"
        " VALUES (1, %s, '', 1, %s, 0)",
        [f"scale-{corpus.size}", now],
    )
    document_columns = (
        "id, corpus_id, external_id, title, source, url, filename, text, content_hash, pending_text, "
        "pending_hash, pending_sentences, embedding, status, progress, error, created_at, updated_at, "
        "ready_version, bulk, lease_owner, attempts"
    )
    row = 0
    chunk_id = 0
    with conn.cursor() as cur:
        with cur.copy(f"COPY documents_document ({document_columns}) FROM STDIN") as copy:
            for doc_id, (external_id, title, texts) in enumerate(corpus.documents, 1):
                vectors = corpus.vectors[row : row + len(texts)]
                row += len(texts)
                mean = vectors.mean(axis=0)
                copy.write_row(
                    (
                        doc_id,
                        1,
                        external_id,
                        title[:500],
                        "bench",
                        "",
                        external_id[:500],
                        " ".join(texts),
                        "bench",
                        "",
                        "",
                        "[]",
                        mean / np.linalg.norm(mean),
                        "ready",
                        100,
                        "",
                        now,
                        now,
                        0,
                        False,
                        "",
                        0,
                    )
                )
        row = 0
        sentence_columns = 'id, document_id, ordinal, label, text, start, "end", embedding'
        with cur.copy(
            f"COPY documents_sentence ({sentence_columns}) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int8", "int8", "int4", "varchar", "text", "int4", "int4", "vector"])
            for doc_id, (_, _, texts) in enumerate(corpus.documents, 1):
                offset = 0
                for ordinal, text in enumerate(texts):
                    row += 1
                    copy.write_row(
                        (
                            row,
                            doc_id,
                            ordinal,
                            str(ordinal + 1),
                            text,
                            offset,
                            offset + len(text),
                            corpus.vectors[row - 1],
                        )
                    )
                    offset += len(text) + 1
        row = 0
        with cur.copy(
            "COPY documents_chunk (id, document_id, first_ordinal, last_ordinal, text, embedding) "
            "FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int8", "int8", "int4", "int4", "text", "vector"])
            for doc_id, (_, _, texts) in enumerate(corpus.documents, 1):
                for first, last, text, vector in chunk_rows(texts, corpus.vectors[row : row + len(texts)]):
                    chunk_id += 1
                    copy.write_row((chunk_id, doc_id, first, last, text, vector.astype(np.float32)))
                row += len(texts)
    for table in (
        "documents_team",
        "documents_corpus",
        "documents_document",
        "documents_sentence",
        "documents_chunk",
    ):
        conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    log(f"loaded {row:,} sentences, {chunk_id:,} chunks, {len(corpus.documents):,} documents")
