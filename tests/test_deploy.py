"""What a team deploying GroundedQA relies on: offline API docs, throttling, health checks,
paginated history and a clean `check --deploy` under the documented production environment."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bench.cluster import Cluster, cluster_environment
from groundedqa_site import recovery
from groundedqa_site.launcher import child_specs
from qa.models import Conversation, Question
from tests.conftest import REPO, wait_for


def api_client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def test_swagger_ui_loads_its_assets_from_this_server_not_a_cdn(analyst):
    client = Client()
    client.force_login(analyst)
    page = client.get("/api/docs/").content.decode()
    assert "cdn.jsdelivr.net" not in page and "unpkg.com" not in page
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    script = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert script.status_code == 200
    assert b"SwaggerUIBundle" in b"".join(script.streaming_content)


def test_api_requests_over_the_limit_get_429_with_retry_after(analyst, settings):
    settings.API_THROTTLE_RATES = {"user": "3/minute", "anon": "3/minute"}
    client = api_client(analyst)
    codes = [client.get("/api/corpora/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    refused = client.get("/api/corpora/")
    assert int(refused["Retry-After"]) > 0
    assert "throttled" in refused.json()["detail"].lower()


def test_schema_documents_429_401_and_403_on_every_operation(analyst):
    schema = api_client(analyst).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operations = [op for path in schema["paths"].values() for op in path.values()]
    assert operations
    for operation in operations:
        assert {"401", "403", "429"} <= set(operation["responses"]), operation["operationId"]
    error = schema["paths"]["/api/questions/"]["post"]["responses"]["429"]
    assert error["content"]["application/json"]["schema"]["$ref"].endswith("/Error")


@pytest.mark.django_db
def test_repeated_failed_sign_ins_are_refused_even_with_the_right_password(settings, django_user_model):
    settings.LOGIN_THROTTLE_ATTEMPTS = 3
    django_user_model.objects.create_user("maria", password="correct horse")
    client = Client()
    for _ in range(3):
        assert client.post("/login/", {"username": "maria", "password": "wrong"}).status_code == 200
    blocked = client.post("/login/", {"username": "maria", "password": "correct horse"})
    assert blocked.status_code == 429
    assert "Too many failed sign-in attempts" in blocked.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_a_successful_sign_in_resets_the_username_count(settings, django_user_model):
    settings.LOGIN_THROTTLE_ATTEMPTS = 3
    django_user_model.objects.create_user("omar", password="correct horse")
    client = Client()
    for _ in range(2):
        client.post("/login/", {"username": "omar", "password": "wrong"})
    assert client.post("/login/", {"username": "omar", "password": "correct horse"}).status_code == 302
    client.logout()
    client.post("/login/", {"username": "omar", "password": "wrong"})
    assert client.post("/login/", {"username": "omar", "password": "correct horse"}).status_code == 302


@pytest.mark.django_db
def test_health_and_readiness(settings, tmp_path):
    client = Client()
    assert client.get("/healthz").json() == {"status": "ok"}
    recovery.record_pass(process="worker-host:1", role="worker qa@worker-host", reclaimed=0)
    assert client.get("/readyz").json() == {"status": "ready"}
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "data_folder_in": str(tmp_path / "missing"),
    }
    response = client.get("/readyz")
    assert response.status_code == 503
    assert "broker folder" in response.json()["failures"]["broker"]


@pytest.mark.django_db
def test_readiness_fails_naming_job_recovery_when_no_reclaim_pass_ran_recently(settings):
    settings.JOB_RECOVERY_STALE_SECONDS = 30
    cache.delete(recovery.PASSES_KEY)
    client = Client()
    never = client.get("/readyz")
    assert never.status_code == 503
    assert "no reaper pass or lease reclaim has run yet" in never.json()["failures"]["job recovery"]

    long_ago = timezone.now() - timedelta(seconds=45)
    recovery.record_pass(process="old-host:7", role="reaper (beat)", reclaimed=0, now=long_ago)
    stale = client.get("/readyz")
    assert stale.status_code == 503
    problem = stale.json()["failures"]["job recovery"]
    assert "for 45 s" in problem and "JOB_RECOVERY_STALE_SECONDS=30" in problem and "reaper (beat)" in problem

    recovery.record_pass(process="worker-host:8", role="worker qa@worker-host", reclaimed=0)
    assert client.get("/readyz").json() == {"status": "ready"}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_readiness_fails_within_the_setting_after_every_reclaiming_process_died(settings, tmp_path):
    """A real maintenance worker and beat record their passes; killed, /readyz turns 503 in time."""
    settings.JOB_RECOVERY_STALE_SECONDS = 4
    cache.delete(recovery.PASSES_KEY)
    env = cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url="filesystem://",
        broker_dir=tmp_path / "broker",
        lease=6,
        heartbeat=2,
        reaper=1,
    )
    client = Client()
    with Cluster(tmp_path, env, workers=[]) as cluster:
        wait_for(lambda: client.get("/readyz").status_code == 200, timeout=60, message="a first pass")

        def roles() -> set[str]:
            return {p.role.split("@")[0] for p in recovery.recent_passes()}

        # Both paths record their passes: beat's reaper and the maintenance worker's own timer.
        wait_for(lambda: roles() == {"reaper (beat)", "worker maintenance"}, timeout=30, message="both")
        for name in list(cluster.processes):
            cluster.kill_worker(name)
        killed = time.monotonic()
        wait_for(lambda: client.get("/readyz").status_code == 503, timeout=30, message="/readyz to fail")
        noticed = time.monotonic() - killed
    assert "no reaper pass or lease reclaim for" in client.get("/readyz").json()["failures"]["job recovery"]
    # Within the setting, plus the interval between passes and this poll's own step.
    assert noticed <= settings.JOB_RECOVERY_STALE_SECONDS + 2


def test_question_history_is_paginated_so_old_questions_stay_reachable(analyst, corpus):
    conversation = Conversation.objects.create(user=analyst, corpus=corpus)
    Question.objects.bulk_create(
        Question(
            user=analyst, corpus=corpus, conversation=conversation, text=f"question {n}", preset="default"
        )
        for n in range(120)
    )
    client = api_client(analyst)
    first = client.get("/api/questions/").json()
    assert first["count"] == 120 and len(first["results"]) == 50 and first["next"]
    last = client.get("/api/questions/?page=3").json()
    assert len(last["results"]) == 20 and last["next"] is None
    assert client.get("/api/questions/?page=9").status_code == 404


def test_check_deploy_is_clean_with_the_documented_production_environment():
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "x7" * 30 + "-a-long-random-production-key",
        "ALLOWED_HOSTS": "groundedqa.example.org",
        "SECURE_HSTS_PRELOAD": "1",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_the_procfile_runs_beat_as_a_process_of_its_own_and_no_worker_embeds_it():
    """Celery's advice: a beat thread inside `worker -B` can die while the worker looks healthy."""
    lines = [line for line in (REPO / "deploy" / "Procfile").read_text().splitlines() if line[:1].isalnum()]
    processes = dict(line.split(": ", 1) for line in lines)
    assert processes["beat"].startswith("celery -A groundedqa_site beat ")
    assert [name for name, command in processes.items() if " -B" in command or "--beat" in command] == []
    assert " -Q maintenance " in processes["maintenance"]
    # The same split in `make run`.
    launched = {name: command for name, command in child_specs()}
    assert launched["beat"][3:6] == ["-A", "groundedqa_site", "beat"]
    assert not any("-B" in command for command in launched.values())
