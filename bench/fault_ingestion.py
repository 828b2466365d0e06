"""Ingestion workers SIGKILLed mid-document, started again, and every document counted.

``python -m bench faults --ingestion [--brokers filesystem,redis] [--repeat N]`` runs
rounds; tests/documents/test_ingestion_faults.py runs a short one.

A round stages documents on both lanes (uploads on the ``ingestion`` queue, a
bulk import on ``ingestion-bulk``), then, for each ingestion worker, waits until
a process of it holds the lease of a document being parsed or embedded, freezes
the whole worker (SIGSTOP to its process group), checks that the document is
still in flight under that lease (not made ready a moment before), and SIGKILLs
the group: the worker dies mid-document, at a point the poll chose, with no race
between the check and the kill. A worker frozen just after the document turned
ready is let go (SIGCONT) and caught again. The dead workers are then started
again and the round waits for every document to end.

Then every document's rows are counted (sentences, sentences with a vector,
chunks, chunks with a vector, BM25 postings and totals) and compared with a
clean import of the same files into another corpus, and the corpus's BM25
document frequencies with the clean corpus's: a document swapped in twice, or
half of one left behind, shows as a difference. The corpus version must have
moved once per document (each swap-in moves it once, a rolled-back one not at
all).
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.cluster import Cluster, lease_owner_pid
from bench.corpus_rows import clean_import, compare_with_clean

UPLOAD_WORKER, BULK_WORKER = "ingestion", "bulk"
IN_FLIGHT = ("parsing", "embedding")

# Sentences of ten words or so with words of their own per document and sentence, so the BM25
# postings and document frequencies of two documents differ and a duplicate shows in them.
SENTENCE = "In {lane} file {n} clause {i} the {word} office logged {m} parcels and {k} {word}s of cargo."
WORDS = ["harbour", "crane", "ledger", "vessel", "freight", "quay", "pilot", "customs", "berth", "tug"]


def document_text(lane: str, n: int, sentences: int) -> str:
    body = " ".join(
        SENTENCE.format(lane=lane, n=n, i=i, word=WORDS[(n + i) % len(WORDS)], m=100 * n + i, k=i * 7 + n)
        for i in range(sentences)
    )
    return f"{lane.title()} file {n}\n\n{body}"


@dataclass
class DocumentKill:
    worker: str
    document: int
    external_id: str
    status: str  # parsing or embedding, under the dead worker's lease
    progress: int
    owner: str
    at: float  # monotonic
    requeued_after: float | None = None  # back in its queue, or already taken by another process
    ready_after: float | None = None


@dataclass
class IngestionRoundResult:
    broker: str
    documents: int = 0
    ready: int = 0
    failed: int = 0
    lost: int = 0  # neither ready nor failed at the end
    # Documents whose row counts differ from the clean import's, with what differs.
    mismatched: list[str] = field(default_factory=list)
    term_stat_differences: int = 0
    swap_ins: int = 0  # the corpus version's moves: one per document made ready
    kills: list[DocumentKill] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    left_by_kill: list[str] = field(default_factory=list)  # a swap-in round: what the killed one left

    @property
    def duplicated_swap_ins(self) -> int:
        return self.swap_ins - self.ready

    def as_dict(self) -> dict:
        data = asdict(self)
        data["duplicated_swap_ins"] = self.duplicated_swap_ins
        return data


def worker_pids(cluster: Cluster, name: str) -> tuple[int, set[int]]:
    """A worker's main process id and the ids of it and every process it forked."""
    main = cluster.processes[name].pid
    try:
        children = Path(f"/proc/{main}/task/{main}/children").read_text().split()
    except OSError:
        children = []
    return main, {main, *map(int, children)}


