"""The operations page: staff see queue depths, jobs by state, and jobs whose worker died."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from groundedqa_site import recovery
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


def test_staff_see_the_last_reclaim_pass_and_the_oldest_job_past_its_lease(staff, analyst, corpus, settings):
    settings.JOB_RECOVERY_STALE_SECONDS = 30
    now = timezone.now()
    cache.delete(recovery.PASSES_KEY)
    recovery.record_pass(
        process="worker-a:4242", role="worker qa@worker-a", reclaimed=2, now=now - timedelta(minutes=5)
    )
    recovery.record_pass(process="maint:9", role="reaper (beat)", reclaimed=0, now=now - timedelta(minutes=2))
    for minutes, text in ((1, "Recent death"), (4, "Oldest death")):
        _question(
            analyst,
            corpus,
            text,
            status="running",
            stage="generation",
            lease_owner=f"worker-a:4242:{minutes}",
            lease_expires_at=now - timedelta(minutes=minutes),
        )

    state = signed_in(staff).get("/operations/?format=json").json()["recovery"]
    assert [p["role"] for p in state["passes"]] == ["reaper (beat)", "worker qa@worker-a"]
    assert state["oldest_past_lease"]["label"].startswith("Oldest death")
    assert 239 < state["past_lease_seconds"] < 300
    assert "no reaper pass or lease reclaim for 120 s" in state["problem"]

    page = signed_in(staff).get("/operations/").content.decode()
    assert "Jobs of a dead worker are not being recovered" in page
    assert "worker qa@worker-a" in page and "reaper (beat)" in page
    assert "Oldest job past its lease" in page and "s past its lease (last owner" in page

    recovery.record_pass(process="worker-b:7", role="worker qa@worker-b", reclaimed=0)
    page = signed_in(staff).get("/operations/").content.decode()
    assert "not being recovered" not in page
