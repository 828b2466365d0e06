"""Fault injection, short version (``python -m bench faults`` runs the long one).

Real `celery worker` processes (prefork, two per worker, as ``make run`` runs
them), the maintenance worker and `celery beat` (the reaper), the real broker (the file-system one
in a private folder, or a private `redis-server`) and the test database.
Worker processes are SIGKILLed at random points of the retrieval and
generation stages; one kill takes a whole worker (main process and children),
which is then started again; one round kills the maintenance worker and beat
and leaves them down. Leases are short here (6 s) to keep the run brief;
the defaults are in settings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from django.db import connection

from bench.cluster import Cluster, RedisServer, WorkerSpec, cluster_environment, use_broker
from bench.faults import fault_round
from documents import services as documents_services
from documents.models import Document
from groundedqa_site import embedded_db
from groundedqa_site.broker import folder_options
from qa import services
from qa.models import Answer, Question
from tests.conftest import wait_for
from tests.qa.test_api import client_for

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LEASE, HEARTBEAT, REAPER = 6, 2, 1
# A killed stage is back in the queue within the lease plus one reaper period; the
# slack is for a loaded machine. Being picked up again then waits for a free worker
# process, which the bench measures (recovered_after) but no test bounds.
REQUEUE_BOUND = LEASE + REAPER + 10
QA_QUEUES = "requeued,retrieval,generation,citation,verification,default"


@pytest.fixture(autouse=True)
def short_leases(settings):
    """This process asks the questions; its resend deadlines follow the cluster's lease."""
    settings.JOB_LEASE_SECONDS, settings.JOB_HEARTBEAT_SECONDS = LEASE, HEARTBEAT


@pytest.fixture(autouse=True)
def cluster_settles(transactional_db):
    """Each test leaves the module's workers idle before its database is flushed.

    The cluster outlives a test; a worker still embedding a bulletin or answering a
    question while the flush truncates the tables deadlocks with it (seen in CI).
    Requesting ``transactional_db`` puts this teardown before the flush.
    """
    yield
    wait_for(
        lambda: (
            not Document.objects.exclude(status__in=["ready", "failed"]).exists()
            and not Question.objects.filter(status__in=["queued", "running"]).exists()
        ),
        timeout=300,
        message="the cluster's documents and questions to settle before the flush",
    )


FILESYSTEM_TRANSPORT = "groundedqa_site.broker:Transport"


def start_cluster(folder, broker_url, broker_dir=None, workers=None) -> Cluster:
    env = cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url=broker_url,
        broker_dir=broker_dir,
        lease=LEASE,
        heartbeat=HEARTBEAT,
        reaper=REAPER,
    )
    workers = workers or [WorkerSpec("qa1", QA_QUEUES, 2), WorkerSpec("qa2", QA_QUEUES, 2)]
    return Cluster(folder, env, workers)


@pytest.fixture(scope="module")
def filesystem_cluster(django_db_setup, django_db_blocker, tmp_path_factory):
    """As ``make run``: two QA workers, upload and bulk ingestion workers, the maintenance worker.

    On a private broker folder.
    """
    folder = tmp_path_factory.mktemp("faults-filesystem")
    broker = folder / "broker"
    workers = [
        WorkerSpec("qa1", QA_QUEUES, 2),
        WorkerSpec("qa2", QA_QUEUES, 2),
        WorkerSpec("ingestion", "ingestion", 1),
        WorkerSpec("bulk", "ingestion-bulk", 1),
    ]
    with django_db_blocker.unblock():
        database = connection.settings_dict["NAME"]
    with use_broker("filesystem://", folder_options(broker), FILESYSTEM_TRANSPORT):
        env = cluster_environment(
            database=database,
            broker_url="filesystem://",
            broker_dir=broker,
            lease=LEASE,
            heartbeat=HEARTBEAT,
            reaper=REAPER,
        )
        # Ingestion encodes queued documents together up to INGEST_ENCODE_SENTENCES: small groups
        # (two short bulletins, one 41-sentence report) keep documents turning ready one group at a
        # time, so an upload can be seen passing a bulk import and questions see the corpus change.
        env["INGEST_ENCODE_SENTENCES"] = "6"
        with Cluster(folder, env, workers) as cluster:
            yield cluster


def asker(user, corpus):
    texts = [
        "What is the capital of Westmere?",
        "How many staff did the port authority employ?",
        "How many containers did the Port of Westmere handle in 2024?",
        "When did Westmere gain independence?",
    ]
    asked = []

    def ask() -> int:
        text = texts[len(asked) % len(texts)]
        asked.append(text)
        return services.question_ask(user=user, corpus=corpus, text=text).pk

    return ask


def assert_survived(result) -> None:
    assert result.kills, "the killer found no running stage to kill"
    assert result.lost == 0, f"{result.lost} question(s) never finished"
    assert result.failed == 0, result.failures
    assert result.duplicated_answers == 0
    assert not result.unrecovered_kills, result.unrecovered_kills
    assert max(result.requeue_seconds) <= REQUEUE_BOUND, result.kills