def kill_mid_document(
    cluster: Cluster,
    name: str,
    *,
    corpus_id: int,
    timeout: float,
    feed: Callable[[], bool] | None = None,
    rng: random.Random | None = None,
) -> DocumentKill | None:
    """SIGKILL worker ``name`` (every process of it) while one of its processes parses or embeds a
    document of the corpus; None if none was caught within ``timeout``.

    ``feed`` is called whenever the worker's lane has nothing queued or in flight; it stages more
    documents and returns False once it has none left, so a fast machine that finished the
    first ones still gives the poll a document to catch.
    """
    from documents.models import Document

    rng = rng or random.Random(0)
    lane = Document.objects.filter(corpus_id=corpus_id, bulk=name == BULK_WORKER)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        main, pids = worker_pids(cluster, name)
        in_flight = [
            row
            for row in lane.filter(status__in=IN_FLIGHT)
            .exclude(lease_owner="")
            .values_list("pk", "external_id", "lease_owner")
            if lease_owner_pid(row[2]) in pids
        ]
        if not in_flight:
            if feed is not None and not lane.filter(status__in=["queued", *IN_FLIGHT]).exists():
                if not feed():
                    feed = None
            time.sleep(0.01)
            continue
        pk, external_id, owner = rng.choice(in_flight)
        time.sleep(rng.uniform(0, 0.2))  # somewhere inside the document's parse, encode or swap-in
        os.killpg(main, signal.SIGSTOP)
        # Frozen: no process of the worker can move the document on (or commit a swap-in) now.
        caught = (
            Document.objects.filter(pk=pk, lease_owner=owner, status__in=IN_FLIGHT)
            .values_list("status", "progress")
            .first()
        )
        if caught is None:
            os.killpg(main, signal.SIGCONT)  # it turned ready (or failed) just before: catch another
            continue
        cluster.kill_worker(name)
        return DocumentKill(name, pk, external_id, caught[0], caught[1], owner, time.monotonic())
    return None


@contextmanager
def term_stats_held(corpus_id: int):
    """Hold a row lock on every BM25 document frequency of the corpus, from a connection of its own;
    yields that connection's backend pid.

    A swap-in writes a document's sentences, chunks, vectors and postings, then adds its terms to
    these rows (``documents.lexical.index_document``, INSERT ... ON CONFLICT DO UPDATE): while they
    are held it waits there, inside its transaction, with its rows written and not committed.
    """
    from django.db import connections

    holder = connections.create_connection("default")
    try:
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            [(pid,)] = cursor.fetchall()
            cursor.execute("SELECT 1 FROM documents_termstat WHERE corpus_id = %s FOR UPDATE", [corpus_id])
        yield pid
    finally:
        holder.rollback()
        holder.close()


def swap_in_waiting_on(holder_pid: int) -> int | None:
    """The backend pid of a swap-in blocked by ``holder_pid``'s locks, if one is."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))"
            " AND query ILIKE '%%documents_termstat%%'",
            [holder_pid],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def swap_ins_in_flight() -> int:
    """Backends of other sessions whose last statement is a swap-in's term statistics update and
    whose transaction is still open (a killed worker's, until PostgreSQL notices and rolls it back)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
            " AND xact_start IS NOT NULL AND query ILIKE '%%INSERT INTO documents_termstat%%'"
        )
        return cursor.fetchone()[0]


def kill_in_swap_in(
    cluster: Cluster, name: str, *, corpus_id: int, stage: Callable[[], None], timeout: float
) -> DocumentKill | None:
    """SIGKILL worker ``name`` inside a document's swap-in transaction: ``stage`` stages a document of
    the corpus (which must hold a live document sharing its terms) while the corpus's term
    statistics are held, the swap-in blocks on them after writing its rows, and the worker dies
    there; None if no swap-in reached them within ``timeout``."""
    from documents.models import Document

    with term_stats_held(corpus_id) as holder:
        stage()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if swap_in_waiting_on(holder) is not None:
                break
            time.sleep(0.05)
        else:
            return None
        main, pids = worker_pids(cluster, name)
        caught = (
            Document.objects.filter(corpus_id=corpus_id, status__in=IN_FLIGHT)
            .exclude(lease_owner="")
            .values_list("pk", "external_id", "status", "progress", "lease_owner")
        )
        ours = [row for row in caught if lease_owner_pid(row[4]) in pids]
        cluster.kill_worker(name)
        if not ours:
            return None
        # Released after the kill: the blocked statement ends, then its backend finds its client
        # gone and rolls the swap-in back.
    pk, external_id, status, progress, owner = ours[0]
    return DocumentKill(
        name, pk, external_id, f"{status} (in its swap-in)", progress, owner, time.monotonic()
    )


