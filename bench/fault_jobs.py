"""A corpus re-embedding and an evaluation run whose worker is SIGKILLed mid-job, started again, counted.

``python -m bench faults --jobs [--brokers filesystem,redis] [--repeat N]`` runs rounds;
tests/documents/test_reembedding_faults.py and tests/review/test_evaluation_faults.py run
short ones.

A round starts the job (``documents.reembedding.reembedding_start`` with another model, or
``review.services.evaluation.evaluation_run_create``), picks a random point of it (a count
of documents re-embedded, or of cases answered, from none to all but one), and waits until
a process of the job's worker holds the job's lease past that point. Then, as
``bench.fault_ingestion`` does, it freezes the whole worker (SIGSTOP to its process
group), checks that the job is still running under that lease, and SIGKILLs the group: the
kill lands at the point the poll chose however slow or fast the machine. A job that ended
before it was caught (a fast machine) is a miss: the round starts the same kind of job
again, up to ``tries`` times. The dead worker is started again and the round times the job
back in its queue, picked up again, and ended.

Then it counts: a re-embedding must hold exactly one vector per sentence, chunk and live
document of the corpus in its space (the unique (space, unit, item) makes a duplicate
impossible to store; the count shows a missing one); an evaluation run one result per case
((run, gold case) is unique) and, if it ended done, metrics. Evaluation questions asked again
after the kill (the killed case's question is asked anew on resume) are reported as
``re-asked``: they are stored, hidden evaluation rows, not duplicated results.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.cluster import Cluster, lease_owner_pid
from bench.corpus_rows import ingest_in_process
from bench.fault_ingestion import document_text, worker_pids

REEMBED_WORKER, EVALUATION_WORKER = "bulk", "evaluation"
REEMBED_MODELS = ("e5-small", "default")  # a miss re-embeds back, so every try has a job to kill


@dataclass
class JobKill:
    job: str  # "re-embedding" or "evaluation"
    pk: int
    done: int  # documents re-embedded or cases answered when it died
    total: int
    owner: str
    at: float  # monotonic
    requeued_after: float | None = None  # back in its queue, or already taken by another process
    picked_up_after: float | None = None  # running again under a live process's lease, or ended
    ended_after: float | None = None


@dataclass
class JobRoundResult:
    job: str
    broker: str
    kill: JobKill | None = None
    tries: int = 0  # jobs started until one was caught running
    status: str = ""  # the killed job's status at the end
    error: str = ""
    lost: int = 0  # 1 when the killed job never ended
    expected_rows: int = 0
    rows: int = 0
    duplicated_rows: int = 0
    missing_rows: int = 0
    re_asked: int = 0  # evaluation questions asked again after the kill (hidden rows)
    problems: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


# --- the kill ---------------------------------------------------------------------


def kill_mid_job(
    cluster: Cluster, name: str, model, pk: int, *, done_field: str, target: int, timeout: float
):
    """SIGKILL worker ``name`` while one of its processes runs job ``pk`` of ``model`` with at least
    ``target`` units done; None if the job ended first or nothing was caught within ``timeout``."""
    deadline = time.monotonic() + timeout
    running = model.Status.RUNNING
    while time.monotonic() < deadline:
        row = model.objects.filter(pk=pk).values_list("status", "lease_owner", done_field).first()
        if row is None or row[0] not in (model.Status.QUEUED, running):
            return None
        status, owner, done = row
        main, pids = worker_pids(cluster, name)
        if status != running or done < target or lease_owner_pid(owner) not in pids:
            time.sleep(0.01)
            continue
        os.killpg(main, signal.SIGSTOP)
        # Frozen: the job cannot end or move on now; still ours, it dies here.
        caught = (
            model.objects.filter(pk=pk, status=running, lease_owner=owner).values_list(done_field).first()
        )
        if caught is None:
            os.killpg(main, signal.SIGCONT)
            continue
        cluster.kill_worker(name)
        return caught[0], owner, time.monotonic()
    return None


def catch_job(
    cluster: Cluster,
    name: str,
    model,
    start,
    result: JobRoundResult,
    *,
    done_field: str,
    units: int,
    tries: int,
    rng: random.Random,
    timeout: float,
):
    """Start a job (``start()`` returns its pk) and kill worker ``name`` at a random count of its
    ``units`` done; a job that ended first is waited out and another started, up to ``tries`` jobs.
    (pk, what ``kill_mid_job`` returned), or (pk, None) with the problem noted on ``result``."""
    pk = caught = None
    while result.tries < tries and caught is None:
        pk = start()
        result.tries += 1
        target = rng.randrange(units)
        caught = kill_mid_job(cluster, name, model, pk, done_field=done_field, target=target, timeout=timeout)
        if caught is None:
            if name not in cluster.processes:
                restart(cluster, name)
            _wait_ended(model, pk, timeout=timeout)
    if caught is None:
        result.problems.append(f"no try of {tries} caught the {result.job} running")
    return pk, caught


def restart(cluster: Cluster, name: str) -> None:
    cluster.start(name)
    cluster.wait_ready(name)
    cluster.restarts += 1


def wait_until_ended(model, kill: JobKill, *, ended: tuple[str, ...], timeout: float) -> None:
    """Poll every 0.2 s until the killed job ends; time it back in its queue, picked up, ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = time.monotonic()
        status, owner = model.objects.filter(pk=kill.pk).values_list("status", "lease_owner").first()
        if kill.requeued_after is None and (status == model.Status.QUEUED or owner not in ("", kill.owner)):
            kill.requeued_after = now - kill.at
        if kill.picked_up_after is None and (
            status in ended or (status == model.Status.RUNNING and owner not in ("", kill.owner))
        ):
            kill.picked_up_after = now - kill.at
        if status in ended:
            kill.requeued_after = kill.requeued_after or now - kill.at
            kill.ended_after = now - kill.at
            return
        time.sleep(0.2)


