"""GET /api/questions/{id}/?wait=N: one request that comes back when the answer is stored, no polling."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from qa.models import Question
from qa.services import stage_jobs
from tests.qa.test_api import ask, client_for


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_one_waiting_request_gets_the_answer_a_real_worker_stores(celery_worker_process, analyst, westmere):
    client = client_for(analyst)
    response = ask(client, westmere, "What is the capital of Westmere?")
    assert response.status_code == 202, response.content

    body = client.get(response.json()["status_url"], {"wait": 30}).json()

    assert body["status"] == "done", body
    assert "Arlen" in body["answer"]["text"]


@pytest.mark.django_db(transaction=True)
def test_a_question_that_does_not_end_in_time_is_answered_as_it_stands(analyst, westmere):
    question = ask_queued(analyst, westmere)  # no worker: it stays queued

    body = client_for(analyst).get(f"/api/questions/{question.pk}/", {"wait": 1}).json()

    assert body["status"] == "queued" and body["answer"] is None


@pytest.mark.django_db(transaction=True)
def test_a_question_failing_while_a_request_waits_wakes_it_with_the_reason(analyst, westmere):
    question = ask_queued(analyst, westmere)
    replies = []

    def wait_for_it() -> None:
        try:
            replies.append(client_for(analyst).get(f"/api/questions/{question.pk}/", {"wait": 30}).json())
        finally:
            connection.close()  # this thread's own connection

    waiting = threading.Thread(target=wait_for_it)
    waiting.start()
    time.sleep(0.5)  # most likely listening by now; if not, its first look sees the failure
    Question.objects.filter(pk=question.pk).update(status=Question.Status.FAILED, error="The LLM said no.")
    # Woken by the failure, not by the end of its 30 s: a broken wake-up would still be waiting.
    waiting.join(timeout=20)

    assert not waiting.is_alive(), "the waiting request was not woken when the question failed"
    assert (replies[0]["status"], replies[0]["error"]) == ("failed", "The LLM said no.")


@pytest.mark.django_db
def test_waiting_on_someone_elses_question_or_too_long_is_refused(analyst, outsider, westmere):
    question = ask_queued(analyst, westmere)
    assert client_for(outsider).get(f"/api/questions/{question.pk}/", {"wait": 5}).status_code == 404
    too_long = client_for(analyst).get(f"/api/questions/{question.pk}/", {"wait": 31})
    assert too_long.status_code == 400 and "wait" in too_long.json()


def ask_queued(user, corpus) -> Question:
    from qa import presets
    from qa.services import asking

    question = asking._create_question(
        user=user,
        corpus=corpus,
        text="What is the capital of Westmere?",
        config=presets.get_preset("default"),
        conversation=None,
    )
    assert question.status == Question.Status.QUEUED and stage_jobs.WAITING_STAGE["retrieval"] == ""
    return question
