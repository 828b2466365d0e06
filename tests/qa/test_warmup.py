"""Models loaded at start: a process asks the warm-up question before serving, records how long
it took and its memory, and the operations page shows every process's warm-up."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.cache import cache
from django.test import Client

from qa import warmup
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_records():
    cache.delete(warmup.WARMUP_KEY)
    yield
    cache.delete(warmup.WARMUP_KEY)


def test_the_warmup_question_is_answered_from_its_own_text():
    assert "1871" in warmup.ask_the_warmup_question("default")


def test_a_warmup_is_recorded_with_its_time_and_memory():
    done = warmup.warm_up(role="web")
    assert done.error == "" and done.preset == "default" and done.seconds > 0
    assert done.rss_mb_after is not None and done.rss_mb_after >= done.rss_mb_before > 0
    # A worker of the session may record its own warm-up meanwhile: look for this process's.
    [record] = [w for w in warmup.warmups() if w["process"] == done.process]
    assert record == dataclasses.asdict(done)


def test_warmups_of_two_processes_are_both_kept(monkeypatch):
    first = warmup.warm_up(role="worker")
    monkeypatch.setattr(warmup.os, "getpid", lambda: 999_999)
    second = warmup.warm_up(role="worker")
    assert {w["process"] for w in warmup.warmups()} >= {first.process, second.process}
    assert first.process != second.process


def test_a_failed_warmup_is_recorded_not_raised():
    failed = warmup.warm_up(role="worker", preset="no-such-preset")
    assert failed.error.startswith("KeyError")
    [record] = [w for w in warmup.warmups() if w["process"] == failed.process]
    assert record["error"] == failed.error


def test_the_operations_page_lists_each_process_warmup(staff):
    done = warmup.warm_up(role="worker")
    client = Client()
    client.force_login(staff)
    page = client.get("/operations/").content.decode()
    row = page.split(f'<tr data-process="{done.process}">', 1)[1].split("</tr>", 1)[0]
    assert "<td>worker</td>" in row and '<td class="mono">default</td>' in row
    # As the page rounds it (Django's floatformat rounds half up, Python's format to even).
    from django.template.defaultfilters import floatformat

    assert f"{floatformat(done.seconds, 1)} s" in row and " MB" in row
    listed = client.get("/operations/?format=json").json()["models"]
    assert [m["seconds"] for m in listed if m["process"] == done.process] == [done.seconds]


@pytest.mark.worker
def test_a_real_answering_worker_loads_its_models_when_it_starts(celery_worker_process):
    # The session's worker (a solo pool) warms up once it is ready; this test may come after its
    # record was written, so the record is looked for in the worker's log too.
    mine = f"pid {celery_worker_process.pid}"

    def warmed() -> bool:
        return "models loaded in" in celery_worker_process.log_path.read_text() or any(
            w["process"].endswith(mine) for w in warmup.warmups()
        )

    wait_for(warmed, timeout=300, message="the worker's model warm-up")


@pytest.mark.worker
def test_each_prefork_pool_process_loads_its_models_after_the_fork(tmp_path):
    """As `make run`'s QA worker runs (prefork): the pool process, not the parent, asks the
    warm-up question, and records it under its own pid. Its own empty broker folder, so it takes
    no other test's messages."""
    import os
    import subprocess
    import sys

    from django.db import connection

    from tests.conftest import REPO

    log = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "groundedqa_site.settings",
        "GROUNDEDQA_DATABASE_NAME": connection.settings_dict["NAME"],
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_BROKER_DIR": str(tmp_path / "broker"),
        "JOB_WORKER_RECLAIM_SECONDS": "3600",
        "WORKER_WARM_UP": "1",
    }
    command = [sys.executable, "-m", "celery", "-A", "groundedqa_site", "worker", "-Q", "retrieval"]
    command += ["--pool=prefork", "-c", "1", "--loglevel=INFO", "--without-gossip", "--without-mingle"]
    with open(log, "wb") as out:
        worker = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)

    def parent_of(pid: int) -> int | None:
        try:
            status = open(f"/proc/{pid}/status").read()
        except OSError:
            return None
        return int(status.split("PPid:", 1)[1].split()[0])

    def of_this_worker() -> list[dict]:
        # The session's own worker may record its warm-up meanwhile: only this worker's pool counts.
        return [
            w
            for w in warmup.warmups()
            if w["role"] == "worker" and parent_of(int(w["process"].rsplit(" ", 1)[1])) == worker.pid
        ]

    try:
        records = wait_for(
            of_this_worker,
            timeout=300,
            message=f"the pool process's warm-up:\n{log.read_text()[-2000:] if log.exists() else ''}",
        )
        assert [r["error"] for r in records] == [""]
        assert not any(w["process"].endswith(f"pid {worker.pid}") for w in warmup.warmups())
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
