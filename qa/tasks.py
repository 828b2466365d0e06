"""Celery entry points of the qa app: one task per stage, each on its own queue
("retrieval", "generation", "citation", "verification"; CELERY_TASK_ROUTES),
so LLM-bound stages can get their own workers. Each task loads the question
by id, calls one service, and sends the task of the stage that follows."""

from __future__ import annotations

from celery import shared_task

from qa import services
from qa.services import decomposition


@shared_task(acks_late=True)
def retrieve_question(question_id: int) -> None:
    if decomposition.question_decompose(question_id=question_id):
        return  # planned into parts (the agentic preset), each queued as a question of its own
    if services.question_retrieve(question_id=question_id):
        generate_answer.delay(question_id)
    else:
        decomposition.part_settled(question_id=question_id)


@shared_task(acks_late=True)
def generate_answer(question_id: int) -> None:
    _send_next(services.question_stage(question_id=question_id, stage="generation"), question_id)


@shared_task(acks_late=True)
def cite_answer(question_id: int) -> None:
    _send_next(services.question_stage(question_id=question_id, stage="citation"), question_id)


@shared_task(acks_late=True)
def verify_answer(question_id: int) -> None:
    _send_next(services.question_stage(question_id=question_id, stage="verification"), question_id)


@shared_task(acks_late=True)
def combine_answers(question_id: int) -> None:
    decomposition.question_combine(question_id=question_id)


STAGE_TASKS = {"generation": generate_answer, "citation": cite_answer, "verification": verify_answer}


def _send_next(stage: str | None, question_id: int) -> None:
    if stage:
        STAGE_TASKS[stage].delay(question_id)
    else:
        # Answered, failed or not this delivery's turn: a part of a decomposed question is counted
        # once it has ended (its fan-in is idempotent, so a redelivery counts nothing).
        decomposition.part_settled(question_id=question_id)
