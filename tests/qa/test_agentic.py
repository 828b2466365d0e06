"""The agentic preset: a multi-part question split into parts, each answered as a question of its
own (real PostgreSQL, the real embedder; the task path with a real Celery worker), then combined."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from qa import services
from qa.models import Decomposition, Question, SubQuestion
from qa.pipeline.flow.run import load_run
from qa.services import decomposition, stage_jobs
from tests.conftest import wait_for
from tests.qa.test_api import ask, client_for

TWO_PARTS = (
    "How many containers did the Port of Westmere handle in 2024, and what is the capital of Westmere?"
)
ONE_UNSUPPORTED = "What is the capital of Westmere, and who is the president of Westmere?"


def cited_documents(answer) -> set[str]:
    return {c.document_external_id for s in answer.sentences.all() for c in s.citations.all()}


@pytest.mark.django_db
def test_two_part_question_in_process_cites_both_documents_and_traces_its_plan(analyst, westmere):
    question = services.answer_now(user=analyst, corpus=westmere, text=TWO_PARTS, preset="agentic")
    assert question.status == Question.Status.DONE, question.error
    answer = question.answer
    assert answer.kind == "answerable" and not answer.refused
    assert cited_documents(answer) == {"port-report", "country-profile"}
    assert "4.2 million containers" in answer.text and "Arlen" in answer.text
    assert 2 <= answer.sentences.count() <= 4
    run = load_run(question.trace, question=question.text)
    assert run.decomposition.plan.method == "rules"
    assert run.decomposition.plan.parts == (
        "How many containers did the Port of Westmere handle in 2024?",
        "What is the capital of Westmere?",
    )
    assert [p.outcome for p in run.decomposition.parts] == ["answered", "answered"]
    # Each part is a question of its own, with its own trace, linked to the question it belongs to.
    parts = SubQuestion.objects.filter(decomposition__question=question).select_related("question")
    assert [p.question.status for p in parts] == ["done", "done"]
    assert [p.question_id for p in parts] == [r.question_id for r in run.decomposition.parts]


@pytest.mark.django_db
def test_a_part_the_sources_do_not_support_is_refused_by_name_and_the_answer_is_partial(analyst, westmere):
    question = services.answer_now(user=analyst, corpus=westmere, text=ONE_UNSUPPORTED, preset="agentic")
    answer = question.answer
    assert answer.kind == "partial" and not answer.refused
    assert "Arlen" in answer.text
    assert "The sources do not say who the president of Westmere is." in answer.text
    assert answer.missing == ["Who is the president of Westmere?"]
    run = load_run(question.trace, question=question.text)
    assert [p.outcome for p in run.decomposition.parts] == ["answered", "refused"]


@pytest.mark.django_db
def test_a_question_that_asks_one_thing_is_answered_as_default_would(analyst, westmere):
    asked = "How many staff did the port authority employ?"
    agentic = services.answer_now(user=analyst, corpus=westmere, text=asked, preset="agentic")
    default = services.answer_now(user=analyst, corpus=westmere, text=asked, preset="default")
    assert agentic.answer.text == default.answer.text
    assert load_run(agentic.trace, question=asked).decomposition.plan.method == "single"


@pytest.mark.django_db
def test_the_answer_page_and_the_trace_page_show_the_plan_and_each_parts_answer(client, analyst, westmere):
    question = services.answer_now(user=analyst, corpus=westmere, text=ONE_UNSUPPORTED, preset="agentic")
    client.force_login(analyst)
    page = client.get(reverse("question", args=[question.pk])).content.decode()
    assert "How it was answered: the question in parts" in page
    assert "Who is the president of Westmere?" in page and 'data-outcome="refused"' in page
    trace = client.get(reverse("question-trace", args=[question.pk])).content.decode()
    assert "Plan: the question in parts" in trace and "Split into 2 parts (by rules, no LLM)" in trace
    part = SubQuestion.objects.filter(decomposition__question=question).first().question_id
    assert reverse("question-trace", args=[part]) in trace
    # The parts are reached from the question, not listed as questions of their own.
    history = client.get(reverse("history")).content.decode()
    assert ONE_UNSUPPORTED in history and "What is the capital of Westmere?" not in history


@pytest.mark.django_db
def test_fan_in_counts_a_part_once_however_often_it_is_settled(analyst, westmere):
    question = services.answer_now(user=analyst, corpus=westmere, text=TWO_PARTS, preset="agentic")
    part = SubQuestion.objects.filter(decomposition__question=question).first()
    # A redelivered last-stage message, and the reaper's sweep, settle the same part again.
    assert decomposition.part_settled(question_id=part.question_id) is False
    assert decomposition.decompositions_reap() == 0
    assert Decomposition.objects.get(question=question).done == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_agentic_question_through_the_api_runs_its_parts_as_jobs_of_a_real_worker(
    celery_worker_process, analyst, westmere
):
    client = client_for(analyst)
    response = ask(client, westmere, TWO_PARTS, preset="agentic")
    assert response.status_code == 202, response.content
    status_url = response.json()["status_url"]
    body = wait_for(
        lambda: (b := client.get(status_url).json())["status"] in ("done", "failed") and b,
        message="the worker to answer every part and combine them",
    )
    assert body["status"] == "done", body["error"]
    cited = {c["document"] for s in body["answer"]["sentences"] for c in s["citations"]}
    assert len(cited) == 2
    plan = body["trace"]["decomposition"]["plan"]
    assert len(plan["parts"]) == 2 and plan["method"] == "rules"
    parts = body["trace"]["decomposition"]["parts"]
    assert [p["outcome"] for p in parts] == ["answered", "answered"]
    # Each part ran as its own stage jobs, in the worker process, and was counted once.
    for part in parts:
        child = Question.objects.get(pk=part["question_id"])
        assert {r["stage"] for r in child.trace["stage_runs"]} >= {"retrieval", "generation", "verification"}
    stages = [r["stage"] for r in body["trace"]["stage_runs"]]
    assert stages == ["planning", "combination"]
    assert Decomposition.objects.get(question_id=body["id"]).done == 2


def planned_and_waiting(analyst, corpus) -> tuple[Question, list[Question]]:
    """An agentic question planned in this process, its parts created but none sent to a worker."""
    from tests.qa.test_recovery import ask_in_process

    question = ask_in_process(analyst, corpus, text=TWO_PARTS, preset="agentic")
    claimed = stage_jobs._claim(question.pk, waiting_stage="", stage="planning")
    parts = decomposition._plan_claimed(claimed)
    Question.objects.filter(pk=question.pk).update(
        status=Question.Status.QUEUED, stage=decomposition.WAITING, resend_at=None, **stage_jobs.RELEASED
    )
    return question, parts


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_a_part_whose_worker_died_is_answered_again_and_the_question_combined_once(
    celery_worker_process, analyst, westmere
):
    from tests.qa.test_recovery import die_during

    question, (first, second) = planned_and_waiting(analyst, westmere)
    die_during(first, "retrieval")  # its worker was killed while retrieving
    # ... and the other part's message was lost: the reaper sends it again too.
    Question.objects.filter(pk=second.pk).update(resend_at=timezone.now() - timedelta(seconds=1))
    services.questions_reap()  # re-queues the dead part and sends both parts' tasks
    client = client_for(analyst)
    body = wait_for(
        lambda: (
            (b := client.get(f"/api/questions/{question.pk}/").json())["status"] in ("done", "failed") and b
        ),
        message="the parts to be answered again and combined",
        timeout=300,
    )
    assert body["status"] == "done", body["error"]
    assert {c["document"] for s in body["answer"]["sentences"] for c in s["citations"]} == {
        "port-report",
        "country-profile",
    }
    first.refresh_from_db()
    assert first.status == "done" and first.attempts >= 1
    assert Decomposition.objects.get(question=question).done == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_a_combination_whose_worker_died_is_sent_again_by_the_reaper(
    celery_worker_process, analyst, westmere
):
    from tests.qa.test_recovery import die_during

    question, parts = planned_and_waiting(analyst, westmere)
    for part in parts:
        decomposition.question_run_here(part.pk)
        decomposition.part_settled(question_id=part.pk, queue_combination=False)
    die_during(question, "combination")
    services.questions_reap()  # back to waiting for the combination, whose task it sends
    question = wait_for(
        lambda: (q := Question.objects.get(pk=question.pk)).status in ("done", "failed") and q,
        message="the reaper to send the combination again",
        timeout=300,
    )
    assert question.status == "done", question.error
    assert "Arlen" in question.answer.text and "4.2 million" in question.answer.text
