"""Models loaded at start: a process asks one small question of its own before it serves anyone.

Loading the encoder is not enough for a fast first question: the default preset also loads the
passage reader, the answerability and turn models, spaCy's taggers and the sentence splitter,
each on first use, and torch pays its first-inference cost then. Asking a question over a
two-paragraph text held in memory loads every one of them, whatever the preset uses, without
touching the database or the broker. The LLM is never called: a hosted one is a service, and a
local one is loaded by its client when the process builds it.

Each process records its warm-up in the cache (how long it took, its memory before and after), so
``/readyz`` and the operations page show which processes are warm; bench/first_question.py
measures what it saves.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import threading
import time
from datetime import UTC, datetime

from django.core.cache import cache

from documents.parsing.assemble import document_from_text
from qa import presets
from qa.clients import model_clients
from qa.pipeline.flow.factory import build_pipeline
from qa.pipeline.flow.runner import answer_question, rewrite_question
from qa.pipeline.search.memory_index import InMemoryCorpusIndex

log = logging.getLogger("groundedqa.warmup")

WARMUP_KEY = "models:warmup"
WARMUP_LOCK = 0x6771_7761  # pg_advisory_xact_lock key of the record's writers ("gqwa")
# A process's record outlives it by this much at most: a record older than this is not shown.
RECORD_SECONDS = 24 * 3600

WARMUP_TEXT = """Arlen lighthouse

The Arlen lighthouse stands on the northern cape of Westmere. It was built in 1871 by the
harbour engineer Tomas Reil, and its tower is 34 meters tall.

Since 1990 the lighthouse has been a museum. About 12,000 people visit it every year.
"""
WARMUP_QUESTION = "When was the Arlen lighthouse built?"
WARMUP_FOLLOW_UP = "And how tall is it?"


@dataclasses.dataclass(frozen=True)
class Warmup:
    role: str  # "worker" or "web"
    process: str  # host and pid
    preset: str
    seconds: float
    rss_mb_before: float | None
    rss_mb_after: float | None
    finished_at: str  # ISO 8601, UTC
    error: str = ""


def resident_mb() -> float | None:
    """This process's resident memory in MB (Linux /proc); None where there is no /proc."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def ask_the_warmup_question(preset: str | None = None) -> str:
    """One question and one follow-up's rewrite, in memory, with ``preset`` (the default preset when
    None); returns the answer's text, so a caller can see it was answered."""
    clients = dataclasses.replace(model_clients(), llm=None)
    config = presets.get_preset(preset or presets.default_preset())
    document = document_from_text(WARMUP_TEXT, external_id="warm-up", filename="warm-up.txt")
    index = InMemoryCorpusIndex([document], clients.embedder)
    run = answer_question(WARMUP_QUESTION, pipeline=build_pipeline(config, index=index, clients=clients))
    rewrite_question(WARMUP_FOLLOW_UP, [(WARMUP_QUESTION, run.answer.text)])
    return run.answer.text


def warm_up(*, role: str, preset: str | None = None) -> Warmup:
    """Load this process's models by asking the warm-up question; record and return how it went.

    A failure is recorded and logged, not raised: the process still serves, only its first
    question pays for the loading (and fails there, with its own message, if a model is broken)."""
    name = preset or presets.default_preset()
    before, start, error = resident_mb(), time.perf_counter(), ""
    try:
        ask_the_warmup_question(name)
    except Exception as exc:  # noqa: BLE001 - reported on /readyz and in the log; serving goes on
        error = f"{type(exc).__name__}: {exc}"
        log.warning("model warm-up failed: %s", error)
    warmup = Warmup(
        role=role,
        process=f"{socket.gethostname()} pid {os.getpid()}",
        preset=name,
        seconds=round(time.perf_counter() - start, 2),
        rss_mb_before=round(before, 1) if before is not None else None,
        rss_mb_after=round(after, 1) if (after := resident_mb()) is not None else None,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        error=error,
    )
    _record(warmup)
    log.info("models loaded in %.1f s (%s, preset %s)", warmup.seconds, role, name)
    return warmup


def warm_up_in_background(*, role: str, preset: str | None = None) -> threading.Thread:
    """warm_up() on a daemon thread: a process that must answer its supervisor at once (a Celery
    pool process has 4 s to report in, a web process its health checks) starts serving meanwhile;
    a question that arrives first loads what it needs itself."""
    thread = threading.Thread(
        target=_warm_up_and_close, kwargs={"role": role, "preset": preset}, name="model-warmup", daemon=True
    )
    thread.start()
    return thread


def _warm_up_and_close(**kwargs) -> None:
    from django.db import connection

    try:
        warm_up(**kwargs)
    finally:
        # The record was written on this thread's own connection; a forked process must not inherit it.
        connection.close()


def _record(warmup: Warmup) -> None:
    from django.db import connection, transaction

    try:
        # The pool processes of a worker warm up together: without the lock, one's read-modify-write
        # of the shared record would drop another's. The cache is a table of the same database.
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [WARMUP_LOCK])
            records = cache.get(WARMUP_KEY) or {}
            records[warmup.process] = dataclasses.asdict(warmup)
            cache.set(WARMUP_KEY, _fresh(records), timeout=None)
    except Exception as exc:  # noqa: BLE001 - the record is for people to read; the warm-up still counts
        log.warning("model warm-up not recorded: %s", exc)


def _fresh(records: dict) -> dict:
    now = datetime.now(UTC)
    return {
        process: record
        for process, record in records.items()
        if (now - datetime.fromisoformat(record["finished_at"])).total_seconds() < RECORD_SECONDS
    }


def warmups() -> list[dict]:
    """Every process's latest warm-up (a day at most), newest first."""
    records = _fresh(cache.get(WARMUP_KEY) or {})
    return sorted(records.values(), key=lambda r: r["finished_at"], reverse=True)
