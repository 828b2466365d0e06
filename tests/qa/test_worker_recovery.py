"""Recovery that outlives beat: every worker reclaims its own queues' expired leases.

Real `celery worker` processes (prefork, two per worker) on a private file-system
broker and the test database, and no beat or maintenance worker at all: the only
processes that can put a killed stage back in its queue are the QA workers' own
reclaim timers (groundedqa_site/recovery.py).
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection

from bench.cluster import Cluster, WorkerSpec, cluster_environment, use_broker
from bench.faults import fault_round
from groundedqa_site import recovery
from groundedqa_site.broker import folder_options
from qa.models import Question
from tests.conftest import wait_for
from tests.qa.test_faults import FILESYSTEM_TRANSPORT, QA_QUEUES, asker

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LEASE, HEARTBEAT, RECLAIM = 6, 2, 1


@pytest.fixture(autouse=True)
def short_leases(settings):
    settings.JOB_LEASE_SECONDS, settings.JOB_HEARTBEAT_SECONDS = LEASE, HEARTBEAT


def test_with_no_beat_running_a_question_whose_worker_process_is_killed_still_finishes(
    analyst, westmere, tmp_path
):
    cache.delete(recovery.PASSES_KEY)  # passes of other tests' workers
    broker = tmp_path / "broker"
    env = cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url="filesystem://",
        broker_dir=broker,
        lease=LEASE,
        heartbeat=HEARTBEAT,
        reaper=RECLAIM,
        worker_reclaim=RECLAIM,
    )
    workers = [WorkerSpec("qa1", QA_QUEUES, 2), WorkerSpec("qa2", QA_QUEUES, 2)]
    with (
        use_broker("filesystem://", folder_options(broker), FILESYSTEM_TRANSPORT),
        Cluster(tmp_path, env, workers, beat=False) as cluster,
    ):
        assert set(cluster.processes) == {"qa1", "qa2"}  # no beat, no maintenance worker
        result = fault_round(
            broker="filesystem",
            ask=asker(analyst, westmere),
            questions=6,
            cluster=cluster,
            kill_interval=(0.5, 1.5),
            max_kills=2,
            timeout=150,
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