def test_killed_workers_lose_no_question_on_the_file_system_broker(filesystem_cluster, analyst, westmere):
    result = fault_round(
        broker="filesystem",
        ask=asker(analyst, westmere),
        questions=8,
        cluster=filesystem_cluster,
        kill_interval=(0.5, 1.5),
        max_kills=2,
        # Every kill takes a whole worker (main process and its pool) down: with each question
        # killed at most once, 8 questions on a quiet machine may give no third kill to wait for.
        # The Redis round below kills single pool processes.
        whole_worker_every=1,
        timeout=150,
        until_killed=8,
    )
    assert_survived(result)
    assert any(k.whole_worker for k in result.kills)


def test_with_the_maintenance_worker_and_beat_killed_killed_workers_still_lose_no_question(
    filesystem_cluster, analyst, westmere
):
    """The reaper's two processes die just after the first question: nothing re-sends the reaper,
    and the QA workers' own reclaim timers (groundedqa_site/recovery.py) are all that is left."""
    try:
        result = fault_round(
            broker="filesystem",
            ask=asker(analyst, westmere),
            questions=8,
            cluster=filesystem_cluster,
            kill_interval=(0.5, 1.5),
            max_kills=2,
            timeout=150,
            down=("maintenance", "beat"),
            until_killed=8,
        )
        assert not {"maintenance", "beat"} & set(filesystem_cluster.processes)  # still down at the end
    finally:
        filesystem_cluster.restart("maintenance")
        filesystem_cluster.restart("beat")
    assert_survived(result)


def test_killed_workers_lose_no_question_on_redis(analyst, westmere, tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    with RedisServer() as redis, use_broker(redis.url):
        with start_cluster(tmp_path, redis.url) as cluster:
            result = fault_round(
                broker="redis",
                ask=asker(analyst, westmere),
                questions=6,
                cluster=cluster,
                kill_interval=(0.5, 1.5),
                max_kills=2,
                timeout=150,
                until_killed=8,
            )
    assert_survived(result)


BULLETIN = (
    "Westmere Bulletin {n}\n\nThe harbour office {n} recorded {m} arrivals in week {n}. "
    "Inspectors checked {m} cranes."
)


def test_questions_asked_during_ingestion_all_succeed(filesystem_cluster, analyst, westmere):
    for n in range(30):
        text = BULLETIN.format(n=n, m=100 + n)
        documents_services.documents_submit(corpus=westmere, filename=f"bulletin-{n}.txt", data=text.encode())
    # Once the ingestion worker has its model loaded, documents turn ready one after another.
    wait_for(
        lambda: Document.objects.filter(
            corpus=westmere, external_id__startswith="bulletin", status="ready"
        ).exists(),
        timeout=120,
        message="the first bulletin to be ready",
    )
    ask = asker(analyst, westmere)
    ids = []
    for _ in range(6):
        ids.append(ask())
        wait_for(lambda: Question.objects.get(pk=ids[-1]).status != "queued", timeout=60, message="a claim")
    wait_for(
        lambda: not Question.objects.filter(pk__in=ids, status__in=["queued", "running"]).exists(),
        timeout=120,
        message="the questions to finish",
    )
    questions = list(Question.objects.filter(pk__in=ids))
    assert [q.error for q in questions if q.status != "done"] == []
    # They really ran while documents turned ready: they read different corpus versions.
    assert len({q.corpus_version for q in questions}) > 1


REPORT = "Quarterly Freight Report {n}\n\n" + " ".join(
    f"In month {{n}}.{i} the terminal moved {{m}} pallets of cargo number {i}." for i in range(40)
)


def test_an_upload_is_not_queued_behind_a_bulk_import(filesystem_cluster, westmere):
    def ready(external_ids) -> int:
        return Document.objects.filter(corpus=westmere, external_id__in=external_ids, status="ready").count()

    # Both ingestion workers have their model loaded before the race starts.
    documents_services.documents_submit(
        corpus=westmere, filename="warm-up.txt", data=b"Warm up. Two sentences."
    )
    wait_for(lambda: ready(["warm-up"]) == 1, timeout=120, message="the upload worker to warm up")
    bulk = []
    for n in range(40):
        [parsed] = documents_services.parse_upload(
            filename=f"freight-{n}.txt", data=REPORT.format(n=n, m=1000 + n).encode()
        )
        documents_services.document_stage(
            corpus=westmere, parsed=parsed, filename=f"freight-{n}.txt", bulk=True
        )
        bulk.append(parsed.external_id)
    wait_for(lambda: ready(bulk) >= 1, timeout=120, message="the bulk import to start")

    for name in ("memo-a", "memo-b"):
        documents_services.documents_submit(
            corpus=westmere, filename=f"{name}.txt", data=f"Memo {name}. The office moves on Monday.".encode()
        )
    wait_for(lambda: ready(["memo-a", "memo-b"]) == 2, timeout=120, message="the two uploaded files")

    # The upload was ready while most of the import still waited: it did not queue behind it.
    assert ready(bulk) < len(bulk) / 2
    wait_for(lambda: ready(bulk) > 5, timeout=180, message="the bulk import to keep going")


def worker_niceness(cluster: Cluster, name: str) -> set[int]:
    """The niceness of a worker's main process and of every pool process it forked."""
    main = cluster.processes[name].pid
    children = Path(f"/proc/{main}/task/{main}/children").read_text().split()
    return {os.getpriority(os.PRIO_PROCESS, pid) for pid in [main, *map(int, children)]}


def test_the_bulk_import_worker_leaves_the_cpu_to_uploads_and_questions(filesystem_cluster, settings):
    """An import's embedding runs at a lower CPU priority, so an upload or a question is not slowed by it."""
    [normal] = worker_niceness(filesystem_cluster, "ingestion") | worker_niceness(filesystem_cluster, "qa1")
    assert worker_niceness(filesystem_cluster, "bulk") == {min(normal + settings.BULK_WORKER_NICE, 19)}


def read_only_folder(tmp_path):
    """A broker folder that refuses writes: chmod for a normal user, a read-only tmpfs for root."""
    folder = tmp_path / "read-only-broker"
    folder.mkdir()
    if os.geteuid() != 0:
        options = folder_options(folder)
        (folder / "queue").chmod(0o555)
        return options, lambda: (folder / "queue").chmod(0o755)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"running as root and cannot mount a read-only folder: {mounted.stderr.decode().strip()}")
    options = folder_options(folder)
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    return options, lambda: subprocess.run(["umount", str(folder)], check=False)


