"""Shared fixtures: users and corpora, the real embedder, and a real Celery worker process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from review.evaluation.reference import default_data_dir
from tests.factories import CorpusFactory, TeamFactory, UserFactory

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = default_data_dir()  # GROUNDEDQA_SHARED_DATA, as the settings read it
ALL_QUEUES = "ingestion,ingestion-bulk,requeued,retrieval,generation,citation,verification,evaluation,default"
# The worker, web and `make run` processes the tests start inherit this environment: their model
# warm-up (qa/warmup.py, a question answered by each answering process at start) would add a minute
# of CPU to every cluster a fault test starts and restarts. The session's worker and the tests of the
# warm-up switch it on for their own processes.
os.environ.setdefault("WORKER_WARM_UP", "0")
os.environ.setdefault("WEB_WARM_UP", "0")


def pytest_addoption(parser):
    parser.addoption(
        "--recovery",
        action="store_true",
        help="also run the longer recovery suites (marker `recovery`; `make test-recovery` runs only them)",
    )


def pytest_collection_modifyitems(config, items):
    """`make test` (and CI) leaves out the longer recovery suites (marker ``recovery``, ~7 minutes
    here), which keeps CI under half an hour; the short fault suite (test_faults.py, both brokers) and
    the distributed path stay in. They run with ``--recovery``, with any ``-m`` expression that
    selects them, or when named on the command line."""
    if config.getoption("--recovery") or config.getoption("markexpr"):
        return
    named = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    kept, left_out = [], []
    for item in items:
        wanted = item.get_closest_marker("recovery") is None or Path(item.path).resolve() in named
        (kept if wanted else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test saying which path is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"benchmark data not found at {path} (../shared/data is absent on this machine)")
    return path


def pytest_configure(config):
    """A test database of this run's own, on a server this run starts and stops itself.

    Without DATABASE_URL the session runs a private embedded server (never a developer's
    `make run` one) and stops it when the session ends, even after a failure. Subprocesses
    (Celery workers, manage.py) inherit DATABASE_URL and so reach that same server.
    """
    from django.conf import settings

    from groundedqa_site import embedded_db

    database = settings.DATABASES["default"]
    if settings.EMBEDDED_PGDATA is not None:
        pgdata, running = embedded_db.start_private(settings.VAR_DIR / "test-pg")
        config.add_cleanup(lambda: embedded_db.remove_private(pgdata))
        database.update(HOST=running["HOST"], PORT=running["PORT"])
        os.environ["DATABASE_URL"] = (
            f"postgres://postgres@/postgres?host={running['HOST']}&port={running['PORT']}"
        )
    database.setdefault("TEST", {})["NAME"] = f"test_groundedqa_{os.getpid()}"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Before the test database is dropped, end every session on it.

    A thread's connection (live server, worker thread) or a stopped worker's backend that
    PostgreSQL has not reaped yet would make DROP DATABASE fail with "being accessed by
    other users".
    """
    yield
    from django.db import connection, connections

    with django_db_blocker.unblock():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        connections.close_all()


@pytest.fixture
def team(db):
    return TeamFactory()


@pytest.fixture
def analyst(team):
    """A team member as members were before roles: reviews answers and edits gold (a reviewer)."""
    user = UserFactory()
    team.members.add(user, through_defaults={"role": "reviewer"})
    return user


@pytest.fixture
def staff(team):
    """A staff user who administers the team (as staff members migrate): changes its corpora."""
    user = UserFactory(is_staff=True)
    team.members.add(user, through_defaults={"role": "admin"})
    return user


@pytest.fixture
def member_with_role(team):
    """member_with_role("viewer") -> a new user who is a member of ``team`` with that role."""

    def make(role: str, **fields):
        user = UserFactory(**fields)
        team.members.add(user, through_defaults={"role": role})
        return user

    return make


@pytest.fixture
def outsider(db):
    return UserFactory()


@pytest.fixture
def corpus(team):
    return CorpusFactory(team=team)


@pytest.fixture(scope="session")
def embedder():
    from documents.embedding import get_embedder

    return get_embedder()


@pytest.fixture(scope="session", autouse=True)
def broker_dir(tmp_path_factory):
    """A broker folder of the test session's own, so no developer's worker steals its tasks."""
    from groundedqa_site.broker import folder_options
    from groundedqa_site.celery import app

    folder = tmp_path_factory.mktemp("broker")
    app.conf.broker_url = "filesystem://"
    app.conf.broker_transport_options = folder_options(folder)
    return folder


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, broker_dir, tmp_path_factory):
    """A real `celery worker` process reading the test database and the session's broker folder."""
    from django.db import connection

    log = tmp_path_factory.mktemp("worker") / "worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "groundedqa_site.settings",
        "GROUNDEDQA_DATABASE_NAME": connection.settings_dict["NAME"],
        "CELERY_BROKER_DIR": str(broker_dir),
        "CELERY_BROKER_URL": "filesystem://",
        # Structured logs, so tests can find a job's lines by its ids (tests/test_logs.py).
        "LOG_FORMAT": "json",
        # Tests that stage a dead worker's job reclaim it themselves, at a moment they choose; this
        # worker's own reclaim timer (groundedqa_site/recovery.py) waits an hour before its first
        # pass. tests/qa/test_worker_recovery.py tests that timer in workers of its own.
        "JOB_WORKER_RECLAIM_SECONDS": "3600",
        # This one worker warms up as `make run`'s do (tests/qa/test_warmup.py looks for it).
        "WORKER_WARM_UP": "1",
    }
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "groundedqa_site",
        "worker",
        "-Q",
        ALL_QUEUES,
        "--pool=solo",
        "--loglevel=INFO",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while b"ready." not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the Celery worker did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    process.log_path = log
    yield process
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


# The fault tests' short leases: a killed worker's job is back in its queue within seconds.
SHORT_LEASE, SHORT_HEARTBEAT, SHORT_RECLAIM = 6, 2, 1


@pytest.fixture
def short_lease_cluster(settings, tmp_path):
    """The environment of workers with short leases on a file-system broker in ``tmp_path / "broker"``,
    switched to for this process too (what it queues, they take); ``Cluster(tmp_path, env, workers,
    beat=False)`` starts them.

    Leases of 6 s (heartbeat 2 s) and a reaper and worker reclaim every second; this process's own
    settings use the same lease, so what it stages or reclaims itself agrees with the workers.
    """
    from django.db import connection

    from bench.cluster import cluster_environment, use_broker
    from groundedqa_site.broker import folder_options

    settings.JOB_LEASE_SECONDS, settings.JOB_HEARTBEAT_SECONDS = SHORT_LEASE, SHORT_HEARTBEAT
    broker = tmp_path / "broker"
    env = cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url="filesystem://",
        broker_dir=broker,
        lease=SHORT_LEASE,
        heartbeat=SHORT_HEARTBEAT,
        reaper=SHORT_RECLAIM,
        worker_reclaim=SHORT_RECLAIM,
    )
    with use_broker("filesystem://", folder_options(broker), "groundedqa_site.broker:Transport"):
        yield env


def wait_for(predicate, *, timeout: float = 120, interval: float = 0.25, message: str = "condition"):
    """Poll until predicate() is truthy; fail the test naming what never happened."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {message}")
