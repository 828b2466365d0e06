"""Celery entry points of the review app: load by id, call a service, return."""

from __future__ import annotations

from celery import shared_task

from review.services.evaluation import evaluation_run_execute


@shared_task(acks_late=True)
def run_evaluation(run_id: int) -> str:
    """Run one queued evaluation. Safe to deliver twice: the claim decides, finished cases are kept."""
    run = evaluation_run_execute(run_id=run_id)
    return "skipped" if run is None else run.status
