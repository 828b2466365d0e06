"""Recovery of jobs whose worker died, with no single process it depends on.

A job whose lease expired (groundedqa_site/jobs.py) is put back in its queue by
whichever process passes first:

- the reaper (``groundedqa_site.tasks.reap_jobs``), sent every
  JOB_REAPER_INTERVAL_SECONDS by Celery beat to the maintenance worker, reclaims
  every kind of job;
- every worker also reclaims the jobs of the queues it consumes, every
  JOB_WORKER_RECLAIM_SECONDS, from a thread of its main process (started once the
  worker is ready; groundedqa_site/celery.py says why not in its pool). A QA worker takes
  back questions (and evaluation runs if it serves ``evaluation``), an ingestion
  worker documents and re-embeddings, the maintenance worker everything.

So a dead beat, a dead maintenance worker or a dead QA worker each leave another
process that reclaims. Two passes at once do no harm: each reclaim is a
conditional UPDATE on the lease it read, so only one of them re-queues a job and
sends its task.

Every pass is recorded in the cache table (a database row shared by every
process), per process: ``/readyz`` fails when none has run for
JOB_RECOVERY_STALE_SECONDS, and the operations page lists them.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import import_module

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection
from django.utils import timezone

from groundedqa_site import pool_watchdog

logger = logging.getLogger("groundedqa.jobs")

QA_QUEUES = frozenset({"requeued", "retrieval", "generation", "citation", "verification"})
INGESTION_QUEUES = frozenset({"ingestion", "ingestion-bulk"})
EVALUATION_QUEUES = frozenset({"evaluation"})
# The maintenance worker is the reaper's home: serving its queue means reclaiming every kind.
MAINTENANCE_QUEUE = "maintenance"


@dataclass(frozen=True)
class Reclaimer:
    kind: str
    queues: frozenset[str]  # a worker consuming any of these reclaims this kind
    function: str  # "module:function", imported when first run: this module is imported by celery.py


RECLAIMERS = (
    Reclaimer("questions", QA_QUEUES, "qa.services:questions_reap"),
    Reclaimer("question_parts", QA_QUEUES, "qa.services.decomposition:decompositions_reap"),
    Reclaimer("documents", INGESTION_QUEUES, "documents.services:documents_reap"),
    Reclaimer("reembeddings", INGESTION_QUEUES, "documents.reembedding:reembeddings_reap"),
    Reclaimer("evaluation_runs", EVALUATION_QUEUES, "review.services.evaluation:evaluation_runs_reap"),
)


def reclaimers_for(queues: frozenset[str] | None) -> list[Reclaimer]:
    """The kinds of jobs a process consuming ``queues`` reclaims (None: every kind, as the reaper)."""
    if queues is None or MAINTENANCE_QUEUE in queues:
        return list(RECLAIMERS)
    return [r for r in RECLAIMERS if r.queues & queues]


def reclaim_expired(*, queues: frozenset[str] | None, process: str, role: str) -> dict[str, int]:
    """One pass: re-queue (or fail, after too many attempts) the expired jobs of ``queues``' kinds,
    resend due ones, and record the pass as ``process`` (shown with ``role``)."""
    report = {}
    for reclaimer in reclaimers_for(queues):
        module, name = reclaimer.function.split(":")
        report[reclaimer.kind] = getattr(import_module(module), name)()
    try:
        record_pass(process=process, role=role, reclaimed=sum(report.values()))
    except DatabaseError as exc:  # the jobs are reclaimed all the same; only /readyz will not know
        logger.warning(
            "%s: could not record the reclaim pass (%s); was `manage.py createcachetable` run?", role, exc
        )
    if any(report.values()):
        logger.info("%s (%s) reclaimed: %s", role, process, report)
    return report


# --- the record of passes ------------------------------------------------------

PASSES_KEY = "jobs:recovery-passes"
# A process gone this long (restarted under another pid, scaled down) leaves the list.
FORGET_AFTER = timedelta(days=1)


@dataclass(frozen=True)
class RecoveryPass:
    process: str  # "host:pid"
    role: str  # "reaper (beat)" or "worker qa@host"
    at: datetime
    reclaimed: int  # jobs re-queued, failed or resent by this process's last pass


def record_pass(*, process: str, role: str, reclaimed: int, now: datetime | None = None) -> None:
    """Note that ``process`` has just run a pass.

    Read, modify, write: two processes recording at the same moment may drop one
    of the two entries, which its next pass (seconds later) writes again; the
    staleness check reads the newest entry, which the later writer always keeps.
    """
    now = now or timezone.now()
    passes = {key: entry for key, entry in (cache.get(PASSES_KEY) or {}).items() if _fresh(entry, now)}
    # By role too: a solo maintenance worker runs both its own timer and beat's reaper task.
    passes[f"{role} {process}"] = {
        "process": process,
        "role": role,
        "at": now.isoformat(),
        "reclaimed": reclaimed,
    }
    cache.set(PASSES_KEY, passes, timeout=None)


def _fresh(entry: dict, now: datetime) -> bool:
    return now - datetime.fromisoformat(entry["at"]) < FORGET_AFTER


def recent_passes() -> list[RecoveryPass]:
    """Each process's last pass, newest first."""
    passes = [
        RecoveryPass(entry["process"], entry["role"], datetime.fromisoformat(entry["at"]), entry["reclaimed"])
        for entry in (cache.get(PASSES_KEY) or {}).values()
    ]
    return sorted(passes, key=lambda p: p.at, reverse=True)