def wait_until_ended(corpus_ids: list[int], kills: list[DocumentKill], *, timeout: float) -> None:
    """Poll every 0.2 s until no document of the corpora is queued or in flight; time each kill's
    document back in its queue and ready."""
    from documents.models import Document

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = time.monotonic()
        # Read before the rows: a document that turns ready between the two reads is then seen ready
        # in the rows of the last pass (read after, a kill's ready time could be missed).
        ended = not Document.objects.filter(
            corpus_id__in=corpus_ids, status__in=["queued", *IN_FLIGHT]
        ).exists()
        rows = {
            pk: (status, owner)
            for pk, status, owner in Document.objects.filter(pk__in=[k.document for k in kills]).values_list(
                "pk", "status", "lease_owner"
            )
        }
        for kill in kills:
            status, owner = rows.get(kill.document, ("gone", ""))
            if kill.requeued_after is None and (
                status in ("queued", "ready") or owner not in ("", kill.owner)
            ):
                kill.requeued_after = now - kill.at
            if kill.ready_after is None and status == "ready":
                kill.ready_after = now - kill.at
        if ended:
            return
        time.sleep(0.2)


# --- a round ----------------------------------------------------------------------


class Stager:
    """Stages numbered documents on a lane: uploads through ``documents_submit``, bulk ones as a
    bulk import stages them; remembers every file for the clean import."""

    def __init__(self, corpus, *, sentences: int) -> None:
        self.corpus, self.sentences = corpus, sentences
        self.files: dict[str, tuple[bytes, bool]] = {}

    def stage(self, lane: str, count: int) -> None:
        from documents import services

        bulk = lane == "bulk"
        for _ in range(count):
            n = sum(1 for _, is_bulk in self.files.values() if is_bulk == bulk)
            filename = f"{lane}-{n:03d}.txt"
            data = document_text(lane, n, self.sentences).encode()
            self.files[filename] = (data, bulk)
            if bulk:
                [parsed] = services.parse_upload(filename=filename, data=data)
                services.document_stage(corpus=self.corpus, parsed=parsed, filename=filename, bulk=True)
            else:
                services.documents_submit(corpus=self.corpus, filename=filename, data=data)

    def feeder(self, lane: str, *, batches: int, size: int) -> Callable[[], bool]:
        left = [batches]

        def feed() -> bool:
            if left[0] <= 0:
                return False
            left[0] -= 1
            self.stage(lane, size)
            return True

        return feed


def count_documents(result: IngestionRoundResult, corpus) -> None:
    """The corpus's documents by how they ended, on ``result``."""
    from documents.models import Document

    rows = list(Document.objects.filter(corpus=corpus).values_list("external_id", "status", "error"))
    result.documents = len(rows)
    result.ready = sum(1 for _, status, _ in rows if status == "ready")
    result.failed = sum(1 for _, status, _ in rows if status == "failed")
    result.lost = result.documents - result.ready - result.failed
    result.failures = [f"{external_id}: {error}" for external_id, status, error in rows if status == "failed"]


