"""Celery entry points of the qa app: one task per stage, each on its own queue
("retrieval", "generation", "citation", "verification"; CELERY_TASK_ROUTES),
so LLM-bound stages can get their own workers. Each task loads the question
by id and calls one service, which also runs the stages after it that this
worker serves; the task sends the task of the first stage left for another
worker."""

from __future__ import annotations

from celery import shared_task

from qa import services
from qa.services import decomposition


@shared_task(acks_late=True)
def retrieve_question(question_id: int) -> None:
    if decomposition.question_decompose(question_id=question_id):
        return  # planned into parts (the agentic preset), each queued as a question of its own
    _run_from("", question_id)


@shared_task(acks_late=True)
def generate_answer(question_id: int) -> None:
    _run_from("generation", question_id)


@shared_task(acks_late=True)
def cite_answer(question_id: int) -> None:
    _run_from("citation", question_id)


@shared_task(acks_late=True)
def verify_answer(question_id: int) -> None:
    _run_from("verification", question_id)


@shared_task(acks_late=True)
def combine_answers(question_id: int) -> None:
    decomposition.question_combine(question_id=question_id)


STAGE_TASKS = {"generation": generate_answer, "citation": cite_answer, "verification": verify_answer}


def _run_from(waiting: str, question_id: int) -> None:
    stage = services.question_stages_run(question_id=question_id, waiting=waiting)
    if stage:
        STAGE_TASKS[stage].delay(question_id)
    else:
        # Answered, failed or not this delivery's turn: a part of a decomposed question is counted
        # once it has ended (its fan-in is idempotent, so a redelivery counts nothing).
        decomposition.part_settled(question_id=question_id)
