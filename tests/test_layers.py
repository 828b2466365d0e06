"""Services queue tasks by name (lint-imports keeps them from importing the tasks that call them)."""

from __future__ import annotations

from documents.services import EMBED_DOCUMENT_TASK
from groundedqa_site.celery import app
from qa.services.stage_jobs import STAGE_TASKS
from review.services.evaluation import RUN_EVALUATION_TASK


def test_every_task_a_service_queues_by_name_is_one_the_worker_registers():
    # Services queue by name (they may not import the tasks that call them); a
    # renamed task would otherwise leave questions queued forever.
    app.loader.import_default_modules()
    for name in (EMBED_DOCUMENT_TASK, *STAGE_TASKS.values(), RUN_EVALUATION_TASK):
        assert name in app.tasks, name
