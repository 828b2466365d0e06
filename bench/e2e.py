"""Answering end to end: in process against the REST API with Celery workers, per broker.

Corpus: analyst-bench's 89k real sentences in ``bench_scale_<n>`` (bench/scale_db.py).
Baseline: ``qa.services.answer_now`` in this process. API: ``POST /api/questions/``
{corpus, question, preset} -> 202 {id, status_url}, then ``GET`` the status URL
with ``?wait=30`` (answered when the answer is stored) until done or failed,
against gunicorn as ``make run`` starts it (groundedqa_site/launcher.py) and a QA
worker (prefork ``-c 2``, as ``make run``), one web server and worker per broker,
all running for the whole benchmark: the file-system broker on a private folder
(polling as configured) and a private ``redis-server`` (``--brokers``). Latency:
each question is answered in process and through every broker back to back, the
order rotating from one question to the next, so a machine whose load changes
within minutes slows every path alike; reported per path as p50, p50 over the
in-process p50, and the median per-question ratio, and where the time went
(bench/e2e_timeline.py). Throughput: questions per minute under 8 concurrent
clients per broker.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

from bench.common import (
    BENCH_VAR_DIR,
    REPO,
    Stopwatch,
    bench_environment,
    latency_summary,
    log,
    median,
    print_table,
    ratio,
    setup_django,
    write_result,
)
from bench.e2e_timeline import Asked, summarise_timelines

PRESET = "default"  # the preset that needs no LLM
CLIENTS = 8
QA_QUEUES = "requeued,retrieval,generation,citation,verification,evaluation,default"
WORKER_PROCESSES = 2  # prefork children of the QA worker, as make run starts it
WAIT_SECONDS = 30  # a status request waits this long for its question to end (GET ?wait=)


def use_database(name: str) -> None:
    """Point this process's Django connection at another database on the benchmark server."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name


def api_user(corpus):
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    user, _ = get_user_model().objects.get_or_create(username="bench-client")
    # A member as members were before roles (documents migration team_membership_roles).
    corpus.team.members.add(user, through_defaults={"role": "reviewer"})
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

    def ask(self, corpus: str, question: str) -> Asked:
        """The question asked, answered and seen done (wall clock, as the workers stamp their traces)."""
        asked_at = time.time()
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
            # Comes back as soon as the answer is stored (or after 30 s as it stands): no polling.
            _, state = self._call("GET", f"{url}?wait={WAIT_SECONDS}")
            if state["status"] in ("done", "failed"):
                if state["status"] == "failed":
                    raise RuntimeError(f"question failed: {state.get('error')}")
                return Asked(body["id"], asked_at, time.time())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebServer:
    def __init__(self, database: str, broker_env: dict[str, str], name: str = "web") -> None:
        self.port, self.name = free_port(), name
        self.env = bench_environment(
            GROUNDEDQA_DATABASE_NAME=database,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            # The benchmark's clients ask faster than the 600 requests a minute a token gets;
            # the throttle's bookkeeping is still paid on every request.
            API_THROTTLE_USER="1000000/minute",
            **broker_env,
        )

    def __enter__(self) -> str:
        self.log = open(BENCH_VAR_DIR / f"{self.name}.log", "wb")  # noqa: SIM115 - closed in __exit__
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
        raise RuntimeError("the web server did not start; see {self.log.name}")

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


def answer_in_process(corpus, question: str, user) -> Asked:
    from qa.services import answer_now

    asked_at = time.time()
    done = answer_now(user=user, corpus=corpus, text=question, preset=PRESET)
    if done.status != "done":
        raise RuntimeError(f"answer_now ended {done.status}: {done.error}")
    return Asked(done.pk, asked_at, time.time())


def concurrent_rate(api: Api, corpus_name: str, asked: list[str]) -> dict:
    """Questions per minute with CLIENTS clients asking at once, each its next question when answered."""
    lock, queue, latencies = threading.Lock(), list(asked), []

    def client() -> None:
        while True:
            with lock:
                if not queue:
                    return
                question = queue.pop()
            seconds = api.ask(corpus_name, question).seconds
            with lock:
                latencies.append(seconds)

    with Stopwatch() as wall:
        threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return {**latency_summary(latencies), "questions_per_minute": 60 * len(latencies) / wall.seconds}


def start_path(stack: ExitStack, label: str, redis_url: str | None, database: str, token: str) -> Api:
    """A web server and a QA worker (``-c 2``, as ``make run``) on one broker, for the whole run."""
    from bench.worker import Worker, broker_environment, private_broker

    folder = private_broker()  # the worker's log, and the messages on the file-system broker
    base_url = stack.enter_context(WebServer(database, broker_environment(folder, redis_url), label))
    stack.enter_context(
        Worker(
            folder,
            queues=QA_QUEUES,
            concurrency=WORKER_PROCESSES,
            database=database,
            name=f"qa-{label}",
            broker_url=redis_url,
        )
    )
    return Api(base_url, token)


def paired_latencies(corpus, user, apis: dict[str, Api], asked: list[str]) -> dict[str, list[Asked]]:
    """Each question in process and through every broker back to back, the order rotating, so a load
    that changes within minutes hits every path alike."""
    paths = ["in_process", *apis]
    answered: dict[str, list[Asked]] = {path: [] for path in paths}
    for i, question in enumerate(asked):
        for path in paths[i % len(paths) :] + paths[: i % len(paths)]:
            if path == "in_process":
                answered[path].append(answer_in_process(corpus, question, user))
            else:
                answered[path].append(apis[path].ask(corpus.name, question))
        log(
            f"e2e: question {i + 1}/{len(asked)}: "
            + ", ".join(f"{p} {answered[p][-1].seconds:.2f}s" for p in paths)
        )
    return answered


