"""Questions survive their worker: leases, the reaper, retries of transient failures, fenced writes.

Real rows and, where a task must run, the real Celery worker process. "A worker
died" is staged the way it looks in the database: the stage claimed, its lease
expired, nobody finishing it.
"""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from bench.cluster import use_broker
from groundedqa_site.broker import folder_options
from qa import clients, presets, services
from qa.models import Answer, Question
from qa.pipeline.flow.run import load_run
from qa.services import asking, stage_jobs
from tests.conftest import wait_for
from tests.qa.pipeline.test_llm_clients import FakeChatServer, openai_client
from tests.qa.test_api import client_for

CAPITAL = "What is the capital of Westmere?"
STAGES = ["retrieval", "generation", "citation", "verification"]


def ask_in_process(user, corpus, text=CAPITAL, preset="default") -> Question:
    config = presets.get_preset(preset)
    return asking._create_question(user=user, corpus=corpus, text=text, config=config, conversation=None)


def die_during(question: Question, stage: str, *, attempts: int = 1) -> None:
    """Leave ``question`` as a worker killed in ``stage`` leaves it: claimed, lease run out."""
    waiting = stage_jobs.WAITING_STAGE[stage]
    assert stage_jobs._claim(question.pk, waiting_stage=waiting, stage=stage) is not None
    Question.objects.filter(pk=question.pk).update(
        attempts=attempts, lease_expires_at=timezone.now() - timedelta(seconds=1)
    )


def api_status(client, question: Question) -> dict:
    return client.get(f"/api/questions/{question.pk}/").json()


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
@pytest.mark.parametrize("stage", ["retrieval", "generation", "citation", "verification"])
def test_a_stage_whose_worker_died_is_picked_up_again_and_answered_once(
    celery_worker_process, analyst, westmere, stage
):
    question = ask_in_process(analyst, westmere)
    if stage != "retrieval":
        advance_to(question, stage)
    die_during(question, stage)
    client = client_for(analyst)
    assert api_status(client, question)["status"] == "running"

    services.questions_reap()

    body = wait_for(
        lambda: (b := api_status(client, question))["status"] in ("done", "failed") and b,
        message="the re-queued question to be answered",
    )
    assert body["status"] == "done", body["error"]
    assert "Arlen" in body["answer"]["text"]
    assert Answer.objects.filter(question=question).count() == 1
    # The trace names the worker process that ran each stage: from the dead one's on, the worker's.
    in_worker = [
        r["stage"]
        for r in body["trace"]["stage_runs"]
        if r["worker"].endswith(f":{celery_worker_process.pid}")
    ]
    assert in_worker == STAGES[STAGES.index(stage) :]


@pytest.mark.django_db
def test_a_question_that_keeps_killing_its_worker_ends_failed_with_a_reason(analyst, westmere):
    question = ask_in_process(analyst, westmere)
    die_during(question, "retrieval", attempts=3)

    services.questions_reap()

    body = api_status(client_for(analyst), question)
    assert body["status"] == "failed"
    assert "stopped 3 times" in body["error"] and "Ask again" in body["error"]
    assert body["attempts"] == 3


@pytest.mark.django_db
def test_a_running_stage_with_a_live_lease_is_left_alone(analyst, westmere):
    question = ask_in_process(analyst, westmere)
    assert stage_jobs._claim(question.pk, waiting_stage="", stage="retrieval") is not None

    assert services.questions_reap() == 0

    question.refresh_from_db()
    assert (question.status, question.stage) == (Question.Status.RUNNING, "retrieval")


def sent_messages(folder) -> list[tuple[str, str, int]]:
    """(queue, task, question id) of every message waiting in a file-system broker folder, oldest first."""
    sent = []
    for path in sorted((folder / "queue").glob("*.msg")):
        payload = json.loads(path.read_text())
        args, _, _ = json.loads(base64.b64decode(payload["body"]))
        sent.append((path.name.split(".")[-2], payload["headers"]["task"], args[0]))
    return sent


@pytest.mark.django_db
def test_a_stage_whose_worker_died_goes_ahead_of_questions_waiting_in_line(analyst, westmere, tmp_path):
    """Only a stage whose worker died takes the queue every worker reads first.

    A question still waiting for its first stage (its message most likely still
    in line) gets one copy at the back of its own queue, in case the message was
    lost; either gets its next copy only after it has waited as long again: a
    backlog does not bury the killed stage under copies of itself.
    """
    in_line = ask_in_process(analyst, westmere)
    asked = timezone.now() - timedelta(minutes=5)
    Question.objects.filter(pk=in_line.pk).update(created_at=asked, resend_at=asked + timedelta(seconds=12))
    killed = ask_in_process(analyst, westmere, text="How many staff did the port authority employ?")
    advance_to(killed, "generation")
    die_during(killed, "generation")
    Question.objects.filter(pk=killed.pk).update(started_at=asked)
    folder = tmp_path / "broker"

    with use_broker("filesystem://", folder_options(folder), "groundedqa_site.broker:Transport"):
        services.questions_reap()
        assert sorted(sent_messages(folder)) == [
            ("requeued", "qa.tasks.generate_answer", killed.pk),
            ("retrieval", "qa.tasks.retrieve_question", in_line.pk),
        ]
        # The reaper's next passes send nothing more for a while.
        services.questions_reap()
        assert len(sent_messages(folder)) == 2

    # Each is sent again only after waiting as long once more (here 5 minutes), not every lease.
    for question in (in_line, killed):
        question.refresh_from_db()
        assert question.resend_at > timezone.now() + timedelta(minutes=4)


