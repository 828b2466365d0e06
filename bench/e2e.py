"""Answering end to end: in process against the REST API with Celery workers, on the real corpus.

Corpus: analyst-bench's 89k real sentences in ``bench_scale_<n>`` (bench/scale_db.py).
Baseline: ``qa.services.answer_now`` in this process, one question after
another (warm: models loaded first). API: ``POST /api/questions/``
{corpus, question, preset} -> 202 {id, status_url}, then ``GET`` the status
URL every 50 ms until done or failed, against gunicorn as ``make run`` starts it
(groundedqa_site/launcher.py) and QA worker processes (prefork ``-c 1`` and ``-c 2``;
``make run`` uses ``-c 2``), once per broker: the file-system broker on a private
folder (polling as configured) and a private ``redis-server`` (``--brokers``). The
in-process baseline is measured again before each broker's rounds, and each round's
ratio is taken against the baseline just before it, so drift between brokers on a
shared machine does not read as a broker's cost. Measured: latency p50/p95 of one
client at a time, and questions per minute under 8 concurrent clients.
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
from contextlib import ExitStack

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
    def __init__(self, database: str, broker_env: dict[str, str]) -> None:
        self.port = free_port()
        self.env = bench_environment(
            GROUNDEDQA_DATABASE_NAME=database,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            # Each client polls its status URL 20 times a second, far past the 600/minute a
            # token gets; the throttle's bookkeeping is still paid on every request.
            API_THROTTLE_USER="1000000/minute",
            **broker_env,
        )

    def __enter__(self) -> str:
        self.log = open(REPO / "var" / "bench" / "web.log", "wb")  # noqa: SIM115 - closed in __exit__
        from groundedqa_site.launcher import web_server_command

        command = web_server_command(sys.executable)
        command[command.index("--bind") + 1] = f"127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            command,
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


def api_rounds(
    token: str, corpus, asked: list[str], sequential: int, database: str, redis_url: str | None
) -> list[dict]:
    """One and two worker processes behind one web server, all on one broker (Redis at ``redis_url``)."""
    from django.conf import settings

    from bench.worker import Worker, broker_environment, private_broker

    label = "redis" if redis_url else "filesystem"
    polling = None if redis_url else settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("polling_interval", 1.0)
    folder = private_broker()  # the workers' logs, and the messages on the file-system broker
    rows = []
    with WebServer(database, broker_environment(folder, redis_url)) as base_url:
        api = Api(base_url, token)
        for concurrency in (1, 2):
            log(f"e2e: API on {label}, {concurrency} worker process(es)")
            with Worker(
                folder,
                queues=QA_QUEUES,
                concurrency=concurrency,
                database=database,
                name=f"qa-{label}-{concurrency}",
                broker_url=redis_url,
            ):
                measured = through_api(api, corpus.name, asked, sequential, concurrency)
            rows.append({"broker": label, "workers": concurrency, "polling_interval": polling, **measured})
            log(f"e2e: {label} x{concurrency}: p50 {measured['single_client']['p50_ms']:.0f} ms")
    return rows


def run(args) -> dict:
    setup_django(migrate=False)
    from bench.cluster import RedisServer
    from bench.corpus import load_documents, questions, real_vectors, scaled_corpus
    from bench.scale_db import database_name, load
    from documents.models import Corpus

    brokers = [b for b in (args.brokers or "filesystem,redis").split(",") if b]
    base = load_documents()
    real = sum(len(texts) for _, _, texts in base)
    texts = [t for _, _, doc_texts in base for t in doc_texts]
    if args.corpus_vectors == "hashing":
        # Encoding the 89k sentences takes hours on a loaded 2-core machine. Both paths search the
        # same stored vectors with a question the model encodes, so the cost compared is the same;
        # the answers are not the real corpus's.
        from documents.models import EMBEDDING_DIM
        from qa.pipeline.embedding import HashingEmbedder

        load(scaled_corpus(real, base, HashingEmbedder(EMBEDDING_DIM).encode(texts)), vectors="hashing")
    else:
        load(scaled_corpus(real, base, real_vectors(texts)))
    use_database(database_name(real))
    from django.core.management import call_command

    call_command("createcachetable", verbosity=0)  # the API's throttle counts in it, as make run has it
    corpus = Corpus.objects.get(name=f"scale-{real}")
    user, token = api_user(corpus)
    n = min(args.queries, 24 if args.quick else 80)
    asked = questions(n)
    sequential = min(n, 16)
    results = {"baselines": [], "api": []}
    for label in brokers:
        log(f"e2e: {n} questions, in process (baseline for {label})")
        baseline = in_process(corpus, asked[:sequential], user)
        results["baselines"].append({"before": label, **baseline})
        log(f"e2e: in process p50 {baseline['p50_ms']:.0f} ms")
        with ExitStack() as stack:
            redis_url = stack.enter_context(RedisServer()).url if label == "redis" else None
            rows = api_rounds(token, corpus, asked, sequential, database_name(real), redis_url)
        for row in rows:
            row["latency_ratio"] = ratio(row["single_client"]["p50_ms"], baseline["p50_ms"])
            row["rate_ratio"] = ratio(row["questions_per_minute"], baseline["questions_per_minute"])
        results["api"].extend(rows)
        write_result("e2e", {"preset": PRESET, "partial": True, **results}, quick=args.quick)
    report(results, real, n)
    write_result(
        "e2e",
        {
            "preset": PRESET,
            "questions": n,
            "sequential": sequential,
            "clients": CLIENTS,
            "corpus_vectors": args.corpus_vectors,
            **results,
        },
        quick=args.quick,
    )
    return results


def report(results: dict, real: int, n: int) -> None:
    rows = []
    for baseline in results["baselines"]:
        label = baseline["before"]
        rows.append(
            (
                f"in process, sequential (baseline for {label})",
                "-",
                baseline["p50_ms"],
                baseline["p95_ms"],
                1.0,
                baseline["questions_per_minute"],
                1.0,
            )
        )
        for r in (r for r in results["api"] if r["broker"] == label):
            polling = f", polling {r['polling_interval']}s" if r["polling_interval"] else ""
            rows.append(
                (
                    f"API + Celery, {label}{polling}",
                    r["workers"],
                    r["single_client"]["p50_ms"],
                    r["single_client"]["p95_ms"],
                    r["latency_ratio"],
                    r["questions_per_minute"],
                    r["rate_ratio"],
                )
            )
    print_table(
        f"Answering end to end, preset {PRESET!r}, {real:,}-sentence corpus ({n} questions; latency of one "
        f"client at a time; throughput under {CLIENTS} clients; ratios against the baseline above them)",
        ["path", "workers", "p50 ms", "p95 ms", "latency x", "questions/min", "rate x"],
        rows,
    )