def ingestion_round(
    *,
    broker: str,
    cluster: Cluster,
    corpus,
    clean_corpus,
    embedder,
    documents_per_lane: int = 10,
    sentences: int = 40,
    catch_timeout: float = 120,
    timeout: float = 300,
    seed: int = 0,
) -> IngestionRoundResult:
    """Stage ``documents_per_lane`` documents on each lane, kill each ingestion worker mid-document,
    start them again, wait for every document to end, and count (module docstring)."""
    from documents.models import Corpus

    rng = random.Random(seed)
    started = time.monotonic()
    version_before = Corpus.objects.get(pk=corpus.pk).version
    stager = Stager(corpus, sentences=sentences)
    stager.stage("upload", documents_per_lane)
    stager.stage("bulk", documents_per_lane)
    kills = []
    for name, lane in ((UPLOAD_WORKER, "upload"), (BULK_WORKER, "bulk")):
        kill = kill_mid_document(
            cluster,
            name,
            corpus_id=corpus.pk,
            timeout=catch_timeout,
            feed=stager.feeder(lane, batches=10, size=max(2, documents_per_lane // 2)),
            rng=rng,
        )
        if kill is not None:
            kills.append(kill)
    # Both started at once: their models load side by side instead of one after the other.
    dead = [name for name in (UPLOAD_WORKER, BULK_WORKER) if name not in cluster.processes]
    for name in dead:
        cluster.start(name)
    for name in dead:
        cluster.wait_ready(name)
        cluster.restarts += 1
    wait_until_ended([corpus.pk], kills, timeout=timeout)
    result = IngestionRoundResult(broker=broker, kills=kills)
    result.wall_seconds = time.monotonic() - started
    count_documents(result, corpus)
    result.swap_ins = Corpus.objects.get(pk=corpus.pk).version - version_before
    clean_import(clean_corpus, stager.files, embedder)
    result.mismatched, result.term_stat_differences = compare_with_clean(corpus.pk, clean_corpus.pk)
    return result


def swap_in_round(
    *,
    broker: str,
    cluster: Cluster,
    corpus,
    clean_corpus,
    embedder,
    sentences: int = 20,
    timeout: float = 300,
) -> IngestionRoundResult:
    """Kill worker ``ingestion`` inside a document's swap-in transaction (``kill_in_swap_in``), start
    it again, wait for the document to end, and count as ``ingestion_round`` does. ``corpus`` must be
    empty. ``result.left_by_kill`` says what the killed swap-in left once its backend ended: it must
    be nothing (no sentence, not live, the corpus version unmoved)."""
    from documents import services
    from documents.models import Corpus, Document, Sentence

    started = time.monotonic()
    stager = Stager(corpus, sentences=sentences)
    stager.stage("upload", 1)
    [(first, (first_data, _))] = stager.files.items()
    wait_until_ended([corpus.pk], [], timeout=timeout)  # the first one live: its terms in the statistics
    version_before = Corpus.objects.get(pk=corpus.pk).version
    second = "upload-001.txt"
    second_data = document_text("upload", 1, sentences).encode()
    stager.files[second] = (second_data, False)
    kill = kill_in_swap_in(
        cluster,
        UPLOAD_WORKER,
        corpus_id=corpus.pk,
        stage=lambda: services.documents_submit(corpus=corpus, filename=second, data=second_data),
        timeout=timeout,
    )
    result = IngestionRoundResult(broker=broker, kills=[kill] if kill else [])
    if kill is None:
        result.failures.append("no swap-in reached the held term statistics")
        return result
    deadline = time.monotonic() + 60
    while swap_ins_in_flight() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = []
    if swap_ins_in_flight():
        left.append("its backend still open after 60 s")
    if Sentence.objects.filter(document_id=kill.document).exists():
        left.append("sentences")
    if Document.objects.filter(pk=kill.document, status=Document.Status.READY).exists():
        left.append("the document live")
    if Corpus.objects.get(pk=corpus.pk).version != version_before:
        left.append("the corpus version moved")
    result.left_by_kill = left
    cluster.start(UPLOAD_WORKER)
    cluster.wait_ready(UPLOAD_WORKER)
    cluster.restarts += 1
    wait_until_ended([corpus.pk], [kill], timeout=timeout)
    count_documents(result, corpus)
    result.swap_ins = Corpus.objects.get(pk=corpus.pk).version - version_before + 1  # the first one's too
    clean_import(clean_corpus, stager.files, embedder)
    result.mismatched, result.term_stat_differences = compare_with_clean(corpus.pk, clean_corpus.pk)
    result.wall_seconds = time.monotonic() - started
    return result


def fault_name(kill: DocumentKill) -> str:
    where = "inside a swap-in" if "swap-in" in kill.status else "mid-document"
    return f"{'upload' if kill.worker == UPLOAD_WORKER else 'bulk'} worker killed {where}"


def recovery_table(results: list[IngestionRoundResult]) -> tuple[list[str], list[list]]:
    """Per broker and fault: kills, lost and duplicated documents of their rounds, and the p50 and
    max of the times back in the queue and ready."""
    from bench.fault_jobs import percentiles

    groups: dict[tuple[str, str], list[tuple[IngestionRoundResult, DocumentKill]]] = {}
    for r in results:
        for kill in r.kills:
            groups.setdefault((r.broker, fault_name(kill)), []).append((r, kill))
    rows = []
    for (broker, fault), pairs in groups.items():
        rounds = {id(r): r for r, _ in pairs}.values()
        rows.append(
            [
                broker,
                fault,
                len(pairs),
                sum(r.lost for r in rounds),
                sum(r.duplicated_swap_ins + len(r.mismatched) for r in rounds),
                *percentiles([k.requeued_after for _, k in pairs if k.requeued_after is not None]),
                *percentiles([k.ready_after for _, k in pairs if k.ready_after is not None]),
            ]
        )
    header = ["broker", "fault", "kills", "lost", "dup. or unlike clean", "requeued p50", "requeued max"]
    return [*header, "ready p50", "ready max"], rows


# --- python -m bench faults --ingestion --------------------------------------------


def _one_round(
    broker: str, workdir: Path, seed: int, documents_per_lane: int, *, swap_in: bool = False
) -> IngestionRoundResult:
    from bench.cluster import WorkerSpec, site_cluster
    from documents import services
    from documents.embedding import get_embedder
    from documents.models import Team

    team, _ = Team.objects.get_or_create(name="bench-faults")
    stamp = f"{broker}-{int(time.time())}-{seed}"
    corpus = services.corpus_create(name=f"ingestion-faults-{stamp}", team=team)
    clean = services.corpus_create(name=f"ingestion-clean-{stamp}", team=team)
    # As ``make run``: the upload worker and the bulk worker, one process each (``site_cluster``
    # adds the maintenance worker and beat).
    workers = [WorkerSpec(UPLOAD_WORKER, "ingestion", 1), WorkerSpec(BULK_WORKER, "ingestion-bulk", 1)]
    round_options = dict(
        broker=broker, corpus=corpus, clean_corpus=clean, embedder=get_embedder(), timeout=900
    )
    if swap_in:
        workers, play = workers[:1], swap_in_round
    else:
        round_options.update(documents_per_lane=documents_per_lane, seed=seed)
        play = ingestion_round
    with site_cluster(broker, workdir, workers, env={"INGEST_ENCODE_SENTENCES": "80"}) as cluster:
        return play(cluster=cluster, **round_options)


def run(args) -> None:
    import shutil
    import tempfile

    from django.conf import settings

    from bench.common import BENCH_VAR_DIR, log, print_table, write_result

    brokers = [b for b in (args.brokers or "filesystem,redis").split(",") if b]
    rounds = args.repeat or (1 if args.quick else 3)
    per_lane = 6 if args.quick else 10
    results = []
    for broker in brokers:
        if broker == "redis" and shutil.which("redis-server") is None:
            log("redis-server is not installed; the Redis rounds are skipped")
            continue
        for seed in range(rounds):
            BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
            workdir = Path(tempfile.mkdtemp(prefix=f"faults-ingestion-{broker}-", dir=BENCH_VAR_DIR))
            log(f"{broker} round {seed + 1}: ingestion workers and logs in {workdir}")
            results.append(_one_round(broker, workdir, seed, per_lane))
            workdir = Path(tempfile.mkdtemp(prefix=f"faults-swap-in-{broker}-", dir=BENCH_VAR_DIR))
            log(f"{broker} round {seed + 1}, a kill inside a swap-in: worker and logs in {workdir}")
            results.append(_one_round(broker, workdir, seed, per_lane, swap_in=True))
    rows = []
    for r in results:
        for kill in r.kills:
            rows.append(
                [
                    r.broker,
                    r.documents,
                    r.ready,
                    r.failed,
                    r.lost,
                    r.duplicated_swap_ins,
                    len(r.mismatched),
                    r.term_stat_differences,
                    f"{kill.worker}: {kill.status} {kill.progress} %",
                    f"{kill.requeued_after:.1f}" if kill.requeued_after is not None else "never",
                    f"{kill.ready_after:.1f}" if kill.ready_after is not None else "never",
                    ", ".join(r.left_by_kill) or "-",
                ]
            )
    print_table(
        f"Ingestion workers SIGKILLed mid-document and started again (lease {settings.JOB_LEASE_SECONDS} s)",
        [
            "broker",
            "documents",
            "ready",
            "failed",
            "lost",
            "dup. swap-ins",
            "docs with rows unlike a clean import",
            "BM25 stats differing",
            "kill",
            "requeued after s",
            "ready after s",
            "left by a killed swap-in",
        ],
        rows,
    )
    print_table("Recovery per fault over the rounds (seconds from the kill)", *recovery_table(results))
    write_result(
        "faults-ingestion",
        {
            "lease_seconds": settings.JOB_LEASE_SECONDS,
            "reaper_interval_seconds": settings.JOB_REAPER_INTERVAL_SECONDS,
            "worker_reclaim_seconds": settings.JOB_WORKER_RECLAIM_SECONDS,
            "rounds": [r.as_dict() for r in results],
        },
        quick=args.quick,
    )
