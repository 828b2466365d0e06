"""What the operations page shows: queue depths, jobs by state, stuck jobs, live workers.

A job is "stuck" when it is running but its lease has expired: its worker stopped
renewing it (died, froze, lost the database). The reaper and every worker's own reclaim
timer re-queue such jobs within seconds (groundedqa_site/recovery.py); one that stays
listed here means none of them is running, which the page's "Recovery" part shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from documents.models import Document, EmbeddingSpace
from groundedqa_site import jobs, recovery
from groundedqa_site.celery import app
from qa.models import Question
from qa.warmup import warmups
from review.models import EvaluationRun

JOB_KINDS = (
    ("questions", Question),
    ("documents", Document),
    ("re-embeddings", EmbeddingSpace),
    ("evaluation runs", EvaluationRun),
)
RUNNING = {
    Question: "running",
    Document: ("parsing", "embedding"),
    EmbeddingSpace: "running",
    EvaluationRun: "running",
}


@dataclass(frozen=True)
class JobSummary:
    kind: str
    by_status: dict[str, int]
    running_with_lease: int
    stuck: int


@dataclass(frozen=True)
class StuckJob:
    kind: str
    pk: int
    label: str
    status: str
    owner: str
    attempts: int
    lease_expired_at: object


def queue_names() -> list[str]:
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    # Bulk imports are sent to their own queue by name, not by route (documents.services.embed_queue).
    # So are question stages the reaper sends again (groundedqa_site.jobs.REQUEUED_QUEUE).
    return sorted(routed | {settings.CELERY_TASK_DEFAULT_QUEUE, "ingestion-bulk", jobs.REQUEUED_QUEUE})


def queue_depths() -> dict[str, int | None]:
    """Messages waiting per queue (None where the broker could not say)."""
    depths: dict[str, int | None] = {}
    try:
        with app.connection_for_read() as connection:
            channel = connection.default_channel
            for name in queue_names():
                try:
                    depths[name] = channel.queue_declare(queue=name, passive=True).message_count
                except Exception:  # noqa: BLE001 - a queue nobody declared yet, on brokers that mind
                    depths[name] = None
    except Exception:  # noqa: BLE001 - the broker is down: the page still shows the database side
        return dict.fromkeys(queue_names())
    return depths


def _running_filter(model) -> Q:
    running = RUNNING[model]
    return Q(status__in=running) if isinstance(running, tuple) else Q(status=running)


def job_summaries(now=None) -> list[JobSummary]:
    now = now or timezone.now()
    summaries = []
    for kind, model in JOB_KINDS:
        by_status = dict(model.objects.values_list("status").annotate(n=Count("id")).order_by("status"))
        running = model.objects.filter(_running_filter(model))
        live = running.filter(lease_expires_at__gt=now).count()
        summaries.append(JobSummary(kind, by_status, live, running.count() - live))
    return summaries


def stuck_jobs(now=None, limit: int = 50) -> list[StuckJob]:
    now = now or timezone.now()
    stuck = []
    for kind, model in JOB_KINDS:
        rows = model.objects.filter(_running_filter(model)).exclude(lease_expires_at__gt=now)
        for job in rows.order_by("lease_expires_at")[:limit]:
            stuck.append(
                StuckJob(
                    kind,
                    job.pk,
                    str(job)[:120],
                    job.status,
                    job.lease_owner,
                    job.attempts,
                    job.lease_expires_at,
                )
            )
    return stuck[:limit]


def lease_holders(now=None) -> dict[str, int]:
    """Worker processes ("host:pid") holding live leases, with how many jobs each holds."""
    now = now or timezone.now()
    holders: dict[str, int] = {}
    for _, model in JOB_KINDS:
        for owner in model.objects.filter(lease_expires_at__gt=now).values_list("lease_owner", flat=True):
            process = owner.rsplit(":", 1)[0]
            holders[process] = holders.get(process, 0) + 1
    return holders


def worker_replies(timeout: float = 1.0) -> dict[str, str]:
    """Workers answering a ping now (Celery remote control); empty when none answers in time."""
    try:
        replies = app.control.inspect(timeout=timeout).ping() or {}
    except Exception:  # noqa: BLE001 - a broker without remote control, or down
        return {}
    return {name: reply.get("ok", "") for name, reply in sorted(replies.items())}


@dataclass(frozen=True)
class RecoveryState:
    passes: list[recovery.RecoveryPass]  # each reclaiming process's last pass, newest first
    problem: str | None  # what /readyz reports, or None
    oldest_past_lease: StuckJob | None  # the running job whose lease expired longest ago
    past_lease_seconds: float | None


def recovery_state(stuck: list[StuckJob], now=None) -> RecoveryState:
    now = now or timezone.now()
    leased = [job for job in stuck if job.lease_expired_at is not None]
    oldest = min(leased, key=lambda job: job.lease_expired_at, default=None)
    return RecoveryState(
        passes=recovery.recent_passes(),
        problem=recovery.recovery_problem(now),
        oldest_past_lease=oldest,
        past_lease_seconds=(now - oldest.lease_expired_at).total_seconds() if oldest else None,
    )


def snapshot() -> dict:
    now = timezone.now()
    stuck = stuck_jobs(now)
    return {
        "time": now,
        "queues": queue_depths(),
        "jobs": job_summaries(now),
        "stuck": stuck,
        "recovery": recovery_state(stuck, now),
        "launcher": recovery.launcher_children(),
        "lease_holders": lease_holders(now),
        "workers": worker_replies(),
        "models": warmups(),
    }
