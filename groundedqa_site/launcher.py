"""`make run`: the whole of GroundedQA on one machine, on embedded defaults.

Starts (or reuses) the embedded PostgreSQL, migrates, creates a demo admin the
first time, starts two Celery workers (ingestion apart, so questions are
answered while a corpus embeds), a maintenance worker (the reaper's home),
Celery beat in a process of its own (it sends the reaper every few seconds),
and the web server on 127.0.0.1:8000, then loads a demo corpus with a progress
bar: the analyst benchmark from ../shared/data when it is there (the documents
its questions need first), otherwise the small sample shipped in
documents/demo_corpus.

Every child is supervised: one that dies (killed, out of memory, crashed) is
started again after a back-off that doubles with each quick death up to
RESTART_BACKOFF_MAX seconds, and each restart is printed and logged. Ctrl-C (or
SIGTERM) stops the children and the database.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundedqa_site.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import DatabaseError, connection  # noqa: E402
from django.utils import timezone  # noqa: E402
from tqdm import tqdm  # noqa: E402

from documents import parsing, services  # noqa: E402
from documents.models import Corpus, Document, Team  # noqa: E402
from groundedqa_site import embedded_db, recovery  # noqa: E402

ADDRESS = os.environ.get("GROUNDEDQA_ADDRESS", "127.0.0.1:8000")
QA_WORKER_QUEUES = "requeued,retrieval,generation,citation,verification,evaluation,default"
DEMO_SAMPLE = Path(__file__).resolve().parent.parent / "documents" / "demo_corpus"


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main() -> int:
    # Ctrl-C and a plain `kill` both stop everything cleanly, even when started
    # from a shell that ignores SIGINT for background jobs.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    serve_plain_http()
    embedded_db.start_configured_server()
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    team, _ = Team.objects.get_or_create(name="Analysts")
    create_demo_admin(team)
    logs = settings.VAR_DIR / "logs"
    supervisor = Supervisor(child_specs(), logs)
    supervisor.start()
    print(f"Logs: {logs}/", flush=True)
    print(f"GroundedQA is starting on http://{ADDRESS}/  (Ctrl-C stops everything)", flush=True)
    started = timezone.now()
    try:
        load_demo_corpus(team)
        wait_for_answering_models(started)
        print(f"Ready: http://{ADDRESS}/  (Ctrl-C stops everything)", flush=True)
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        print("\nStopping...", flush=True)
        return 0
    finally:
        supervisor.stop()
        if settings.EMBEDDED_PGDATA is not None:
            embedded_db.stop(settings.EMBEDDED_PGDATA)


# The web server started here speaks plain HTTP with no TLS proxy in front of it, so the
# HTTPS-only defaults of DEBUG off (redirect to https, cookies sent over https only) would lock
# every browser out. Behind a TLS proxy, set them to 1.
HTTPS_ONLY_SETTINGS = ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE")


def serve_plain_http() -> None:
    """Off unless the environment says otherwise; the children inherit them."""
    for name in HTTPS_ONLY_SETTINGS:
        os.environ.setdefault(name, "0")


def create_demo_admin(team: Team) -> None:
    User = get_user_model()
    if User.objects.filter(is_superuser=True).exists():
        return
    password = secrets.token_urlsafe(12)
    admin = User.objects.create_superuser("admin", "admin@example.org", password)
    team.members.add(admin)
    print("=" * 60)
    print("Demo admin created (shown only this once):")
    print("  username: admin")
    print(f"  password: {password}")
    print("=" * 60, flush=True)


def child_specs() -> list[tuple[str, list[str]]]:
    """(name, command) of every process `make run` runs; each one's log is var/logs/<name>.log."""
    python = sys.executable
    celery = [python, "-m", "celery", "-A", "groundedqa_site"]
    worker = celery + ["worker", "--loglevel=WARNING", "--without-gossip", "--without-mingle"]
    return [
        # Uploads have a worker of their own, idle until one comes, so they never wait
        # behind the demo corpus or an import_benchmark (the "ingestion-bulk" queue), whose
        # worker runs at a lower CPU priority (BULK_WORKER_NICE) so uploads and questions go first.
        ("ingestion-worker", worker + ["-Q", "ingestion", "-c", "1", "-n", "ingestion@%h"]),
        ("bulk-ingestion-worker", worker + ["-Q", "ingestion-bulk", "-c", "1", "-n", "bulk@%h"]),
        # One QA worker takes every stage's queue: on the default presets citation and
        # verification are milliseconds of the encoder the worker already holds, and a worker
        # of their own would load it again (memory, and a minute's start on 2 cores). With an
        # LLM, start a worker on "generation,citation,verification" alone (deploy/Procfile).
        ("qa-worker", worker + ["-Q", QA_WORKER_QUEUES, "-c", "2", "-n", "qa@%h"]),
        # A light process (no models) runs the reaper beat sends every few seconds
        # (groundedqa_site/tasks.py), so jobs of a dead worker come back even while the
        # other workers are busy; every worker also reclaims its own queues' jobs
        # (groundedqa_site/recovery.py), so recovery does not depend on this one or on beat.
        ("maintenance-worker", worker + ["-Q", "maintenance", "-P", "solo", "-n", "maintenance@%h"]),
        # Beat apart, as Celery advises: its death is a process exit the supervisor sees, where a
        # beat thread dying inside `worker -B` left the worker looking healthy.
        ("beat", celery + ["beat", "--loglevel=INFO", "-s", str(settings.VAR_DIR / "celerybeat-schedule")]),
        ("web", web_server_command(python)),
    ]


