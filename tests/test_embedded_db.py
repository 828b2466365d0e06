"""Who starts and stops the embedded PostgreSQL: entry points start it, importing settings never does,
and a test session stops the server it started but leaves a developer's running one alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from groundedqa_site import embedded_db

REPO = Path(__file__).resolve().parent.parent


def embedded_environment(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "GROUNDEDQA_DATABASE_NAME")}
    return {**env, "GROUNDEDQA_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "groundedqa_site.settings"}


def run(args: list[str], var_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=embedded_environment(var_dir),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def var_dir():
    # Not tmp_path: a nested pytest session makes pytest's temporary root private again (0700),
    # after which the unprivileged postgres user could not reach PGDATA to stop the server.
    folder = Path(tempfile.mkdtemp(prefix="groundedqa-embedded-"))
    yield folder
    embedded_db.stop(folder / "pg")
    shutil.rmtree(folder, ignore_errors=True)


def test_importing_settings_starts_no_database_but_manage_py_does(var_dir):
    # What a worker, a script or a test does first: import the Celery app, set Django up, read settings.
    script = "import django, groundedqa_site.celery; django.setup(); from django.db import connection"
    imported = run(["-c", script], var_dir)
    assert imported.returncode == 0, imported.stderr
    assert not (var_dir / "pg" / "postmaster.pid").exists()

    checked = run(["manage.py", "showmigrations", "documents"], var_dir)
    assert checked.returncode == 0, checked.stderr
    assert "[ ] 0001" in checked.stdout  # it reached the (fresh, empty) database
    assert (var_dir / "pg" / "postmaster.pid").exists()


def test_a_test_session_stops_its_own_server_and_leaves_a_running_one_alone(var_dir):
    embedded_db.ensure_running(var_dir / "pg")  # a developer's `make run` server
    session = run(
        [
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/qa/pipeline/test_bm25.py::test_the_passage_about_the_query_ranks_first",
        ],
        var_dir,
    )
    assert session.returncode == 0, session.stdout + session.stderr
    assert (var_dir / "pg" / "postmaster.pid").exists()
    assert list((var_dir / "test-pg").iterdir()) == []  # its private server: stopped and deleted
