"""Leases on claimed jobs: what lets a job outlive the worker that was running it.

Every job (a question's stage, a document's embedding, an evaluation run) is a
row claimed with one conditional UPDATE that also writes a lease: an owner
token and an expiry. While the job runs, ``heartbeat`` renews the expiry from a
thread of the worker process; if the process dies (SIGKILL, out of memory,
machine restart) the renewals stop with it. The reaper (``groundedqa_site.
tasks.reap_jobs``, run by Celery beat, or any worker's own reclaim timer: groundedqa_site/
recovery.py) then finds the expired lease, puts the
job back in its queue, and sends its task again. Every write that ends a job
is fenced on the owner token, so a worker that lost its lease (frozen, cut off
from the database) and comes back cannot overwrite the job's new owner.

The claim also counts attempts: a job that keeps killing its worker ends
failed with a readable error after ``JOB_MAX_ATTEMPTS`` claims instead of
looping forever.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import uuid
from collections.abc import Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, models
from django.utils import timezone

from groundedqa_site import broker

logger = logging.getLogger("groundedqa.jobs")

# Errors after which a later attempt may well succeed. LLM errors carry their own
# ``retryable`` flag (qa.pipeline.core.llm.LLMError) and are judged by ``is_transient``.
TRANSIENT_DATABASE_ERRORS = (OperationalError, InterfaceError)


class LeasedJob(models.Model):
    """The columns every claimable job carries."""

    # "host:pid:token" of the worker running it, renewed by its heartbeat until lease_expires_at.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)  # claims without finishing
    resend_at = models.DateTimeField(null=True, blank=True)  # a queued job's task is (re)sent then

    class Meta:
        abstract = True


RELEASED = {"lease_owner": "", "lease_expires_at": None}
# Question stages the reaper sends again after their worker died go to a queue of their
# own, which every QA worker consumes and takes before its other queues whenever it has
# a free process (groundedqa_site/broker.py), so they run next instead of waiting behind
# every question asked since, which were all asked after them.
REQUEUED_QUEUE = broker.REQUEUED_QUEUE


def new_owner() -> str:
    """A lease owner token that also says which worker process holds it (shown in traces and logs)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lease_until(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) + timedelta(seconds=settings.JOB_LEASE_SECONDS)


def lease_taken(owner: str, now: datetime) -> dict:
    """The columns a claim's conditional UPDATE sets besides the job's own status: the lease
    to ``owner``, one more attempt, and no pending resend."""
    return {
        "lease_owner": owner,
        "lease_expires_at": lease_until(now),
        "attempts": models.F("attempts") + 1,
        "resend_at": None,
    }


def retry_at(attempt: int, now: datetime | None = None) -> datetime:
    """When a job that failed transiently on its ``attempt``-th try runs again (exponential, jittered)."""
    base = settings.JOB_RETRY_BACKOFF_SECONDS * 2 ** max(attempt - 1, 0)
    return (now or timezone.now()) + timedelta(seconds=min(base, 600) * random.uniform(0.8, 1.2))


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TRANSIENT_DATABASE_ERRORS):
        return True
    return bool(getattr(exc, "retryable", False))


def attempts_exhausted(attempts: int) -> bool:
    return attempts >= settings.JOB_MAX_ATTEMPTS


def reset_connection_after(exc: BaseException) -> None:
    """After a lost database connection, drop it so the next query opens a fresh one."""
    if isinstance(exc, TRANSIENT_DATABASE_ERRORS):
        try:
            connection.close()
        except DatabaseError:
            pass


@contextmanager
def heartbeat(model, pk: int | Sequence[int], owner: str):
    """Renew the lease of ``model`` row ``pk`` (or rows: one owner may hold several) held by
    ``owner`` until the block ends.

    The renewals run on a thread of their own, with their own database
    connection, so a stage busy in C code (an encoder, a BM25 build) still
    renews. If a renewal finds the lease taken over, it stops: the stage's own
    fenced writes will then be refused.
    """
    stop = threading.Event()
    pks = [pk] if isinstance(pk, int) else list(pk)

    def renew() -> None:
        try:
            while not stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    held = model.objects.filter(pk__in=pks, lease_owner=owner).update(
                        lease_expires_at=lease_until()
                    )
                except DatabaseError as exc:
                    logger.warning("%s %s: lease renewal failed (%s); retrying", model.__name__, pk, exc)
                    reset_connection_after(exc)
                    continue
                if not held:
                    logger.warning("%s %s: lease of %s was taken over or ended", model.__name__, pk, owner)
                    return
        finally:
            connection.close()

    thread = threading.Thread(target=renew, name=f"lease-{model.__name__}-{pks[0]}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=settings.JOB_LEASE_SECONDS)


# The queues this process's Celery worker consumes (its ``-Q``), recorded when the worker starts
# (groundedqa_site.celery) and inherited by the processes its pool forks; empty in any other
# process (the web server, a shell, a test's own process).
_worker_queues: frozenset[str] = frozenset()


def serve_queues(queues: set[str]) -> None:
    global _worker_queues
    _worker_queues = frozenset(queues)


def serving_queues() -> frozenset[str]:
    return _worker_queues


def runs_here(task_name: str) -> bool:
    """Whether this process belongs to a worker that consumes the queue ``task_name`` is routed to.

    Then running the task here, instead of sending it, only picks which of the
    processes a message could have reached runs it: a stage meant for workers of
    its own (an LLM-bound one, deploy/Procfile) is still sent to them.
    """
    if not _worker_queues:
        return False
    return current_app.amqp.router.route({}, task_name)["queue"].name in _worker_queues


def enqueue(task_name: str, *args, queue: str | None = None) -> None:
    """Send a task by its registered name (the name CELERY_TASK_ROUTES routes by, unless ``queue``).

    Tasks are entry points that call services, as views do; a service that
    imported its tasks module to queue one would make the two import each
    other. Call from ``transaction.on_commit`` so the worker finds the rows.
    tests/test_layers.py checks that every name a service queues is a task.
    """
    options = {"queue": queue} if queue else {}
    current_app.send_task(task_name, args=list(args), **options)