# --- a re-embedding ------------------------------------------------------------------


def reembedding_corpus(corpus, embedder, *, documents: int, sentences: int) -> None:
    """``documents`` generated documents of ``sentences`` sentences, embedded in this process."""
    files = (
        (f"reembed-{n:03d}.txt", document_text("reembed", n, sentences).encode()) for n in range(documents)
    )
    ingest_in_process(corpus, files, embedder)


def reembedding_rows(space) -> tuple[int, int, int, int]:
    """(expected vectors, stored vectors, duplicated, missing) of a space over its corpus's live rows."""
    from django.db.models import Count

    from documents.models import Chunk, Document, LexicalUnit, Sentence, StoredVector

    live = Document.objects.filter(corpus_id=space.corpus_id).exclude(content_hash="")
    expected = {
        LexicalUnit.DOCUMENT: set(live.values_list("pk", flat=True)),
        LexicalUnit.CHUNK: set(Chunk.objects.filter(document__in=live).values_list("pk", flat=True)),
        LexicalUnit.SENTENCE: set(Sentence.objects.filter(document__in=live).values_list("pk", flat=True)),
    }
    want = sum(len(items) for items in expected.values())
    if space.in_columns:
        stored = Sentence.objects.filter(document__in=live).exclude(embedding=None).count()
        stored += Chunk.objects.filter(document__in=live).exclude(embedding=None).count()
        stored += len(expected[LexicalUnit.DOCUMENT])
        return want, stored, 0, want - stored
    vectors = StoredVector.objects.filter(space=space)
    stored = vectors.count()
    duplicated = sum(
        n - 1
        for n in vectors.values("unit", "item").annotate(n=Count("*")).values_list("n", flat=True)
        if n > 1
    )
    present = {(unit, item) for unit, item in vectors.values_list("unit", "item")}
    missing = sum(1 for unit, items in expected.items() for item in items if (unit, item) not in present)
    return want, stored, duplicated, missing


