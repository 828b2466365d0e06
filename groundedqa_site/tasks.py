"""The periodic reaper: re-queues jobs whose worker died (Celery beat sends it; see settings)."""

from __future__ import annotations

import logging

from celery import shared_task

logger = logging.getLogger("groundedqa.jobs")


@shared_task(acks_late=True, ignore_result=True)
def reap_jobs() -> dict:
    """Re-queue or fail every job whose lease expired; resend jobs whose retry time came.

    Idempotent: each step is a conditional UPDATE, so two reapers at once do no harm.
    """
    from documents.reembedding import reembeddings_reap
    from documents.services import documents_reap
    from qa.services import questions_reap
    from qa.services.decomposition import decompositions_reap
    from review.services.evaluation import evaluation_runs_reap

    report = {
        "questions": questions_reap(),
        "question_parts": decompositions_reap(),
        "documents": documents_reap(),
        "reembeddings": reembeddings_reap(),
        "evaluation_runs": evaluation_runs_reap(),
    }
    if any(report.values()):
        logger.info("reaper: %s", report)
    return report
