"""The broker restarted and a web process killed while questions are in flight (bench/fault_services.py).

Real parts: `celery worker` processes as ``make run`` runs them (two QA workers,
the maintenance worker and beat), a private `redis-server` stopped and started
again on the same port, and gunicorn started with ``make run``'s own command.
Leases are short (6 s) to keep it brief.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import httpx
import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from bench.cluster import REPO, Cluster, RedisServer, WorkerSpec, cluster_environment, free_port, use_broker
from bench.fault_services import broker_restart_round, web_kill_round
from groundedqa_site.broker import folder_options
from groundedqa_site.launcher import web_server_command
from qa.models import Question
from tests.conftest import wait_for
from tests.qa.test_faults import FILESYSTEM_TRANSPORT, HEARTBEAT, LEASE, QA_QUEUES, REAPER, asker

pytestmark = [
    pytest.mark.faults,
    pytest.mark.recovery,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture(autouse=True)
def short_leases(settings):
    settings.JOB_LEASE_SECONDS, settings.JOB_HEARTBEAT_SECONDS = LEASE, HEARTBEAT


def environment(broker_url: str, broker_dir=None) -> dict[str, str]:
    return cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url=broker_url,
        broker_dir=broker_dir,
        lease=LEASE,
        heartbeat=HEARTBEAT,
        reaper=REAPER,
    )


QA_WORKERS = [WorkerSpec("qa1", QA_QUEUES, 2), WorkerSpec("qa2", QA_QUEUES, 2)]


def settle() -> None:
    """Idle before the workers stop and the test's tables are flushed under them."""
    wait_for(
        lambda: not Question.objects.filter(status__in=["queued", "running"]).exists(),
        timeout=120,
        message="the cluster to settle",
    )


def test_questions_in_flight_across_a_redis_restart_are_answered_once(analyst, westmere, tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    with RedisServer() as redis, use_broker(redis.url):
        with Cluster(tmp_path, environment(redis.url), QA_WORKERS) as cluster:
            result = broker_restart_round(
                redis=redis,
                ask=asker(analyst, westmere),
                questions=6,
                after_restart=2,
                down_seconds=3,
                timeout=150,
            )
            settle()
            assert set(cluster.processes) >= {"qa1", "qa2", "maintenance", "beat"}  # none died of it
    assert result.in_flight_at_fault >= 1
    assert result.lost == 0, f"{result.lost} question(s) never ended"
    # Every message Redis held was lost with it: the database alone brought them back.
    assert result.failed == 0, result.failures
    assert result.duplicated_answers == 0


def test_a_web_worker_killed_mid_request_loses_no_question(analyst, westmere, tmp_path):
    broker = tmp_path / "broker"
    env = environment("filesystem://", broker)
    port = free_port()
    command = web_server_command(sys.executable)
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    env["WEB_CONCURRENCY"] = "1"
    token = Token.objects.create(user=analyst).key
    with (
        use_broker("filesystem://", folder_options(broker), FILESYSTEM_TRANSPORT),
        Cluster(tmp_path, environment("filesystem://", broker), QA_WORKERS) as cluster,
        open(tmp_path / "web.log", "wb") as log,
    ):
        web = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(lambda: _answers(f"{base}/healthz"), timeout=120, message="gunicorn to serve")
            result = web_kill_round(
                base_url=base,
                token=token,
                corpus=westmere.name,
                gunicorn_master=web.pid,
                questions=4,
                timeout=150,
            )
            # gunicorn's master started another worker: the site answers again.
            wait_for(lambda: _answers(f"{base}/healthz"), timeout=60, message="a new web worker")
            settle()
        finally:
            web.terminate()
            web.wait(timeout=30)
        assert set(cluster.processes) >= {"qa1", "qa2"}
    # The killed request failed or was served by the worker started in its place; no other failed.
    assert result.killed_request, "no request was killed"
    assert result.client_errors == []
    assert result.lost == 0, f"{result.lost} question(s) never ended"
    assert result.failed == 0, result.failures
    assert result.duplicated_answers == 0
    assert result.done == 4


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.TransportError:
        return False
