"""Answering end to end: in process against the REST API with Celery workers, on the real corpus.

Corpus: analyst-bench's 89k real sentences in ``bench_scale_<n>`` (bench/scale_db.py).
Baseline: ``qa.services.answer_now`` in this process, one question after
another (warm: snapshot and models loaded first). API: ``POST /api/questions/``
{corpus, question, preset} -> 202 {id, status_url}, then ``GET`` the status
URL every 50 ms until done or failed, against ``manage.py runserver`` and QA
worker processes (prefork ``-c 1`` and ``-c 2``; ``make run`` uses ``-c 2``),
on a private broker folder. Measured: latency p50/p95 of one client at a time,
and questions per minute under 8 concurrent clients, each against the
in-process rate, with the broker's polling interval as configured.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from bench.common import (
    REPO,
    Stopwatch,
    bench_environment,
    latency_summary,
    log,
    print_table,
    ratio,
    setup_django,
    write_result,
)

PRESET = "default"  # the preset that needs no LLM
CLIENTS = 8
QA_QUEUES = "requeued,retrieval,generation,citation,verification,evaluation,default"


def use_database(name: str) -> None:
    """Point this process's Django connection at another database on the benchmark server."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name


def api_user(corpus):
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    user, _ = get_user_model().objects.get_or_create(username="bench-client")
    corpus.team.members.add(user)
    return user, Token.objects.get_or_create(user=user)[0].key


