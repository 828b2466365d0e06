"""The services around the workers failing under load: the broker or the database restarted, a web
process killed.

``python -m bench faults --services [--repeat N]`` runs rounds; tests/qa/test_service_faults.py
runs short ones.

- **Redis restarted**: questions are asked; once one of them is running, the
  private `redis-server` is stopped (with no persistence every message it held,
  queued or unacked, is gone), left down for a moment and started again on the
  same port, empty; more questions are asked after it. Nothing in the broker
  survives, so what brings the questions back is the database: a running
  stage's lease runs out and it is reclaimed, a queued one's ``resend_at``
  comes and its message is sent again.
- **PostgreSQL restarted**: the same with the benchmark's embedded database server (file-system
  broker): stopped once a question runs, started again after a moment. Workers meet a database
  that is gone (stages, lease renewals and reclaim passes fail, and reconnect); every question
  must end answered, or failed with a reason, and none twice.
- **A web process killed mid-request**: a client waits for an answer with
  ``GET /api/questions/{id}/?wait=30`` while the question runs; the gunicorn
  worker serving it is frozen, found still serving (the question unfinished and
  no response sent), and SIGKILLed. The client gets an error, gunicorn's master
  starts another worker, and the question it asked still ends answered.

Counted: questions lost (never ended), failed, duplicated answers, and the time
from the fault until the last question ended.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.cluster import RedisServer


@dataclass
class ServiceFaultResult:
    fault: str
    questions: int = 0
    done: int = 0
    failed: int = 0
    lost: int = 0
    duplicated_answers: int = 0
    failures: list[str] = field(default_factory=list)
    in_flight_at_fault: int = 0  # asked and not yet ended when the fault came
    down_seconds: float = 0.0
    all_ended_after: float | None = None  # from the fault; None when some never ended
    # What the client of the killed request saw: an error, or (the request still waiting in the
    # listen queue when its worker died) the answer from the worker started in its place.
    killed_request: str = ""
    client_errors: list[str] = field(default_factory=list)  # any other request that failed

    def as_dict(self) -> dict:
        return asdict(self)


def wait_until(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def _ended(ids: list[int]) -> bool:
    from qa.models import Question

    return not Question.objects.filter(pk__in=ids, status__in=["queued", "running"]).exists()


def count_outcome(result: ServiceFaultResult, ids: list[int]) -> None:
    from qa.models import Answer, Question

    rows = list(Question.objects.filter(pk__in=ids).values_list("pk", "status", "error"))
    result.questions = len(ids)
    result.done = sum(1 for _, status, _ in rows if status == "done")
    result.failed = sum(1 for _, status, _ in rows if status == "failed")
    result.lost = len(ids) - result.done - result.failed
    result.failures = [f"question {pk}: {error}" for pk, status, error in rows if status == "failed"]
    result.duplicated_answers = Answer.objects.filter(question_id__in=ids).count() - result.done


def broker_restart_round(*, redis: RedisServer, **round_args) -> ServiceFaultResult:
    """``restart_round`` with the private Redis as the service."""
    return restart_round(fault="redis restarted", stop=redis.stop, start=redis.start, **round_args)


def database_restart_round(*, pgdata: Path, **round_args) -> ServiceFaultResult:
    """``restart_round`` with the embedded PostgreSQL server whose data folder is ``pgdata``."""
    from django.db import connection

    from groundedqa_site import embedded_db

    def stop() -> None:
        connection.close()  # this process's own, so the server stops without waiting for it
        if not embedded_db.stop(pgdata):
            raise RuntimeError(f"the PostgreSQL server of {pgdata} did not stop")

    return restart_round(
        fault="postgresql restarted",
        stop=stop,
        start=lambda: embedded_db.ensure_running(pgdata),
        **round_args,
    )


def restart_round(
    *,
    fault: str,
    stop: Callable[[], object],
    start: Callable[[], object],
    ask: Callable[[], int],
    questions: int,
    after_restart: int,
    down_seconds: float,
    timeout: float,
) -> ServiceFaultResult:
    """Ask ``questions``, stop the service once one of them runs, start it again after
    ``down_seconds``, ask ``after_restart`` more, and wait for all of them to end."""
    from qa.models import Question

    result = ServiceFaultResult(fault=fault)
    ids = [ask() for _ in range(questions)]
    if not wait_until(
        lambda: Question.objects.filter(pk__in=ids, status="running").exists(), timeout=timeout
    ):
        raise RuntimeError("no question started running: are the workers up?")
    in_flight = Question.objects.filter(pk__in=ids, status__in=["queued", "running"]).count()
    stop()
    fault_at = time.monotonic()
    result.in_flight_at_fault = in_flight
    # The outage itself: how long the service is gone is the fault's size, not a wait for a condition.
    time.sleep(down_seconds)
    start()
    result.down_seconds = round(time.monotonic() - fault_at, 1)
    ids += [ask() for _ in range(after_restart)]
    if wait_until(lambda: _ended(ids), timeout=timeout, interval=0.2):
        result.all_ended_after = round(time.monotonic() - fault_at, 1)
    count_outcome(result, ids)
    return result


# --- a web process killed mid-request ---------------------------------------------


def gunicorn_workers(master: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{master}/task/{master}/children").read_text().split()]
    except OSError:
        return []


def web_kill_round(
    *,
    base_url: str,
    token: str,
    corpus: str,
    gunicorn_master: int,
    questions: int,
    timeout: float,
) -> ServiceFaultResult:
    """Ask over the API and wait for each answer with ``?wait=30``; kill the web worker serving the
    first wait that is caught still in flight (module docstring). Every other wait finishes."""
    import httpx

    from qa.models import Question

    result = ServiceFaultResult(fault="web worker killed mid-request")
    headers = {"Authorization": f"Token {token}"}
    ids: list[int] = []
    killed_at: float | None = None
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as api:
        for n in range(questions):
            asked = api.post(
                "/api/questions/", json={"corpus": corpus, "question": QUESTIONS[n % len(QUESTIONS)]}
            )
            asked.raise_for_status()
            pk = asked.json()["id"]
            ids.append(pk)
            outcome: dict = {}

            def wait_for_answer(pk=pk, outcome=outcome) -> None:
                try:
                    outcome["status"] = api.get(f"/api/questions/{pk}/?wait=30").status_code
                except httpx.TransportError as exc:
                    outcome["error"] = f"{type(exc).__name__}: {exc}"

            waiter = threading.Thread(target=wait_for_answer, daemon=True)
            waiter.start()
            if killed_at is None:
                killed_at = _kill_while_waiting(gunicorn_master, pk, outcome, waiter)
                if killed_at is not None:
                    waiter.join(timeout=60)
                    result.killed_request = outcome.get("error") or f"HTTP {outcome.get('status')}"
                    result.in_flight_at_fault = Question.objects.filter(
                        pk__in=ids, status__in=["queued", "running"]
                    ).count()
                    continue
            waiter.join(timeout=60)
            if "error" in outcome or outcome.get("status") != 200:
                result.client_errors.append(outcome.get("error") or f"HTTP {outcome.get('status')}")
    if killed_at is None:
        raise RuntimeError("no wait was caught in flight")
    if wait_until(lambda: _ended(ids), timeout=timeout, interval=0.2):
        result.all_ended_after = round(time.monotonic() - killed_at, 1)
    count_outcome(result, ids)
    return result


def _kill_while_waiting(master: int, pk: int, outcome: dict, waiter: threading.Thread) -> float | None:
    """SIGKILL the web workers while ``waiter``'s request is in flight; the moment, or None if the
    answer came first."""
    from qa.models import Question

    while waiter.is_alive() and not outcome:
        workers = gunicorn_workers(master)
        for worker in workers:
            os.kill(worker, signal.SIGSTOP)
        # Frozen: no response can be sent now. Still unanswered and the client still waiting?
        in_flight = (
            not outcome
            and waiter.is_alive()
            and Question.objects.filter(pk=pk, status__in=["queued", "running"]).exists()
        )
        if in_flight:
            for worker in workers:
                os.kill(worker, signal.SIGKILL)
            return time.monotonic()
        for worker in workers:
            os.kill(worker, signal.SIGCONT)
        time.sleep(0.05)
    return None


QUESTIONS = [
    "What is the capital of Westmere?",
    "How many staff did the port authority employ?",
    "How many containers did the Port of Westmere handle in 2024?",
    "When did Westmere gain independence?",
]


# --- python -m bench faults --services -----------------------------------------------


def _cluster_env(broker_url: str, broker_dir: Path | None) -> dict[str, str]:
    from django.conf import settings
    from django.db import connection

    from bench.cluster import cluster_environment

    return cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url=broker_url,
        broker_dir=broker_dir,
        lease=settings.JOB_LEASE_SECONDS,
        heartbeat=settings.JOB_HEARTBEAT_SECONDS,
        reaper=settings.JOB_REAPER_INTERVAL_SECONDS,
        worker_reclaim=settings.JOB_WORKER_RECLAIM_SECONDS,
    )


QA_QUEUES = "requeued,retrieval,generation,citation,verification,default"


def _redis_round(workdir: Path, ask: Callable[[], int], questions: int) -> ServiceFaultResult:
    from bench.cluster import Cluster, WorkerSpec, use_broker

    workers = [WorkerSpec("qa1", QA_QUEUES, 2), WorkerSpec("qa2", QA_QUEUES, 2)]
    with RedisServer() as redis, use_broker(redis.url):
        with Cluster(workdir, _cluster_env(redis.url, None), workers):
            return broker_restart_round(
                redis=redis, ask=ask, questions=questions, after_restart=4, down_seconds=5, timeout=900
            )


def _database_round(workdir: Path, ask: Callable[[], int], questions: int) -> ServiceFaultResult:
    from django.conf import settings

    from bench.cluster import WorkerSpec, site_cluster

    if settings.EMBEDDED_PGDATA is None:
        raise RuntimeError("the PostgreSQL restart needs the bench's embedded server (DATABASE_URL is set)")
    workers = [WorkerSpec("qa1", QA_QUEUES, 2), WorkerSpec("qa2", QA_QUEUES, 2)]
    with site_cluster("filesystem", workdir, workers):
        return database_restart_round(
            pgdata=settings.EMBEDDED_PGDATA,
            ask=ask,
            questions=questions,
            after_restart=4,
            down_seconds=5,
            timeout=900,
        )


def _web_round(workdir: Path, corpus, user, questions: int) -> ServiceFaultResult:
    import subprocess
    import sys

    from rest_framework.authtoken.models import Token

    from bench.cluster import REPO, Cluster, WorkerSpec, free_port, use_broker
    from groundedqa_site.broker import folder_options
    from groundedqa_site.launcher import web_server_command

    broker = workdir / "broker"
    env = _cluster_env("filesystem://", broker)
    port = free_port()
    command = web_server_command(sys.executable)
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    env["WEB_CONCURRENCY"] = "1"
    token = Token.objects.get_or_create(user=user)[0].key
    workers = [WorkerSpec("qa1", QA_QUEUES, 2), WorkerSpec("qa2", QA_QUEUES, 2)]
    with (
        use_broker("filesystem://", folder_options(broker), "groundedqa_site.broker:Transport"),
        Cluster(workdir, env, workers),
        open(workdir / "web.log", "wb") as log,
    ):
        web = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            if not wait_until(lambda: _serves(f"{base}/healthz"), timeout=300, interval=0.5):
                raise RuntimeError(f"gunicorn did not start (log: {workdir / 'web.log'})")
            return web_kill_round(
                base_url=base,
                token=token,
                corpus=corpus.name,
                gunicorn_master=web.pid,
                questions=questions,
                timeout=900,
            )
        finally:
            web.terminate()
            web.wait(timeout=60)


def _serves(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def run(args) -> None:
    import shutil
    import tempfile

    from django.conf import settings

    from bench.common import BENCH_VAR_DIR, log, print_table, write_result
    from bench.faults import DEMO_QUESTIONS, _bench_corpus
    from qa import services

    corpus, user = _bench_corpus()

    asked = []

    def ask() -> int:
        text = DEMO_QUESTIONS[len(asked) % len(DEMO_QUESTIONS)]
        asked.append(text)
        return services.question_ask(user=user, corpus=corpus, text=text, preset="default").pk

    rounds = args.repeat or (1 if args.quick else 3)
    questions = args.questions or (8 if args.quick else 20)
    results = []
    for n in range(rounds):
        BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
        if shutil.which("redis-server") is None:
            log("redis-server is not installed; the Redis restart is skipped")
        else:
            workdir = Path(tempfile.mkdtemp(prefix="faults-redis-restart-", dir=BENCH_VAR_DIR))
            log(f"redis restart {n + 1}: workers and logs in {workdir}")
            results.append(_redis_round(workdir, ask, questions))
        workdir = Path(tempfile.mkdtemp(prefix="faults-postgresql-restart-", dir=BENCH_VAR_DIR))
        log(f"postgresql restart {n + 1}: workers and logs in {workdir}")
        results.append(_database_round(workdir, ask, questions))
        workdir = Path(tempfile.mkdtemp(prefix="faults-web-kill-", dir=BENCH_VAR_DIR))
        log(f"web kill {n + 1}: workers, gunicorn and logs in {workdir}")
        results.append(_web_round(workdir, corpus, user, max(4, questions // 2)))
    print_table(
        f"Questions across a Redis restart, a PostgreSQL restart and a web worker killed mid-request "
        f"(lease {settings.JOB_LEASE_SECONDS} s)",
        [
            "fault",
            "asked",
            "in flight at the fault",
            "done",
            "failed",
            "lost",
            "dup. answers",
            "all ended after s",
            "killed request saw",
            "other client errors",
        ],
        [
            [
                r.fault,
                r.questions,
                r.in_flight_at_fault,
                r.done,
                r.failed,
                r.lost,
                r.duplicated_answers,
                r.all_ended_after if r.all_ended_after is not None else "never",
                r.killed_request or "-",
                len(r.client_errors),
            ]
            for r in results
        ],
    )
    write_result(
        "faults-services",
        {"lease_seconds": settings.JOB_LEASE_SECONDS, "rounds": [r.as_dict() for r in results]},
        quick=args.quick,
    )