def run(args) -> dict:
    setup_django(migrate=False)
    from bench.cluster import RedisServer
    from bench.corpus import questions
    from bench.scale_db import database_name

    # Stopped with SIGTERM, the block below still stops its web servers, workers and redis-server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    brokers = [b for b in (args.brokers or "filesystem,redis").split(",") if b]
    corpus, real = load_corpus(args.corpus_vectors)
    user, token = api_user(corpus)
    n = min(args.queries, 24 if args.quick else 80)
    asked = questions(n)
    with ExitStack() as stack:
        apis = {}
        for label in brokers:
            redis_url = stack.enter_context(RedisServer()).url if label == "redis" else None
            apis[label] = start_path(stack, label, redis_url, database_name(real), token)
        log("e2e: warming up (models load in each worker process on its first question)")
        answer_in_process(corpus, asked[0], user)
        for api in apis.values():
            with ThreadPoolExecutor(2 * WORKER_PROCESSES) as pool:
                list(pool.map(lambda q, api=api: api.ask(corpus.name, q), asked[: 2 * WORKER_PROCESSES]))
        answered = paired_latencies(corpus, user, apis, asked)
        rates = {}
        for label, api in apis.items():
            log(f"e2e: {CLIENTS} clients on {label}")
            rates[label] = concurrent_rate(api, corpus.name, asked)
    result = summarise(answered, rates, n, args.corpus_vectors)
    report(result, real)
    write_result("e2e", result, quick=args.quick)
    return result


def load_corpus(corpus_vectors: str):
    """The real analyst-bench corpus in its bench database, this process pointed at it."""
    from django.core.management import call_command

    from bench.corpus import load_documents, real_vectors, scaled_corpus
    from bench.scale_db import database_name, load
    from documents.models import Corpus

    base = load_documents()
    real = sum(len(texts) for _, _, texts in base)
    texts = [t for _, _, doc_texts in base for t in doc_texts]
    if corpus_vectors == "hashing":
        # Encoding the 89k sentences takes hours on a loaded 2-core machine. Every path searches the
        # same stored vectors with a question the model encodes, so the cost compared is the same;
        # the answers are not the real corpus's.
        from documents.models import EMBEDDING_DIM
        from qa.pipeline.search.embedding import HashingEmbedder

        load(scaled_corpus(real, base, HashingEmbedder(EMBEDDING_DIM).encode(texts)), vectors="hashing")
    else:
        load(scaled_corpus(real, base, real_vectors(texts)))
    use_database(database_name(real))
    call_command("createcachetable", verbosity=0)  # the API's throttle counts in it, as make run has it
    return Corpus.objects.get(name=f"scale-{real}"), real


def summarise(answered: dict[str, list[Asked]], rates: dict[str, dict], n: int, corpus_vectors: str) -> dict:
    base = [a.seconds for a in answered["in_process"]]
    paths = {}
    for path, asked in answered.items():
        values = [a.seconds for a in asked]
        paths[path] = {
            **latency_summary(values),
            "seconds": values,
            "p50_ratio": ratio(median(values), median(base)),
            # Per question, against the in-process answer given next to it.
            "median_paired_ratio": median([v / b for v, b in zip(values, base, strict=True)]),
            "mean_extra_ms": 1000 * (sum(values) - sum(base)) / len(values),
            # Where the time went (bench/e2e_timeline.py), medians over the questions.
            "timeline_ms": summarise_timelines(asked),
        }
    return {
        "preset": PRESET,
        "questions": n,
        "worker_processes": WORKER_PROCESSES,
        "clients": CLIENTS,
        "corpus_vectors": corpus_vectors,
        "latency": paths,
        "concurrent": rates,
        "in_process_questions_per_minute": 60 * len(base) / sum(base),
    }


def report(result: dict, real: int) -> None:
    in_rate = result["in_process_questions_per_minute"]
    rows = []
    for path, r in result["latency"].items():
        rate = result["concurrent"].get(path, {}).get("questions_per_minute", in_rate)
        label = "in process, sequential (baseline)" if path == "in_process" else f"API + Celery, {path}"
        rows.append(
            (
                label,
                r["p50_ms"],
                r["p95_ms"],
                r["p50_ratio"],
                r["median_paired_ratio"],
                r["mean_extra_ms"],
                rate,
                ratio(rate, in_rate),
            )
        )
    print_table(
        f"Answering end to end, preset {PRESET!r}, {real:,}-sentence corpus ({result['questions']} "
        f"questions, each through every path back to back; {result['worker_processes']} worker processes; "
        f"throughput under {CLIENTS} clients)",
        [
            "path",
            "p50 ms",
            "p95 ms",
            "p50 x",
            "paired x (median)",
            "extra ms (mean)",
            "questions/min",
            "rate x",
        ],
        rows,
    )
    report_timelines(result)


def report_timelines(result: dict) -> None:
    from bench.e2e_timeline import SEGMENTS

    paths = result["latency"]
    print_table(
        "Where a question's time goes, median ms per part (bench/e2e_timeline.py)",
        ["part", *paths],
        [(part, *(paths[p]["timeline_ms"].get(f"{part}_ms", 0.0) for p in paths)) for part in SEGMENTS]
        + [("stage hand-overs", *(paths[p]["timeline_ms"]["hand_overs"] for p in paths))],
    )
