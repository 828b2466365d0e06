"""The operations page: staff see queue depths, jobs by state, and jobs whose worker died."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from qa.models import Conversation, Question

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _question(analyst, corpus, text, **fields) -> Question:
    conversation = Conversation.objects.create(user=analyst, corpus=corpus)
    return Question.objects.create(
        user=analyst, corpus=corpus, conversation=conversation, text=text, preset="default", **fields
    )


def test_staff_see_a_job_whose_lease_expired_as_stuck_and_a_live_one_as_running(staff, analyst, corpus):
    now = timezone.now()
    dead = _question(
        analyst,
        corpus,
        "Who founded the harbour authority?",
        status="running",
        stage="generation",
        lease_owner="worker-a:4242:abcd",
        lease_expires_at=now - timedelta(minutes=3),
        attempts=1,
    )
    _question(
        analyst,
        corpus,
        "How many staff?",
        status="running",
        stage="retrieval",
        lease_owner="worker-b:77:ef01",
        lease_expires_at=now + timedelta(seconds=30),
        attempts=1,
    )
    _question(analyst, corpus, "Queued one", status="queued")

    state = signed_in(staff).get("/operations/?format=json").json()
    questions = next(job for job in state["jobs"] if job["kind"] == "questions")
    assert questions["by_status"] == {"queued": 1, "running": 2}
    assert questions["running_with_lease"] == 1 and questions["stuck"] == 1
    assert [job["pk"] for job in state["stuck"]] == [dead.pk]
    assert state["stuck"][0]["owner"] == "worker-a:4242:abcd"
    assert state["lease_holders"] == {"worker-b:77": 1}
    # The test session's file-system broker answers for every routed queue.
    assert {"retrieval", "generation", "citation", "verification", "requeued", "ingestion"} <= set(
        state["queues"]
    )
    assert all(isinstance(depth, int) for depth in state["queues"].values())

    page = signed_in(staff).get("/operations/").content.decode()
    assert "Stuck jobs" in page and "worker-a:4242:abcd" in page
    assert 'data-queue="retrieval"' in page


def test_analysts_cannot_open_the_operations_page(analyst):
    assert signed_in(analyst).get("/operations/").status_code == 403
    assert 'href="/operations/"' not in signed_in(analyst).get("/history/").content.decode()
