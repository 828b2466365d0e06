"""A worker whose pool stopped taking jobs ends itself, so that its supervisor starts it again.

With the file-system broker, Celery runs its synchronous consumer loop and
billiard's classic pool, whose idle pool processes read jobs from one shared
pipe under one lock shared between processes. When a job arrives every idle
process wakes; one reads it and the others queue on the lock, and the next in
line then waits in the read, holding the lock, until the next job comes. A pool
process SIGKILLed there (out of memory, an operator, ``bench launcher_kills``)
never releases it: every other pool process, and each one started in place of
the dead, waits on it for good. The worker's main process lives on, takes
messages and hands them to a pool that never runs them, and nothing a
supervisor watches has died (``bench launcher_kills``: 0 and 4 of 12 questions
answered in two runs of three; py-spy showed the main process in its loop and
the questions' messages in the broker folder). Redis and RabbitMQ run the
asynchronous pool, one pipe per process, and are not affected.

Which pool process held the lock cannot be told from outside, but its effect
can: with acks_late and a prefetch of one message per pool process, a message
handed to the pool is taken by a free process at once, so one that no pool
process has started for ``stuck_after()`` seconds, once a pool process has
died, means the pool is stuck. Only that pool is watched, and only after a
death: on Redis (the asynchronous pool) two QA workers at load 20 had
messages wait over 24 s for pool processes still starting, and a watchdog
without those two conditions ended both (bench faults --services).
The main process then SIGKILLs its pool processes and exits; the launcher (or
the Procfile's supervisor) starts the worker again, with a fresh pool, and the
jobs' leases (groundedqa_site/jobs.py) bring their work back.

Checked from each worker's reclaim timer (groundedqa_site/recovery.py), in the
main process, where Celery keeps the requests it has handed to its pool.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

from django.conf import settings

logger = logging.getLogger("groundedqa.jobs")

# Exit status of a worker that ended itself for a stuck pool (EX_SOFTWARE).
STUCK_EXIT_STATUS = 70

# Request id -> when a check first saw it handed to the pool and not started.
_waiting_since: dict[str, float] = {}
# The pool processes the last check saw; whether one of them has died since the worker started.
_pool_processes: set[int] = set()
_watching = False
_lost_a_pool_process = False


def runs_blocking_pool(consumer) -> bool:
    """Whether this worker's pool is billiard's classic one (the file-system broker's), not the
    asynchronous pool, nor solo or threads."""
    pool = getattr(getattr(consumer, "pool", None), "_pool", None)
    return pool is not None and type(pool).__module__ == "billiard.pool" and type(pool).__name__ == "Pool"


def watch() -> None:
    """Start watching this worker's pool, from its main process once it is ready."""
    global _watching
    _pool_processes.update(_children(os.getpid()))
    _watching = True
    logger.info("pool watchdog on: a stuck pool ends this worker after %.0f s", stuck_after())


def watching() -> bool:
    return _watching


def stuck_after() -> float:
    """Seconds a request may wait for a pool process before the pool counts as stuck: far above
    the milliseconds a free process takes and a replaced pool process's start (seconds on a
    loaded machine). Five leases (60 s) left `make run`'s worker stuck long enough that 2 of 12
    questions were still unanswered after 240 s (bench launcher_kills seed 1, load 20)."""
    return max(20.0, 2.0 * settings.JOB_LEASE_SECONDS)


def unstarted_requests() -> set[str]:
    """Ids of the requests this worker has handed to its pool that no pool process has started."""
    from celery.worker import state

    for _ in range(3):
        try:
            reserved = list(state.reserved_requests)
            active = {request.id for request in list(state.active_requests)}
        except RuntimeError:  # changed size during the copy: the consumer thread is busy; again
            continue
        return {request.id for request in reserved if request.id not in active}
    return set()


def check(now: float | None = None) -> str | None:
    """Note the unstarted requests; the id of one that has waited longer than ``stuck_after()``."""
    global _lost_a_pool_process
    now = time.monotonic() if now is None else now
    alive = set(_children(os.getpid()))
    if _pool_processes - alive:
        _lost_a_pool_process = True  # the lock it may have held stays held for good
    _pool_processes.clear()
    _pool_processes.update(alive)
    waiting = unstarted_requests()
    for request_id in list(_waiting_since):
        if request_id not in waiting:
            del _waiting_since[request_id]
    for request_id in waiting:
        _waiting_since.setdefault(request_id, now)
    if not _lost_a_pool_process:
        return None
    overdue = [r for r, since in _waiting_since.items() if now - since > stuck_after()]
    return overdue[0] if overdue else None


def end_stuck_worker(request_id: str, role: str) -> None:
    """SIGKILL this process's pool processes and exit, for the supervisor to start a new worker."""
    logger.critical(
        "%s: task %s was handed to the pool %.0f s ago and no pool process has started it: a pool "
        "process died holding the pool's job lock (file-system broker). Ending the worker so that "
        "its supervisor starts it again; the leases bring its jobs back.",
        role,
        request_id,
        stuck_after(),
    )
    for handler in logging.getLogger().handlers:
        handler.flush()
    for child in _children(os.getpid()):
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(STUCK_EXIT_STATUS)


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
