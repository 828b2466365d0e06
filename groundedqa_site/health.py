"""Health and readiness endpoints for a load balancer or an orchestrator.

``/healthz`` says the web process answers (no I/O: a stuck database must not get a
healthy process restarted). ``/readyz`` says this process can serve requests now:
the database answers and has every migration applied, the broker takes messages, and
jobs whose worker dies are being recovered: a reaper pass or a worker's lease reclaim ran
within JOB_RECOVERY_STALE_SECONDS (groundedqa_site/recovery.py).
Both are public and return JSON; readiness failures name the part that failed.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from groundedqa_site import recovery


@never_cache
@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


def _check_database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        return f"database unreachable: {exc}".strip()
    if pending:
        return f"database has {len(pending)} unapplied migration(s): run `python manage.py migrate`"
    return None


def _check_broker() -> str | None:
    if settings.CELERY_BROKER_URL == "filesystem://":
        queue = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        if not os.access(queue, os.W_OK):
            return f"broker folder {queue} is missing or not writable"
        return None
    from groundedqa_site.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001 - any transport error means "not ready", with its text
        return f"broker unreachable: {exc}"
    return None


def _check_job_recovery() -> str | None:
    try:
        return recovery.recovery_problem()
    except DatabaseError as exc:  # the cache table lives in the database, reported above
        return f"last recovery pass unknown: {exc}".strip()


@never_cache
@require_GET
def readyz(request):
    failures = {
        name: problem
        for name, check in (
            ("database", _check_database),
            ("broker", _check_broker),
            ("job recovery", _check_job_recovery),
        )
        if (problem := check())
    }
    if failures:
        return JsonResponse({"status": "not ready", "failures": failures}, status=503)
    return JsonResponse({"status": "ready"})
