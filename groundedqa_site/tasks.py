"""The periodic reaper: re-queues jobs whose worker died (Celery beat sends it; see settings).

One path among several: every worker process also reclaims its own queues' jobs
(groundedqa_site/recovery.py), so recovery does not stop with beat.
"""

from __future__ import annotations

from celery import shared_task

from groundedqa_site import recovery


@shared_task(acks_late=True, ignore_result=True)
def reap_jobs() -> dict:
    """Re-queue or fail every job whose lease expired; resend jobs whose retry time came.

    Idempotent: each step is a conditional UPDATE, so two reapers at once (or a
    worker's own reclaim pass) do no harm.
    """
    return recovery.reclaim_expired(queues=None, process=recovery.process_name(), role="reaper (beat)")
