"""The pieces of the ingestion benchmark: staging, waiting, and the in-process breakdown.

See bench/ingestion.py for what is measured and why.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import defaultdict
from pathlib import Path

from bench.common import Stopwatch

# (module, function): the service steps, then the parts of the swap-in. A swap-in runs on the
# write-behind thread (documents/services/write_behind.py); with looked-up vectors the encode
# takes no time, so the swap-ins run one after another as they would with nothing to hide behind.
STEPS = (
    ("documents.services.ingestion", "_claim"),
    ("documents.services.ingestion", "_build_rows"),
    ("documents.services.ingestion", "_encode"),
    ("documents.services.ingestion", "_set_progress"),
    ("documents.services.ingestion", "_swap_in"),
    ("documents.copy_rows", "copy_sentences"),
    ("documents.copy_rows", "copy_chunks"),
    ("documents.lexical", "index_document"),
    ("documents.services.ingestion", "_make_live"),
)
SWAP_IN_PARTS = {
    "copy_sentences": "sentence rows + their HNSW inserts",
    "copy_chunks": "chunk rows + their HNSW inserts",
    "index_document": "postings, term statistics, totals",
    "_make_live": "document row made live",
}


def reset_tables() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        # The benchmark server only: every run starts from empty tables and indexes. Postings and
        # term statistics have no foreign keys to cascade through: left behind, they would be
        # found again by the restarted document ids.
        cursor.execute(
            "TRUNCATE documents_document, documents_sentence, documents_chunk, documents_posting,"
            " documents_termstat RESTART IDENTITY CASCADE"
        )


def bench_corpus(name: str):
    from documents.models import Corpus, Team

    team, _ = Team.objects.get_or_create(name="bench")
    corpus, _ = Corpus.objects.get_or_create(name=name, defaults={"team": team})
    return corpus


def stage_all(root: Path, corpus, *, enqueue: bool) -> list[int]:
    """Parse the files and stage each document, as ``manage.py ingest`` does; return document ids."""
    from documents import parsing, services

    ids = []
    for parsed in parsing.iter_analyst_bench_corpus(root):
        ids.append(
            services.document_stage(
                corpus=corpus, parsed=parsed, filename=parsed.external_id, enqueue=enqueue
            ).document.pk
        )
    return ids


def wait_ready(ids: list[int], *, timeout: float = 7200) -> None:
    from documents.models import Document

    deadline = time.monotonic() + timeout
    while True:
        done = Document.objects.filter(pk__in=ids, status__in=["ready", "failed"], pending_hash="").count()
        if done == len(ids):
            failed = Document.objects.filter(pk__in=ids, status="failed").count()
            if failed:
                raise RuntimeError(f"{failed} document(s) failed to ingest")
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {done} of {len(ids)} documents ready after {timeout}s")
        time.sleep(0.05)


def ingest_through_worker(root: Path, n_sentences: int, label: str) -> dict:
    from documents.models import Sentence

    reset_tables()
    corpus = bench_corpus(label)
    with Stopwatch() as total:
        with Stopwatch() as staging:
            ids = stage_all(root, corpus, enqueue=True)
        wait_ready(ids)
    stored = Sentence.objects.filter(document__corpus=corpus).count()
    if stored != n_sentences:
        raise RuntimeError(f"{label}: {stored} sentences stored, expected {n_sentences}")
    return {
        "seconds": total.seconds,
        "stage_seconds": staging.seconds,
        "sentences_per_s": n_sentences / total.seconds,
    }


def backend_cpu_seconds() -> float:
    """CPU seconds used so far by the PostgreSQL backend serving this thread's connection.

    Read from /proc (Linux, a local server: the benchmark's own); nan where it
    cannot be read. On a loaded machine wall seconds measure the wait for a
    core as much as the work; CPU seconds measure the work.
    """
    from django.db import connection

    connection.ensure_connection()
    try:
        with open(f"/proc/{connection.connection.info.backend_pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def timed_steps():
    """Time each ingestion step in this process, on any thread (wrappers only; the code is unchanged):
    {"wall" | "cpu" | "db": {step: seconds}}, cpu the calling thread's CPU, db its backend's.

    Each function is wrapped where its callers look it up: the service module, or
    the module the service calls it through.
    """
    import importlib

    totals: dict[str, dict[str, float]] = {kind: defaultdict(float) for kind in ("wall", "cpu", "db")}
    originals = {(module, name): getattr(importlib.import_module(module), name) for module, name in STEPS}

    def wrap(name, original):
        def timed(*args, **kwargs):
            wall, cpu, db = time.perf_counter(), time.thread_time(), backend_cpu_seconds()
            try:
                return original(*args, **kwargs)
            finally:
                totals["wall"][name] += time.perf_counter() - wall
                totals["cpu"][name] += time.thread_time() - cpu
                totals["db"][name] += backend_cpu_seconds() - db

        return timed

    for (module, name), original in originals.items():
        setattr(importlib.import_module(module), name, wrap(name, original))
    try:
        yield totals
    finally:
        for (module, name), original in originals.items():
            setattr(importlib.import_module(module), name, original)


def embed_in_process(root: Path, embedder, label: str) -> dict:
    from documents import services
    from documents.models import Document

    reset_tables()
    corpus = bench_corpus(label)
    ids = stage_all(root, corpus, enqueue=False)
    hashes = dict(Document.objects.filter(pk__in=ids).values_list("pk", "pending_hash"))
    with timed_steps() as totals, Stopwatch() as total:
        # As the worker does: one call per document id; the first claims the queued
        # documents it can encode with it (INGEST_ENCODE_SENTENCES), the others find them done.
        for document_id in ids:
            services.document_embed(
                document_id=document_id, expected_hash=hashes[document_id], embedder=embedder
            )
    measured = {kind: dict(steps) for kind, steps in totals.items()}
    for steps in measured.values():
        steps["_encode"] -= steps["_set_progress"]  # progress updates happen inside _encode
    return {
        "seconds": total.seconds,
        "steps": measured["wall"],
        "steps_cpu": measured["cpu"],
        "steps_db_cpu": measured["db"],
    }


def encode_per_document(embedder, documents) -> None:
    """Encode as ``document_embed`` did before it grouped documents: each on its own, in slices."""
    from django.conf import settings

    batch = max(settings.QA_EMBEDDING_BATCH_SIZE * 4, 64)
    for _, _, texts in documents:
        for begin in range(0, len(texts), batch):
            embedder.encode(texts[begin : begin + batch])