def kill_round(
    *,
    job: str,
    broker: str,
    cluster: Cluster,
    worker: str,
    model,
    start: Callable[[], int],
    units: int,
    done_field: str,
    ended: tuple[str, ...],
    count: Callable[[Any, JobRoundResult], None],
    total: Callable[[Any], int] | None = None,
    tries: int,
    timeout: float,
    seed: int,
) -> JobRoundResult:
    """One round of either job (module docstring): ``start()`` starts a ``model`` job and returns its
    pk, whose ``done_field`` counts the ``units`` done (the kill's ``total``: ``units``, or
    ``total(row)`` where the job says its own); ``worker`` is killed mid-job and started again, and
    once the job is in a status of ``ended``, ``count(row, result)`` counts its rows into ``result``."""
    rng = random.Random(seed)
    started = time.monotonic()
    result = JobRoundResult(job=job, broker=broker)
    pk, caught = catch_job(
        cluster,
        worker,
        model,
        start,
        result,
        done_field=done_field,
        units=units,
        tries=tries,
        rng=rng,
        timeout=timeout,
    )
    if caught is None:
        return result
    row = model.objects.get(pk=pk)
    done, owner, at = caught
    result.kill = JobKill(job, row.pk, done, total(row) if total else units, owner, at)
    restart(cluster, worker)
    wait_until_ended(model, result.kill, ended=ended, timeout=timeout)
    row.refresh_from_db()
    result.status, result.error = row.status, row.error
    result.lost = int(row.status not in ended)
    count(row, result)
    result.wall_seconds = time.monotonic() - started
    return result


def reembedding_round(
    *, broker: str, cluster: Cluster, corpus, tries: int = 5, timeout: float = 300, seed: int = 0
) -> JobRoundResult:
    """Re-embed ``corpus`` and kill worker ``bulk`` mid-job (module docstring); the corpus must be
    embedded already and ``cluster`` run a worker named ``bulk`` on the ``ingestion-bulk`` queue."""
    from documents import reembedding
    from documents.models import Corpus, EmbeddingSpace

    def start() -> int:
        current = reembedding.corpus_model(Corpus.objects.get(pk=corpus.pk))[0]
        model = REEMBED_MODELS[1] if current == REEMBED_MODELS[0] else REEMBED_MODELS[0]
        return reembedding.reembedding_start(corpus=corpus, model=model).pk

    def count(space, result: JobRoundResult) -> None:
        rows = reembedding_rows(space)
        result.expected_rows, result.rows, result.duplicated_rows, result.missing_rows = rows
        corpus.refresh_from_db()
        if space.status == EmbeddingSpace.Status.ACTIVE and corpus.embedding_space_id != space.pk:
            result.problems.append(
                f"space {space.pk} is active but the corpus searches {corpus.embedding_space_id}"
            )

    return kill_round(
        job="re-embedding",
        broker=broker,
        cluster=cluster,
        worker=REEMBED_WORKER,
        model=EmbeddingSpace,
        start=start,
        units=corpus.documents.exclude(content_hash="").count(),
        done_field="documents_done",
        ended=(EmbeddingSpace.Status.ACTIVE, EmbeddingSpace.Status.FAILED),
        count=count,
        tries=tries,
        timeout=timeout,
        seed=seed,
    )


