"""A worker that serves the next stage's queue runs that stage itself, right after, with no message.

Every stage still claims the question and stores the run through its row, so the
answer is the one the messages would have given, a stage meant for other workers
is still sent to them, and a worker killed between two stages it ran itself
leaves the question where the reaper picks it up.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from groundedqa_site import jobs
from qa import services
from qa.models import Answer, Question
from qa.pipeline.flow.run import load_run
from tests.conftest import wait_for
from tests.qa.test_api import ask, client_for
from tests.qa.test_recovery import STAGES, api_status, ask_in_process
from tests.qa.test_structured_logs import json_lines

CITE_TASK = "qa.tasks.cite_answer"


def answer_shown(question: Question) -> tuple[str, list[list[str]]]:
    """The answer's text and each sentence's cited source sentences, as the question page lists them."""
    answer = Answer.objects.get(question=question)
    return answer.text, [
        [citation.text for citation in sentence.citations.order_by("ordinal")]
        for sentence in answer.sentences.order_by("ordinal")
    ]


def stages_run(question: Question) -> list[str]:
    question.refresh_from_db()
    return [r.stage for r in load_run(question.trace).stage_runs]


@pytest.mark.django_db
def test_stages_run_on_in_one_process_give_the_answer_the_messages_give(analyst, westmere):
    in_one_go = ask_in_process(analyst, westmere)
    assert (
        services.question_stages_run(question_id=in_one_go.pk, waiting="", runs_here=lambda _: True) is None
    )

    handed_on = ask_in_process(analyst, westmere)
    waiting, sent = "", []
    while waiting is not None:
        waiting = services.question_stages_run(
            question_id=handed_on.pk, waiting=waiting, runs_here=lambda _: False
        )
        sent.append(waiting)

    assert sent == ["generation", "citation", "verification", None]
    assert stages_run(in_one_go) == stages_run(handed_on) == STAGES
    assert "Arlen" in answer_shown(in_one_go)[0]
    assert answer_shown(in_one_go) == answer_shown(handed_on)


@pytest.mark.django_db
def test_a_stage_meant_for_other_workers_is_left_queued_for_them(analyst, westmere):
    question = ask_in_process(analyst, westmere)

    left = services.question_stages_run(
        question_id=question.pk, waiting="", runs_here=lambda task: task != CITE_TASK
    )

    assert left == "citation"
    question.refresh_from_db()
    assert (question.status, question.stage) == (Question.Status.QUEUED, "citation")
    # Sent again by the reaper if the caller's message is lost.
    assert question.resend_at is not None and question.lease_owner == ""
    assert stages_run(question) == ["retrieval", "generation"]
    assert (
        services.question_stages_run(question_id=question.pk, waiting="citation", runs_here=lambda _: True)
        is None
    )
    assert "Arlen" in answer_shown(question)[0]


class Killed(BaseException):
    """The worker process dying (SIGKILL) at the moment it would start the next stage itself."""


def killed_after(stages_done: int):
    calls = []

    def runs_here(task_name: str) -> bool:
        calls.append(task_name)
        if len(calls) == stages_done:
            raise Killed
        return True

    return runs_here


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
@pytest.mark.parametrize("stages_done", [1, 2, 3])
def test_a_worker_killed_between_stages_it_runs_itself_loses_nothing(
    celery_worker_process, analyst, westmere, stages_done
):
    question = ask_in_process(analyst, westmere)
    with pytest.raises(Killed):
        services.question_stages_run(question_id=question.pk, waiting="", runs_here=killed_after(stages_done))
    question.refresh_from_db()
    # What the last stage stored is where the question waits: queued, no lease, a resend due.
    assert (question.status, question.stage) == (Question.Status.QUEUED, STAGES[stages_done])
    assert stages_run(question) == STAGES[:stages_done]

    # No message was sent: the reaper sends one once the resend is due.
    services.questions_reap(now=question.resend_at + timedelta(seconds=1))

    body = wait_for(
        lambda: (b := api_status(client_for(analyst), question))["status"] in ("done", "failed") and b,
        message="the question to be answered after the kill",
    )
    assert body["status"] == "done", body["error"]
    assert "Arlen" in body["answer"]["text"]
    assert Answer.objects.filter(question=question).count() == 1
    assert stages_run(question) == STAGES


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_a_question_asked_through_the_api_is_answered_by_one_task_in_a_real_worker(
    celery_worker_process, analyst, westmere
):
    response = ask(client_for(analyst), westmere, "What is the capital of Westmere?")
    assert response.status_code == 202, response.content
    question = Question.objects.get(pk=response.json()["id"])
    body = wait_for(
        lambda: (b := api_status(client_for(analyst), question))["status"] in ("done", "failed") and b,
        message="the worker to answer the question",
    )
    assert body["status"] == "done", body["error"]
    assert "Arlen" in body["answer"]["text"]

    # Every stage ran in the worker's process, from the one message the API sent.
    workers = {r["worker"] for r in body["trace"]["stage_runs"]}
    assert [r["stage"] for r in body["trace"]["stage_runs"]] == STAGES
    assert len(workers) == 1 and workers.pop().endswith(f":{celery_worker_process.pid}")
    ended = wait_for(
        lambda: [
            line["task"]
            for line in json_lines(celery_worker_process.log_path.read_text())
            if line.get("question_id") == question.pk and line["message"].startswith("task ended")
        ],
        message="the worker's task-ended line",
    )
    assert ended == ["retrieve_question"]


def test_a_worker_runs_a_stage_itself_only_when_it_serves_that_stages_queue():
    try:
        jobs.serve_queues({"requeued", "retrieval"})  # a worker kept for retrieval (deploy/Procfile)
        assert jobs.runs_here("qa.tasks.retrieve_question")
        assert not jobs.runs_here("qa.tasks.generate_answer")
        jobs.serve_queues({"requeued", "retrieval", "generation", "citation", "verification"})
        assert jobs.runs_here("qa.tasks.generate_answer") and jobs.runs_here(CITE_TASK)
    finally:
        jobs.serve_queues(set())
    # Outside a worker (the web server, a shell) nothing runs here: every stage is sent.
    assert not jobs.runs_here("qa.tasks.generate_answer")
