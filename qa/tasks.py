"""Celery entry points of the qa app. Retrieval and generation run on separate
queues ("retrieval", "generation"), so LLM-bound generation can get its own
workers. Each task loads the question by id and calls one service."""

from __future__ import annotations

from celery import shared_task

from qa import services


@shared_task(acks_late=True)
def retrieve_question(question_id: int) -> None:
    if services.question_retrieve(question_id=question_id):
        generate_answer.delay(question_id)


@shared_task(acks_late=True)
def generate_answer(question_id: int) -> None:
    services.question_generate(question_id=question_id)