def _wait_ended(model, pk: int, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not model.objects.filter(pk=pk, status__in=(model.Status.QUEUED, model.Status.RUNNING)).exists():
            return
        time.sleep(0.2)


# --- an evaluation run ---------------------------------------------------------------

EVALUATION_QUESTIONS = [
    "What is the capital of Westmere?",
    "How many containers did the Port of Westmere handle in 2024?",
    "How many residents were evacuated after the floods?",
    "When did Westmere gain independence?",
    "How many staff did the port authority employ?",
]


def evaluation_benchmark(corpus, *, name: str, cases: int):
    """A benchmark of ``cases`` questions about the demo documents on ``corpus`` (already ingested)."""
    from review.benchmark_files import CaseSpec, ImportPlan
    from review.services.benchmarks import benchmark_import

    specs = tuple(
        CaseSpec(
            case_id=f"fault-{n:03d}",
            split="dev",
            question=EVALUATION_QUESTIONS[n % len(EVALUATION_QUESTIONS)],
            gold_documents=(),
            gold_evidence=(),
            evidence_texts={},
            reference_answer="",
            answerable=True,
        )
        for n in range(cases)
    )
    plan = ImportPlan(documents=(), cases=specs)
    return benchmark_import(
        name=name, plan=plan, corpus_name=corpus.name, team_name=corpus.team.name, source_format="jsonl"
    ).benchmark


def evaluation_round(
    *, broker: str, cluster: Cluster, benchmark, user, tries: int = 5, timeout: float = 300, seed: int = 0
) -> JobRoundResult:
    """Run an evaluation of ``benchmark`` and kill worker ``evaluation`` mid-run (module docstring)."""
    from django.db.models import Count

    from qa.models import Question
    from review.models import EvaluationCaseResult, EvaluationRun
    from review.services.evaluation import evaluation_run_create

    questions_before = Question.objects.filter(user=user, is_evaluation=True).count()

    def start() -> int:
        return evaluation_run_create(benchmark=benchmark, preset="default", user=user).pk

    def count(run, result: JobRoundResult) -> None:
        results = EvaluationCaseResult.objects.filter(run=run)
        result.expected_rows, result.rows = run.progress_total, results.count()
        result.duplicated_rows = sum(
            n - 1
            for n in results.values("gold_case").annotate(n=Count("*")).values_list("n", flat=True)
            if n > 1
        )
        answered = results.values("gold_case").distinct().count()
        result.missing_rows = max(run.progress_total - answered, 0)
        asked = Question.objects.filter(user=user, is_evaluation=True).count() - questions_before
        # Runs the catch started before (a miss, done) asked their cases too.
        kept = EvaluationCaseResult.objects.filter(run__benchmark=benchmark, run__created_by=user)
        result.re_asked = max(asked - kept.exclude(question=None).count(), 0)
        if run.status == EvaluationRun.Status.DONE and not run.metrics:
            result.problems.append(f"run {run.pk} ended done without metrics")

    return kill_round(
        job="evaluation",
        broker=broker,
        cluster=cluster,
        worker=EVALUATION_WORKER,
        model=EvaluationRun,
        start=start,
        units=benchmark.cases.count(),
        total=lambda run: run.progress_total,
        done_field="progress_done",
        ended=(EvaluationRun.Status.DONE, EvaluationRun.Status.FAILED),
        count=count,
        tries=tries,
        timeout=timeout,
        seed=seed,
    )


# --- python -m bench faults --jobs ----------------------------------------------------


def _one_round(job: str, broker: str, workdir: Path, seed: int) -> JobRoundResult:
    from django.contrib.auth import get_user_model

    from bench.cluster import WorkerSpec, site_cluster
    from bench.faults import _bench_corpus
    from documents import services
    from documents.embedding import get_embedder
    from documents.models import Team

    stamp = f"{broker}-{int(time.time())}-{seed}"
    if job == "re-embedding":
        team, _ = Team.objects.get_or_create(name="bench-faults")
        corpus = services.corpus_create(name=f"reembed-faults-{stamp}", team=team)
        reembedding_corpus(corpus, get_embedder(), documents=10, sentences=30)
        workers = [WorkerSpec(REEMBED_WORKER, "ingestion-bulk", 1)]

        def play(cluster):
            return reembedding_round(broker=broker, cluster=cluster, corpus=corpus, seed=seed, timeout=900)
    else:
        corpus, _ = _bench_corpus()
        benchmark = evaluation_benchmark(corpus, name=f"evaluation-faults-{stamp}", cases=8)
        user, _ = get_user_model().objects.get_or_create(username=f"bench-faults-{stamp}")
        corpus.team.members.add(user, through_defaults={"role": "reviewer"})
        workers = [WorkerSpec(EVALUATION_WORKER, "evaluation", 1)]

        def play(cluster):
            return evaluation_round(
                broker=broker, cluster=cluster, benchmark=benchmark, user=user, seed=seed, timeout=900
            )

    with site_cluster(broker, workdir, workers) as cluster:
        return play(cluster)


def run(args) -> list[JobRoundResult]:
    import shutil
    import tempfile

    from django.conf import settings

    from bench.common import BENCH_VAR_DIR, log, print_table, write_result

    brokers = [b for b in (args.brokers or "filesystem,redis").split(",") if b]
    rounds = args.repeat or (1 if args.quick else 3)
    results = []
    for broker in brokers:
        if broker == "redis" and shutil.which("redis-server") is None:
            log("redis-server is not installed; the Redis rounds are skipped")
            continue
        for job in ("re-embedding", "evaluation"):
            for seed in range(rounds):
                BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
                workdir = Path(tempfile.mkdtemp(prefix=f"faults-jobs-{broker}-", dir=BENCH_VAR_DIR))
                log(f"{broker} {job} round {seed + 1}: workers and logs in {workdir}")
                results.append(_one_round(job, broker, workdir, seed))
    rows = []
    for r in results:
        k = r.kill
        rows.append(
            [
                r.broker,
                r.job,
                f"{k.done}/{k.total}" if k else "not caught",
                r.tries,
                r.status,
                r.lost,
                r.duplicated_rows,
                r.missing_rows,
                f"{r.rows}/{r.expected_rows}",
                r.re_asked,
                _seconds(k.requeued_after if k else None),
                _seconds(k.picked_up_after if k else None),
                _seconds(k.ended_after if k else None),
                "; ".join([*r.problems, r.error][:2]) or "-",
            ]
        )
    print_table(
        f"A re-embedding's and an evaluation run's worker SIGKILLed mid-job and started again "
        f"(lease {settings.JOB_LEASE_SECONDS} s)",
        [
            "broker",
            "job",
            "killed at",
            "tries",
            "ended",
            "lost",
            "dup. rows",
            "missing rows",
            "rows",
            "re-asked questions",
            "requeued after s",
            "picked up after s",
            "ended after s",
            "problems",
        ],
        rows,
    )
    print_table(
        "Recovery per fault over the rounds (seconds from the kill)",
        [
            "broker",
            "job",
            "rounds",
            "lost",
            "dup. rows",
            "picked up p50",
            "picked up max",
            "ended p50",
            "ended max",
        ],
        recovery_rows(results),
    )
    write_result(
        "faults-jobs",
        {
            "lease_seconds": settings.JOB_LEASE_SECONDS,
            "reaper_interval_seconds": settings.JOB_REAPER_INTERVAL_SECONDS,
            "worker_reclaim_seconds": settings.JOB_WORKER_RECLAIM_SECONDS,
            "rounds": [r.as_dict() for r in results],
        },
        quick=args.quick,
    )
    return results


def percentiles(values: list[float]) -> tuple[str, str]:
    """(p50, max) of ``values`` as the tables show them; the p50 of an even count is the upper middle."""
    values = sorted(values)
    return (_seconds(values[len(values) // 2]), _seconds(values[-1])) if values else ("-", "-")


def recovery_rows(results: list[JobRoundResult]) -> list[list]:
    rows = []
    for broker, job in dict.fromkeys((r.broker, r.job) for r in results):
        group = [r for r in results if (r.broker, r.job) == (broker, job)]
        kills = [r.kill for r in group if r.kill is not None]
        picked = [k.picked_up_after for k in kills if k.picked_up_after is not None]
        ended = [k.ended_after for k in kills if k.ended_after is not None]
        rows.append(
            [
                broker,
                job,
                f"{len(kills)}/{len(group)}",
                sum(r.lost for r in group),
                sum(r.duplicated_rows for r in group),
                *percentiles(picked),
                *percentiles(ended),
            ]
        )
    return rows


def _seconds(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "never"