class Api:
    def __init__(self, base_url: str, token: str) -> None:
        self.base_url, self.headers = (
            base_url,
            {"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )

    def _call(self, method: str, url: str, body: dict | None = None) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, headers=self.headers, method=method)
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.loads(response.read())

    def ask(self, corpus: str, question: str) -> float:
        """Seconds from POST to a finished answer."""
        start = time.perf_counter()
        status, body = self._call(
            "POST",
            f"{self.base_url}/api/questions/",
            {"corpus": corpus, "question": question, "preset": PRESET},
        )
        if status != 202:
            raise RuntimeError(f"POST /api/questions/ answered {status}: {body}")
        url = (
            body["status_url"]
            if body["status_url"].startswith("http")
            else self.base_url + body["status_url"]
        )
        while True:
            if time.perf_counter() - start > 900:
                raise RuntimeError(
                    f"no answer after 900 s from {url}: is a worker alive? (see var/bench/broker-*)"
                )
            _, state = self._call("GET", url)
            if state["status"] in ("done", "failed"):
                if state["status"] == "failed":
                    raise RuntimeError(f"question failed: {state.get('error')}")
                return time.perf_counter() - start
            time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebServer:
    def __init__(self, database: str, broker) -> None:
        self.port = free_port()
        self.env = bench_environment(
            GROUNDEDQA_DATABASE_NAME=database,
            CELERY_BROKER_URL="filesystem://",
            CELERY_BROKER_DIR=str(broker),
            ALLOWED_HOSTS="127.0.0.1,localhost",
        )

    def __enter__(self) -> str:
        self.log = open(REPO / "var" / "bench" / "web.log", "wb")  # noqa: SIM115 - closed in __exit__
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
            cwd=REPO,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return f"http://127.0.0.1:{self.port}"
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the web server did not start; see var/bench/web.log")

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


def in_process(corpus, asked: list[str], user) -> dict:
    from qa.services import answer_now

    answer_now(user=user, corpus=corpus, text=asked[0], preset=PRESET)  # loads models and the snapshot
    latencies = []
    for question in asked:
        with Stopwatch() as sw:
            done = answer_now(user=user, corpus=corpus, text=question, preset=PRESET)
        if done.status != "done":
            raise RuntimeError(f"answer_now ended {done.status}: {done.error}")
        latencies.append(sw.seconds)
    return {**latency_summary(latencies), "questions_per_minute": 60 * len(latencies) / sum(latencies)}


def through_api(api: Api, corpus_name: str, asked: list[str], sequential: int, workers: int) -> dict:
    # Warm every worker child: each builds its own snapshot and loads its models on its first question.
    with ThreadPoolExecutor(2 * workers) as pool:
        list(pool.map(lambda q: api.ask(corpus_name, q), asked[: 2 * workers]))
    single = [api.ask(corpus_name, q) for q in asked[:sequential]]
    lock, queue, concurrent = threading.Lock(), list(asked), []

    def client() -> None:
        while True:
            with lock:
                if not queue:
                    return
                question = queue.pop()
            seconds = api.ask(corpus_name, question)
            with lock:
                concurrent.append(seconds)

    with Stopwatch() as wall:
        threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return {
        "single_client": latency_summary(single),
        "concurrent": latency_summary(concurrent),
        "questions_per_minute": 60 * len(concurrent) / wall.seconds,
    }


def run(args) -> dict:
    setup_django(migrate=False)
    try:
        from qa.services import answer_now  # noqa: F401
    except ImportError:
        print("\ne2e: qa.services.answer_now does not exist yet; nothing to measure")
        return {}
    from django.conf import settings

    from bench.corpus import load_documents, questions, real_vectors, scaled_corpus
    from bench.scale_db import database_name, load
    from bench.worker import Worker, private_broker
    from documents.models import Corpus

    base = load_documents()
    real = sum(len(texts) for _, _, texts in base)
    load(scaled_corpus(real, base, real_vectors([t for _, _, texts in base for t in texts])))
    use_database(database_name(real))
    corpus = Corpus.objects.get(name=f"scale-{real}")
    user, token = api_user(corpus)
    n = min(args.queries, 24 if args.quick else 80)
    asked = questions(n)
    log(f"e2e: {n} questions, in process")
    baseline = in_process(corpus, asked[: max(8, n // 2)], user)
    log(
        f"e2e: in process p50 {baseline['p50_ms']:.0f} ms, "
        f"{baseline['questions_per_minute']:.1f} questions/min"
    )
    broker = private_broker()
    configured = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("polling_interval", 1.0)
    results = {"in_process": baseline, "api": []}
    with WebServer(database_name(real), broker) as base_url:
        api = Api(base_url, token)
        for concurrency in (1, 2):
            log(f"e2e: API, {concurrency} worker process(es), polling {configured}s")
            with Worker(
                broker,
                queues=QA_QUEUES,
                concurrency=concurrency,
                database=database_name(real),
                name=f"qa-{concurrency}",
            ):
                measured = through_api(api, corpus.name, asked, sequential=min(8, n), workers=concurrency)
            results["api"].append({"workers": concurrency, "polling_interval": configured, **measured})
            write_result("e2e", {"preset": PRESET, "partial": True, **results}, quick=args.quick)
    rows = [
        (
            "in process, sequential (baseline)",
            "-",
            "-",
            baseline["p50_ms"],
            baseline["p95_ms"],
            1.0,
            baseline["questions_per_minute"],
            1.0,
        )
    ]
    for r in results["api"]:
        rows.append(
            (
                f"API + Celery, polling {r['polling_interval']}s",
                r["workers"],
                CLIENTS,
                r["single_client"]["p50_ms"],
                r["single_client"]["p95_ms"],
                ratio(r["single_client"]["p50_ms"], baseline["p50_ms"]),
                r["questions_per_minute"],
                ratio(r["questions_per_minute"], baseline["questions_per_minute"]),
            )
        )
    print_table(
        f"Answering end to end, preset {PRESET!r}, {real:,}-sentence corpus ({n} questions; latency of one "
        f"client at a time; throughput under {CLIENTS} clients)",
        ["path", "workers", "clients", "p50 ms", "p95 ms", "latency x", "questions/min", "rate x"],
        rows,
    )
    write_result("e2e", {"preset": PRESET, "questions": n, "clients": CLIENTS, **results}, quick=args.quick)
    return results