def advance_to(question: Question, stage: str) -> None:
    """Run the stages before ``stage`` in this process, leaving the question queued for it."""
    assert services.question_retrieve(question_id=question.pk)
    waiting = "generation"
    while waiting != stage:
        waiting = services.question_stage(question_id=question.pk, stage=waiting)
        assert waiting, f"the question was answered before reaching {stage}"


@pytest.mark.django_db
@pytest.mark.parametrize("stage", ["generation", "citation", "verification"])
def test_a_stage_that_lost_its_lease_writes_no_second_answer(analyst, westmere, stage):
    question = ask_in_process(analyst, westmere)
    advance_to(question, stage)
    presumed_dead = stage_jobs._claim(question.pk, waiting_stage=stage, stage=stage)
    Question.objects.filter(pk=question.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    services.questions_reap()
    question.refresh_from_db()
    assert (question.status, question.stage) == (Question.Status.QUEUED, stage)
    # The re-queued stage runs, the ones after it too, and the question is answered ...
    waiting = stage
    while waiting:
        waiting = services.question_stage(question_id=question.pk, stage=waiting)
    assert Answer.objects.filter(question=question).count() == 1
    # ... and the worker presumed dead comes back and finishes its own copy of the stage.
    assert stage_jobs._stage_claimed(presumed_dead, stage, retry=True) is None

    assert Answer.objects.filter(question=question).count() == 1
    question.refresh_from_db()
    assert question.status == Question.Status.DONE
    # The trace lists each stage once: the run lost with its worker left no record.
    stages_run = [r.stage for r in load_run(question.trace).stage_runs]
    assert stages_run == ["retrieval", "generation", "citation", "verification"]


@pytest.mark.django_db
def test_a_redelivered_stage_message_does_nothing(analyst, westmere):
    question = ask_in_process(analyst, westmere)
    advance_to(question, "verification")
    assert services.question_stage(question_id=question.pk, stage="verification") is None
    answer = Answer.objects.get(question=question)
    # The same messages again (a broker redelivers after a lost acknowledgement).
    for stage in ("generation", "citation", "verification"):
        assert services.question_stage(question_id=question.pk, stage=stage) is None
    assert services.question_retrieve(question_id=question.pk) is False
    assert list(Answer.objects.filter(question=question)) == [answer]


def unavailable_llm(monkeypatch, responses) -> FakeChatServer:
    server = FakeChatServer(responses)
    monkeypatch.setattr(clients, "get_llm_or_none", lambda: openai_client(server.url))
    return server


OK_REPLY = {"choices": [{"message": {"content": "The capital of Westmere is Arlen [S2]."}}]}


@pytest.mark.django_db
def test_an_llm_outage_is_retried_later_and_ends_with_a_readable_error(monkeypatch, analyst, westmere):
    question = ask_in_process(analyst, westmere, preset="rag")
    assert services.question_retrieve(question_id=question.pk)
    with unavailable_llm(monkeypatch, [(503, {"error": "overloaded"})]):
        for attempt in (1, 2):
            assert services.question_answer_stages(question_id=question.pk) is None
            question.refresh_from_db()
            # Back in the queue, to be sent again after a growing pause, not failed.
            assert (question.status, question.stage) == (Question.Status.QUEUED, "generation")
            assert question.resend_at > timezone.now()
            assert question.attempts == attempt
        services.question_answer_stages(question_id=question.pk)

    body = api_status(client_for(analyst), question)
    assert body["status"] == "failed"
    assert "unavailable (HTTP 503)" in body["error"] and "attempt 3 of 3" in body["error"]


@pytest.mark.django_db
def test_an_llm_that_recovers_answers_the_question(monkeypatch, analyst, westmere):
    question = ask_in_process(analyst, westmere, preset="rag")
    assert services.question_retrieve(question_id=question.pk)
    with unavailable_llm(monkeypatch, [(502, {"error": "bad gateway"}), (200, OK_REPLY)]):
        assert services.question_answer_stages(question_id=question.pk) is None
        answer = services.question_answer_stages(question_id=question.pk)

    assert answer is not None and "Arlen" in answer.text
    question.refresh_from_db()
    assert question.status == Question.Status.DONE


@pytest.mark.django_db
def test_a_permanent_llm_error_fails_at_once(monkeypatch, analyst, westmere):
    question = ask_in_process(analyst, westmere, preset="rag")
    assert services.question_retrieve(question_id=question.pk)
    with unavailable_llm(monkeypatch, [(400, {"error": "context length exceeded"})]):
        services.question_answer_stages(question_id=question.pk)

    question.refresh_from_db()
    assert question.status == Question.Status.FAILED
    assert "refused the request (HTTP 400)" in question.error
    assert question.attempts == 1