# A child that dies within STABLE_SECONDS of its start waits twice as long as last time before the
# next start, from RESTART_BACKOFF_MIN up to RESTART_BACKOFF_MAX; one that ran longer starts again
# after the minimum. So a crash loop (a port in use, a broken setting) costs a start every
# RESTART_BACKOFF_MAX seconds, not a busy loop, and a one-off kill is repaired at once.
RESTART_BACKOFF_MIN = 1.0
RESTART_BACKOFF_MAX = 30.0
STABLE_SECONDS = 60.0
CHILDREN_KEY = recovery.LAUNCHER_CHILDREN_KEY


@dataclass
class Child:
    name: str
    command: list[str]
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restarts: int = 0
    quick_deaths: int = 0  # deaths in a row, each within STABLE_SECONDS of its start
    restart_at: float | None = None  # a restart is due then (monotonic)
    last_exit: str = ""
    history: list[str] = field(default_factory=list)  # "time: what happened", newest last


class Supervisor:
    """Starts the children, restarts any that dies with a bounded back-off, stops them all.

    Supervision runs on a thread of its own, so it goes on while the main thread
    loads the demo corpus. ``stop`` first halts it under the lock, so no child is
    started again while the others are being stopped.
    """

    def __init__(
        self,
        specs: list[tuple[str, list[str]]],
        logs: Path,
        *,
        env: dict[str, str] | None = None,
        backoff_min: float = RESTART_BACKOFF_MIN,
        backoff_max: float = RESTART_BACKOFF_MAX,
        stable_seconds: float = STABLE_SECONDS,
        poll_seconds: float = 0.5,
        report=None,
    ):
        self.children = [Child(name, command) for name, command in specs]
        self.logs, self.env = logs, env
        self.backoff_min, self.backoff_max, self.stable_seconds = backoff_min, backoff_max, stable_seconds
        self.poll_seconds = poll_seconds
        self.report = report or (lambda line: print(line, file=sys.stderr, flush=True))
        self.lock = threading.Lock()
        self.halted = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="launcher-supervisor", daemon=True)

    def start(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        with self.lock:
            for child in self.children:
                self._spawn(child)
        self._publish()
        self.thread.start()

    def _spawn(self, child: Child) -> None:
        # Own process group: Ctrl-C reaches us once and we stop children in order.
        with open(self.logs / f"{child.name}.log", "ab") as log:  # the child keeps its own copy
            child.process = subprocess.Popen(
                child.command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=self.env
            )
        child.started_at, child.restart_at = time.monotonic(), None

    def _watch(self) -> None:
        while not self.halted.wait(self.poll_seconds):
            with self.lock:
                if self.halted.is_set():
                    return
                changed = [child for child in self.children if self._check(child, time.monotonic())]
            if changed:
                self._publish()

    def _check(self, child: Child, now: float) -> bool:
        """Note a death or carry out a due restart; whether anything changed."""
        if child.restart_at is None:
            code = child.process.poll()
            if code is None:
                return False
            ran = now - child.started_at
            child.quick_deaths = child.quick_deaths + 1 if ran < self.stable_seconds else 1
            delay = min(self.backoff_min * 2 ** (child.quick_deaths - 1), self.backoff_max)
            child.restart_at = now + delay
            child.last_exit = _exit_text(code)
            self._note(
                child,
                f"{child.name} (pid {child.process.pid}) {child.last_exit} after {ran:.0f} s; "
                f"starting it again in {delay:.1f} s (log: {self.logs / child.name}.log)",
            )
            return True
        if now < child.restart_at:
            return False
        self._spawn(child)
        child.restarts += 1
        self._note(child, f"{child.name} started again (pid {child.process.pid}, restart {child.restarts})")
        return True

    def _note(self, child: Child, line: str) -> None:
        child.history = [*child.history, f"{time.strftime('%H:%M:%S')} {line}"][-20:]
        self.report(f"[launcher] {line}")

    def _publish(self) -> None:
        """What the operations page shows: each child, alive or waiting to restart, and its restarts."""
        state = {
            "at": timezone.now().isoformat(),
            "children": {
                child.name: {
                    "pid": child.process.pid if child.process else None,
                    "alive": child.process is not None and child.process.poll() is None,
                    "restarts": child.restarts,
                    "last_exit": child.last_exit,
                    "history": child.history[-5:],
                }
                for child in self.children
            },
        }
        try:
            cache.set(CHILDREN_KEY, state, timeout=None)
        except DatabaseError:  # the database restarting: the next change publishes again
            pass
        finally:
            if threading.current_thread() is self.thread:
                connection.close()

    def processes(self) -> list[subprocess.Popen]:
        return [child.process for child in self.children if child.process is not None]

    def stop(self, grace: float = 20.0) -> None:
        with self.lock:
            self.halted.set()
        if self.thread.is_alive():
            self.thread.join(timeout=5)
        stop_children(self.processes(), grace=grace)
        try:
            cache.delete(CHILDREN_KEY)
        except DatabaseError:
            pass


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def web_server_command(python: str) -> list[str]:
    """gunicorn, the production WSGI server, on the embedded defaults too (bench/serving.py).

    Threads rather than more processes: the pages wait on PostgreSQL, and each
    process costs its own Django import on a 2-core machine.
    """
    return [
        python,
        "-m",
        "gunicorn",
        "groundedqa_site.wsgi:application",
        "--bind",
        ADDRESS,
        "--workers",
        os.environ.get("WEB_CONCURRENCY", "2"),
        "--threads",
        os.environ.get("WEB_THREADS", "4"),
        "--timeout",
        "120",
        "--access-logfile",
        "-",
        # Its own lines as JSON too when LOG_FORMAT=json.
        "--logger-class",
        "groundedqa_site.gunicorn_logs.Logger",
        # gunicorn's control socket defaults to one path per user, which a second gunicorn
        # (a test, a benchmark) would fight over; nothing here uses it.
        "--no-control-socket",
    ]


def stop_children(children: list[subprocess.Popen], grace: float = 20.0) -> None:
    """Ask every child to stop, give them ``grace`` seconds between them, then kill the rest.

    A worker in the middle of a task finishes it before it exits (Celery's warm shutdown); one
    still busy when the grace runs out is killed, and the reaper hands its job to the next worker
    (the job's lease). The grace is shared: waiting on each child in turn for the whole of it made
    Ctrl-C take over a minute while the demo corpus embedded."""
    for child in children:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def load_demo_corpus(team: Team) -> None:
    bench = settings.SHARED_DATA_DIR / "analyst-bench"
    if (bench / "corpus").is_dir():
        name, documents = "analyst-bench", demo_documents_analyst_bench(bench)
    else:
        name, documents = "demo", demo_documents_sample()
    corpus = Corpus.objects.filter(name=name).first() or services.corpus_create(name=name, team=team)
    if Document.objects.filter(corpus=corpus, status=Document.Status.READY).count() >= len(documents):
        print(f"Corpus {name!r}: {len(documents)} documents ready.", flush=True)
        return
    for parsed in tqdm(documents, desc=f"queueing {name}", unit="doc"):
        services.document_stage(corpus=corpus, parsed=parsed, filename=parsed.external_id, bulk=True)
    wait_until_ready(corpus, len(documents))


# How long "Ready" waits for the QA worker's warm-up (qa/warmup.py) at most; past it, the site is
# usable all the same and the first question loads what it needs itself.
MODELS_WAIT_SECONDS = 300


def wait_for_answering_models(since, timeout: float = MODELS_WAIT_SECONDS) -> None:
    """Until a QA worker process has asked its warm-up question since ``since``, so the first
    question after "Ready" is as fast as the later ones."""
    from qa.warmup import warmups

    if not settings.WORKER_WARM_UP:
        return
    since_iso = since.isoformat(timespec="seconds")

    def warm() -> list[dict]:
        return [w for w in warmups() if w["role"] == "worker" and w["finished_at"] >= since_iso]

    deadline = time.monotonic() + timeout
    if not warm():
        print("Loading the answering models...", flush=True)
    while not (done := warm()):
        if time.monotonic() > deadline:
            print(
                f"The answering models are still loading after {timeout:.0f} s; "
                "the first question will wait for them.",
                flush=True,
            )
            return
        time.sleep(1)
    print(f"Answering models loaded in {min(w['seconds'] for w in done):.1f} s.", flush=True)


def demo_documents_analyst_bench(root: Path) -> list[parsing.ParsedDocument]:
    gold = set(parsing.analyst_bench_gold_ids(root))
    documents = list(parsing.iter_analyst_bench_corpus(root))
    # The documents the demo questions need are embedded first; the rest follow.
    documents.sort(key=lambda d: d.external_id not in gold)
    return documents


def demo_documents_sample() -> list[parsing.ParsedDocument]:
    documents = []
    for path in sorted(DEMO_SAMPLE.glob("*.txt")):
        documents.extend(parsing.parse_bytes(path.read_bytes(), path.name))
    return documents


def wait_until_ready(corpus: Corpus, total: int) -> None:
    with tqdm(total=total, desc=f"embedding {corpus.name}", unit="doc") as bar:
        while True:
            done = Document.objects.filter(
                corpus=corpus, status__in=[Document.Status.READY, Document.Status.FAILED], pending_hash=""
            ).count()
            bar.update(done - bar.n)
            if done >= total:
                return
            time.sleep(2)


if __name__ == "__main__":
    sys.exit(main())
