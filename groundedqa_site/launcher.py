"""`make run`: the whole of GroundedQA on one machine, on embedded defaults.

Starts (or reuses) the embedded PostgreSQL, migrates, creates a demo admin the
first time, starts two Celery workers (ingestion apart, so questions are
answered while a corpus embeds), a maintenance worker running Celery beat and
the reaper that re-queues jobs whose worker died, and the web server on
127.0.0.1:8000, then
loads a demo corpus with a progress bar: the analyst benchmark from
../shared/data when it is there (the documents its questions need first),
otherwise the small sample shipped in documents/demo_corpus. Ctrl-C stops
the children and the database.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundedqa_site.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from tqdm import tqdm  # noqa: E402

from documents import parsing, services  # noqa: E402
from documents.models import Corpus, Document, Team  # noqa: E402
from groundedqa_site import embedded_db  # noqa: E402

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
    children = start_children()
    print(f"GroundedQA is starting on http://{ADDRESS}/  (Ctrl-C stops everything)", flush=True)
    try:
        load_demo_corpus(team)
        print(f"Ready: http://{ADDRESS}/  (Ctrl-C stops everything)", flush=True)
        while all(child.poll() is None for child in children):
            time.sleep(1)
        print("A server process exited; stopping.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nStopping...", flush=True)
        return 0
    finally:
        stop_children(children)
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


def start_children() -> list[subprocess.Popen]:
    python = sys.executable
    worker = [
        python,
        "-m",
        "celery",
        "-A",
        "groundedqa_site",
        "worker",
        "--loglevel=WARNING",
        "--without-gossip",
        "--without-mingle",
    ]
    logs = settings.VAR_DIR / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    specs = [
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
        # A light process (no models) runs beat and the reaper it schedules every few seconds
        # (groundedqa_site/tasks.py), so jobs of a dead worker come back even while the
        # other workers are busy.
        (
            "maintenance-worker",
            worker
            + ["-B", "-s", str(settings.VAR_DIR / "celerybeat-schedule")]
            + ["-Q", "maintenance", "-P", "solo", "-n", "maintenance@%h"],
        ),
        ("web", web_server_command(python)),
    ]
    children = []
    for name, cmd in specs:
        # Own process group: Ctrl-C reaches us once and we stop children in order.
        log = open(logs / f"{name}.log", "ab")  # noqa: SIM115 - kept open for the child's lifetime
        children.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
    print(f"Logs: {logs}/", flush=True)
    return children


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