def recovery_problem(now: datetime | None = None) -> str | None:
    """Why jobs of a dead worker would not come back now, or None when a pass ran recently."""
    now = now or timezone.now()
    passes = recent_passes()
    if not passes:
        return (
            "no reaper pass or lease reclaim has run yet: jobs whose worker dies will not be re-queued "
            "until a Celery worker or beat is running"
        )
    latest = passes[0]
    age = (now - latest.at).total_seconds()
    if age > settings.JOB_RECOVERY_STALE_SECONDS:
        return (
            f"no reaper pass or lease reclaim for {age:.0f} s (limit JOB_RECOVERY_STALE_SECONDS="
            f"{settings.JOB_RECOVERY_STALE_SECONDS}; last by {latest.role} on {latest.process}): "
            "jobs whose worker dies are not being re-queued; are the workers and beat running?"
        )
    return None


# What `make run`'s launcher supervises (groundedqa_site/launcher.py): each child, alive or waiting
# to be started again, and its restarts; absent when the site runs under another supervisor.
LAUNCHER_CHILDREN_KEY = "launcher:children"


def launcher_children() -> dict | None:
    return cache.get(LAUNCHER_CHILDREN_KEY)


# --- each worker process's own timer ------------------------------------------

_reclaimer_thread: threading.Thread | None = None


def process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def start_worker_reclaimer(*, queues: frozenset[str], node: str) -> threading.Thread | None:
    """Start this worker process's reclaim timer (once per process); None when it has nothing to
    reclaim (a worker of queues no job kind lives on)."""
    global _reclaimer_thread
    if not reclaimers_for(queues) or (_reclaimer_thread is not None and _reclaimer_thread.is_alive()):
        return None
    role = f"worker {node}" if node else "worker"
    thread = threading.Thread(
        target=_reclaim_forever, args=(queues, role), name="lease-reclaimer", daemon=True
    )
    thread.start()
    _reclaimer_thread = thread
    return thread


def _reclaim_forever(queues: frozenset[str], role: str) -> None:
    interval = settings.JOB_WORKER_RECLAIM_SECONDS
    # The jitter spreads the passes of workers started together.
    wait = interval * random.uniform(0.8, 1.2)
    while True:
        time.sleep(wait)
        try:
            stuck = pool_watchdog.check() if pool_watchdog.watching() else None
            if stuck is not None:
                pool_watchdog.end_stuck_worker(stuck, role)
            reclaim_expired(queues=queues, process=process_name(), role=role)
        except Exception as exc:  # noqa: BLE001 - this thread is the process's recovery: it must outlive any one failed pass (database restarting, broker down)
            logger.warning("%s: lease reclaim pass failed (%s); trying again", role, exc)
        finally:
            # A connection held between passes would break with a database restart and be
            # inherited by any process forked meanwhile; a fresh one per pass costs milliseconds.
            connection.close()
        wait = interval * random.uniform(0.8, 1.2)
