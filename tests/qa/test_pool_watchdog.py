"""A QA worker whose idle pool process is SIGKILLed answers again (groundedqa_site/pool_watchdog.py).

One real `celery worker` (prefork, two pool processes, as ``make run`` runs it) on a
private file-system broker. After a first question, the pool process that did
not run it waits for the next job holding the pool's shared job lock; it is
SIGKILLed there. Either that left the pool working (the kill missed the lock)
and the next questions are answered, or the pool is stuck and the worker ends
itself within the watchdog's time, with its status, and a new worker (the
supervisor's part, played here by the test) answers them.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bench.cluster import Cluster, WorkerSpec, lease_owner_pid
from groundedqa_site import pool_watchdog
from qa.models import Answer, Question
from tests.conftest import wait_for
from tests.qa.test_faults import QA_QUEUES, asker

pytestmark = [
    pytest.mark.faults,
    pytest.mark.recovery,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def test_a_worker_whose_idle_pool_process_was_killed_answers_again(
    analyst, westmere, short_lease_cluster, tmp_path, settings
):
    ask = asker(analyst, westmere)
    with Cluster(tmp_path, short_lease_cluster, [WorkerSpec("qa", QA_QUEUES, 2)], beat=False) as cluster:
        first = ask()
        owner = wait_for(
            lambda: Question.objects.filter(pk=first, status="running").exclude(lease_owner="").first(),
            timeout=120,
            message="the first question to run",
        ).lease_owner
        wait_for(lambda: Question.objects.get(pk=first).status == "done", timeout=120, message="an answer")
        main = cluster.processes["qa"]
        pool = [int(c) for c in Path(f"/proc/{main.pid}/task/{main.pid}/children").read_text().split()]
        [idle] = [pid for pid in pool if pid != lease_owner_pid(owner)]
        os.kill(idle, signal.SIGKILL)

        later = [ask(), ask()]

        def answered() -> bool:
            return Question.objects.filter(pk__in=later, status="done").count() == len(later)

        wait_for(
            lambda: answered() or main.poll() is not None,
            # The watchdog's time, one reclaim pass, and slack for a loaded machine.
            timeout=pool_watchdog.stuck_after() + 60,
            message="the questions to be answered or the stuck worker to end itself",
        )
        if not answered():
            assert main.wait() == pool_watchdog.STUCK_EXIT_STATUS
            assert "no pool process has started it" in cluster.log("qa").read_text()
            cluster.start("qa")  # what the launcher or the Procfile's supervisor does
            wait_for(answered, timeout=180, message="the new worker to answer the questions")
    assert all(Answer.objects.filter(question_id=pk).count() == 1 for pk in later)