WRITE_REFUSED = ("Read-only file system", "Permission denied", "No space left on device")


def full_folder(tmp_path):
    """A broker folder on a file system with no space left: a 64 KiB tmpfs, filled (root only)."""
    if os.geteuid() != 0:
        pytest.skip("filling a file system of its own needs root (mount -t tmpfs)")
    folder = tmp_path / "full-broker"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs: {mounted.stderr.decode().strip()}")
    options = folder_options(folder)
    filler = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(filler, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: full
        pass
    finally:
        os.close(filler)
    return options, lambda: subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("broken", [read_only_folder, full_folder], ids=["read-only", "disk-full"])
def test_a_broker_folder_that_refuses_writes_gives_a_clear_error(analyst, westmere, tmp_path, broken):
    options, restore = broken(tmp_path)
    try:
        with use_broker("filesystem://", options, FILESYSTEM_TRANSPORT):
            response = client_for(analyst).post(
                "/api/questions/",
                {"corpus": westmere.name, "question": "What is the capital of Westmere?"},
                format="json",
            )
    finally:
        restore()
    assert response.status_code == 503, response.content
    detail = response.json()["detail"]
    assert "job queue did not accept" in detail
    assert any(reason in detail for reason in WRITE_REFUSED)
    assert "CELERY_BROKER_DIR" in detail
    question = Question.objects.get(text="What is the capital of Westmere?")
    assert question.status == Question.Status.FAILED and question.error == detail


def test_questions_asked_across_a_postgresql_restart_end_answered_or_with_a_reason(
    filesystem_cluster, analyst, westmere, settings
):
    """The database stops while questions run and comes back: none is left queued or running."""
    pgdata = settings.VAR_DIR / "test-pg" / str(os.getpid())
    if settings.EMBEDDED_PGDATA is None or not (pgdata / "postmaster.pid").exists():
        pytest.skip("needs the embedded test server (DATABASE_URL points elsewhere)")
    ask = asker(analyst, westmere)
    ids = [ask() for _ in range(6)]
    # Claimed: running, or already past it (a fast worker can answer between two polls).
    wait_for(
        lambda: Question.objects.filter(pk__in=ids).exclude(status="queued").exists(),
        timeout=120,
        message="a claim",
    )
    connection.close()
    assert embedded_db.stop(pgdata)
    # Workers meet a database that is gone: their stages fail, renewals fail, the reaper fails.
    time.sleep(LEASE / 2)
    embedded_db.ensure_running(pgdata)
    later = [ask() for _ in range(2)]

    wait_for(
        lambda: not Question.objects.filter(pk__in=ids + later, status__in=["queued", "running"]).exists(),
        timeout=240,
        message="every question to finish after the restart",
    )
    questions = list(Question.objects.filter(pk__in=ids + later))
    unexplained = [q.pk for q in questions if q.status != "done" and not q.error.strip()]
    assert unexplained == []
    # Asked after the restart: answered, so the workers reconnected.
    assert {q.status for q in questions if q.pk in later} == {"done"}
    assert all(Answer.objects.filter(question=q).count() == (q.status == "done") for q in questions)
