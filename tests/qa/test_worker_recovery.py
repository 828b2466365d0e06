"""Recovery that outlives beat: every worker reclaims its own queues' expired leases.

Real `celery worker` processes (prefork, two per worker) on a private file-system
broker and the test database, and no beat or maintenance worker at all: the only
processes that can put a killed stage back in its queue are the QA workers' own
reclaim timers (groundedqa_site/recovery.py).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from django.core.cache import cache

from bench.cluster import Cluster, WorkerSpec
from bench.faults import fault_round
from groundedqa_site import recovery
from qa import services
from qa.models import Answer, Question
from tests.conftest import SHORT_LEASE, SHORT_RECLAIM, wait_for
from tests.qa.pipeline.test_llm_clients import FakeChatServer
from tests.qa.test_api import client_for
from tests.qa.test_faults import QA_QUEUES, asker

pytestmark = [
    pytest.mark.faults,
    pytest.mark.recovery,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def test_with_no_beat_running_a_question_whose_worker_process_is_killed_still_finishes(
    analyst, westmere, short_lease_cluster, tmp_path
):
    cache.delete(recovery.PASSES_KEY)  # passes of other tests' workers
    workers = [WorkerSpec("qa1", QA_QUEUES, 2), WorkerSpec("qa2", QA_QUEUES, 2)]
    with Cluster(tmp_path, short_lease_cluster, workers, beat=False) as cluster:
        assert set(cluster.processes) == {"qa1", "qa2"}  # no beat, no maintenance worker
        result = fault_round(
            broker="filesystem",
            ask=asker(analyst, westmere),
            questions=6,
            cluster=cluster,
            kill_interval=(0.5, 1.5),
            max_kills=2,
            timeout=150,
            until_killed=8,
        )
        assert result.kills, "the killer found no running stage to kill"
        assert result.lost == 0, f"{result.lost} question(s) never finished"
        assert result.failed == 0, result.failures
        assert result.duplicated_answers == 0
        assert not result.unrecovered_kills, result.unrecovered_kills
        # Idle before the workers stop and the test's tables are flushed under them.
        wait_for(
            lambda: not Question.objects.filter(status__in=["queued", "running"]).exists(),
            timeout=60,
            message="the cluster to settle",
        )

    # Whoever re-queued them, it was a worker's own timer: nothing else ran.
    roles = {p.role for p in recovery.recent_passes()}
    assert roles and all(role.startswith("worker qa") for role in roles), roles


def test_a_question_that_kills_its_worker_every_time_ends_failed_with_a_reason_in_bounded_time(
    analyst, westmere, short_lease_cluster, tmp_path, settings
):
    """Its generation stage's worker is killed on each of JOB_MAX_ATTEMPTS tries: the client
    waiting with ?wait= gets `failed` and a readable reason, within a lease and a reclaim pass."""
    release = threading.Event()

    def hang(body):  # an LLM that never answers in time: the stage is surely running when killed
        release.wait(120)
        return 200, {"choices": [{"message": {"content": "Arlen [S1]."}}]}

    cache.delete(recovery.PASSES_KEY)
    with FakeChatServer(hang) as llm:
        llm_settings = {
            "QA_LLM_PROVIDER": "openai",
            "QA_LLM_BASE_URL": f"{llm.url}/v1",
            "QA_LLM_MODEL": "fake",
        }
        for name, value in llm_settings.items():
            setattr(settings, name, value)
        env = short_lease_cluster
        env.update(llm_settings)
        try:
            with Cluster(tmp_path, env, [WorkerSpec("qa", QA_QUEUES, 1)], beat=False):
                question = services.question_ask(
                    user=analyst, corpus=westmere, text="What is the capital of Westmere?", preset="rag"
                )
                for attempt in range(1, settings.JOB_MAX_ATTEMPTS + 1):
                    # In generation, waiting on the LLM: its request has arrived.
                    wait_for(lambda a=attempt: len(llm.requests) == a, timeout=120, message=f"try {attempt}")
                    owner = Question.objects.get(pk=question.pk).lease_owner
                    os.kill(int(owner.split(":")[1]), signal.SIGKILL)
                killed = time.monotonic()
                body = client_for(analyst).get(f"/api/questions/{question.pk}/?wait=30").json()
                waited = time.monotonic() - killed
        finally:
            release.set()

    assert body["status"] == "failed", body
    assert "generation stage stopped 3 times" in body["error"] and "Ask again" in body["error"]
    assert body["answer"] is None
    # The lease runs out, then the next reclaim pass fails it; the slack is for a loaded machine.
    assert waited <= SHORT_LEASE + 2 * SHORT_RECLAIM + 10, f"the client waited {waited:.1f} s"


def test_a_question_whose_stage_hangs_ends_failed_past_the_task_time_limit(
    analyst, westmere, short_lease_cluster, tmp_path, settings
):
    """A stage stuck for good (here an LLM that never answers, with a client that would wait ten
    minutes) keeps renewing its lease from its heartbeat thread, so no reclaim can see it: the
    task's time limit ends the pool process, and after JOB_MAX_ATTEMPTS tries the question is
    `failed` with a reason instead of `running` for ever. Nothing is killed by the test."""
    release = threading.Event()

    def hang(body):
        release.wait(300)
        return 200, {"choices": [{"message": {"content": "Arlen [S1]."}}]}

    time_limit = 5
    with FakeChatServer(hang) as llm:
        llm_settings = {
            "QA_LLM_PROVIDER": "openai",
            "QA_LLM_BASE_URL": f"{llm.url}/v1",
            "QA_LLM_MODEL": "fake",
            "QA_LLM_TIMEOUT_SECONDS": "600",
        }
        for name, value in llm_settings.items():
            setattr(settings, name, value)
        env = {**short_lease_cluster, **llm_settings, "QUESTION_TASK_TIME_LIMIT_SECONDS": str(time_limit)}
        try:
            with Cluster(tmp_path, env, [WorkerSpec("qa", QA_QUEUES, 1)], beat=False):
                question = services.question_ask(
                    user=analyst, corpus=westmere, text="What is the capital of Westmere?", preset="rag"
                )
                started = time.monotonic()
                wait_for(
                    lambda: Question.objects.get(pk=question.pk).status == "failed",
                    timeout=settings.JOB_MAX_ATTEMPTS * (time_limit + SHORT_LEASE + SHORT_RECLAIM) + 90,
                    message="the hung question to end failed",
                )
                waited = time.monotonic() - started
        finally:
            release.set()

    question.refresh_from_db()
    assert len(llm.requests) == settings.JOB_MAX_ATTEMPTS  # each try reached the LLM and hung there
    assert "generation stage stopped 3 times" in question.error and "time limit" in question.error
    assert not Answer.objects.filter(question=question).exists()
    # Each try ends at the limit, then its lease and a reclaim pass; the slack is for a loaded machine.
    assert waited <= settings.JOB_MAX_ATTEMPTS * (time_limit + SHORT_LEASE + 2 * SHORT_RECLAIM) + 60, waited
