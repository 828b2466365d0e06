"""Supervising `make run`: a child that dies is started again with a bounded back-off, and Ctrl-C
ends every process it started within one grace period, the ones that do not stop when asked (a
worker in the middle of embedding a corpus) included."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from django.test import Client

from groundedqa_site.launcher import Supervisor, child_specs, stop_children
from tests.conftest import wait_for

POLITE = "import time; print('up', flush=True); time.sleep(120)"
STUBBORN = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + POLITE


def start(code: str) -> subprocess.Popen:
    child = subprocess.Popen(
        [sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "up"  # its signal handling is in place
    return child


def test_ctrl_c_stops_every_process_within_one_grace_period():
    children = [start(POLITE)] + [start(STUBBORN) for _ in range(3)]
    started = time.monotonic()
    stop_children(children, grace=2.0)
    took = time.monotonic() - started
    assert children[0].returncode == -signal.SIGTERM  # asked, and it stopped
    assert [child.returncode for child in children[1:]] == [-signal.SIGKILL] * 3
    # Waiting the whole grace for each stubborn child in turn took 3 x 2 s.
    assert took < 2 * 2.0, f"stopping took {took:.1f} s"


def supervised(specs, tmp_path, **options) -> tuple[Supervisor, list[str]]:
    lines: list[str] = []
    options = {"backoff_min": 0.2, "backoff_max": 0.8, "poll_seconds": 0.05, **options}
    return Supervisor(specs, tmp_path / "logs", report=lines.append, **options), lines


@pytest.mark.django_db(transaction=True)  # the supervisor's thread publishes with a connection of its own
def test_a_child_that_dies_is_started_again_and_the_restart_is_logged(tmp_path, staff):
    steady = [sys.executable, "-c", "import time; time.sleep(120)"]
    supervisor, lines = supervised([("qa-worker", steady), ("web", steady)], tmp_path)
    supervisor.start()
    try:
        first = supervisor.children[0].process.pid
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: supervisor.children[0].restarts == 1, timeout=10, message="the restart")
        again = supervisor.children[0].process
        assert again.pid != first and again.poll() is None
        assert supervisor.children[1].restarts == 0  # the others are left alone
        assert any(f"qa-worker (pid {first}) was killed by SIGKILL" in line for line in lines), lines
        assert any(f"qa-worker started again (pid {again.pid}, restart 1)" in line for line in lines), lines
        # The operations page shows who is alive, and who was restarted.
        client = Client()
        client.force_login(staff)
        children = wait_for(
            lambda: (
                (c := client.get("/operations/?format=json").json()["launcher"])
                and c["children"]["qa-worker"]["restarts"] == 1
                and c["children"]
            ),
            timeout=10,
            message="the restart on the operations page",
        )
        assert children["qa-worker"] | {"history": []} == {
            "pid": again.pid,
            "alive": True,
            "restarts": 1,
            "last_exit": "was killed by SIGKILL",
            "history": [],
        }
        assert children["web"]["restarts"] == 0 and children["web"]["alive"]
        page = client.get("/operations/").content.decode()
        assert 'data-child="qa-worker"' in page and "was killed by SIGKILL" in page
    finally:
        supervisor.stop(grace=5)
    assert all(process.poll() is not None for process in supervisor.processes())


@pytest.mark.django_db(transaction=True)
def test_a_child_that_keeps_dying_is_restarted_with_a_doubling_delay_up_to_the_bound(tmp_path):
    crashing = [sys.executable, "-c", "raise SystemExit(3)"]
    supervisor, lines = supervised([("web", crashing)], tmp_path, backoff_min=0.2, backoff_max=0.8)
    supervisor.start()
    try:
        wait_for(lambda: supervisor.children[0].restarts >= 5, timeout=30, message="five restarts")
    finally:
        supervisor.stop(grace=5)
    delays = [float(line.rsplit("again in ", 1)[1].split(" s")[0]) for line in lines if "again in" in line]
    # Each quick death doubles the wait, up to the bound, where it stays.
    assert delays[:5] == [0.2, 0.4, 0.8, 0.8, 0.8]
    assert all("exited with code 3" in line for line in lines if "again in" in line)


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_make_runs_beat_is_supervised_killed_it_comes_back_and_sends_the_reaper_again(tmp_path):
    """The launcher's own beat command: SIGKILLed, it is started again and keeps sending the reaper."""
    [beat] = [spec for spec in child_specs() if spec[0] == "beat"]
    env = {**os.environ, "CELERY_BROKER_URL": "filesystem://", "CELERY_BROKER_DIR": str(tmp_path / "broker")}
    env["JOB_REAPER_INTERVAL_SECONDS"] = "1"
    supervisor, lines = supervised([beat], tmp_path, env=env)
    log = tmp_path / "logs" / "beat.log"
    supervisor.start()
    try:
        wait_for(
            lambda: b"Sending due task" in log.read_bytes(), timeout=60, message="beat to send the reaper"
        )
        first = supervisor.children[0].process.pid
        os.kill(first, signal.SIGKILL)
        killed_at = len(log.read_bytes())
        wait_for(lambda: supervisor.children[0].restarts == 1, timeout=10, message="beat's restart")
        wait_for(
            lambda: b"Sending due task" in log.read_bytes()[killed_at:],
            timeout=60,
            message="the restarted beat to send the reaper",
        )
        assert any(f"beat (pid {first}) was killed by SIGKILL" in line for line in lines), lines
    finally:
        supervisor.stop(grace=10)
    assert supervisor.children[0].process.returncode is not None
