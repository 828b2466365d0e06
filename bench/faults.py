"""Fault injection: questions answered while Celery worker processes are SIGKILLed at random points.

``python -m bench faults [--questions N] [--brokers filesystem,redis]``

Real parts only: `celery worker` processes (prefork, as ``make run`` starts
them) and `celery beat` (the reaper) on the real broker (the file-system
broker in a private folder, or a `redis-server` started on a spare port) and
the benchmark's own PostgreSQL. Questions go in through ``qa.services.
question_ask``, as the API sends them. A killer thread picks a question whose
stage is running (and that no kill has hit before, the other questions a
whole-worker kill took down included), waits a random fraction
of a second (a random point of the stage) and SIGKILLs the worker process that
holds its lease (the owner token names host and pid); now and then it kills a
whole worker (main process and children) and starts it again. A monitor thread
samples the questions every 0.2 s from the first question on.

Measured per round: questions lost (not done at the end), duplicated answers,
and for every kill the time until the question was picked up again. The
processes themselves are started by ``bench.cluster``; tests/qa/test_faults.py
runs short rounds.

Where the parts live: the killer in ``bench.fault_killer``, one round (asking,
watching, counting) in ``bench.fault_rounds``; this module builds the corpus and
the clusters and prints the table. ``--ingestion`` runs ``bench.fault_ingestion``
(ingestion workers killed mid-document) and ``--services`` runs
``bench.fault_services`` (Redis or PostgreSQL restarted, a web worker killed mid-request) and ``--jobs``
runs ``bench.fault_jobs`` (a re-embedding's and an evaluation run's worker killed mid-job).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.cluster import (
    REPO,
    Cluster,
    RedisServer,
    WorkerSpec,
    cluster_environment,
    use_broker,
)
from bench.fault_killer import Kill, Killer
from bench.fault_rounds import RoundResult, _load_summary, fault_round

# The rounds' parts, importable from here as before the split.
__all__ = ["DEMO_QUESTIONS", "Kill", "Killer", "RoundResult", "fault_round", "run"]


DEMO_QUESTIONS = [
    "What is the capital of Westmere?",
    "How many containers did the Port of Westmere handle in 2024?",
    "How many residents were evacuated after the floods?",
    "When did Westmere gain independence?",
    "How many staff did the port authority employ?",
]


def _bench_corpus():
    """The three demo documents in a corpus of the benchmark database, embedded in this process once."""
    from django.contrib.auth import get_user_model

    from documents import services
    from documents.embedding import get_embedder
    from documents.models import Corpus, Document, Team

    team, _ = Team.objects.get_or_create(name="bench-faults")
    corpus = Corpus.objects.filter(name="bench-faults").first() or services.corpus_create(
        name="bench-faults", team=team
    )
    for path in sorted((REPO / "documents" / "demo_corpus").glob("*.txt")):
        for parsed in services.parse_upload(filename=path.name, data=path.read_bytes()):
            submitted = services.document_stage(
                corpus=corpus, parsed=parsed, filename=path.name, enqueue=False
            )
            if submitted.changed:
                document = Document.objects.get(pk=submitted.document.pk)
                services.document_embed(
                    document_id=document.pk, expected_hash=document.pending_hash, embedder=get_embedder()
                )
    user, _ = get_user_model().objects.get_or_create(username="bench-faults")
    # A member as members were before roles (documents migration team_membership_roles).
    team.members.add(user, through_defaults={"role": "reviewer"})
    return corpus, user


def _round(args, broker: str, corpus, user, workdir: Path) -> RoundResult:
    from django.conf import settings
    from django.db import connection

    from groundedqa_site.broker import folder_options
    from qa import services

    asked = []

    def ask() -> int:
        text = DEMO_QUESTIONS[len(asked) % len(DEMO_QUESTIONS)]
        asked.append(text)
        return services.question_ask(user=user, corpus=corpus, text=text, preset="default").pk

    lease, heartbeat, reaper = (
        settings.JOB_LEASE_SECONDS,
        settings.JOB_HEARTBEAT_SECONDS,
        settings.JOB_REAPER_INTERVAL_SECONDS,
    )
    workers = [
        WorkerSpec("qa1", "requeued,retrieval,generation,citation,verification,default", 2),
        WorkerSpec("qa2", "requeued,retrieval,generation,citation,verification,default", 2),
    ]
    questions = args.questions or (20 if args.quick else 100)
    options = dict(
        broker=broker,
        ask=ask,
        questions=questions,
        kill_interval=(2.0, 5.0),
        max_kills=max(questions // 5, 2),
        whole_worker_every=5,
        ask_interval=1.0,
        timeout=1800,  # from the first question on, asking included
        down=tuple(name for name in (args.down or "").split(",") if name),
    )
    database = connection.settings_dict["NAME"]
    if broker == "filesystem":
        folder = workdir / "broker"
        env = cluster_environment(
            database=database,
            broker_url="filesystem://",
            broker_dir=folder,
            lease=lease,
            heartbeat=heartbeat,
            reaper=reaper,
        )
        with use_broker("filesystem://", folder_options(folder), "groundedqa_site.broker:Transport"):
            with Cluster(workdir, env, workers) as cluster:
                return fault_round(cluster=cluster, **options)
    with RedisServer() as redis, use_broker(redis.url):
        env = cluster_environment(
            database=database,
            broker_url=redis.url,
            broker_dir=None,
            lease=lease,
            heartbeat=heartbeat,
            reaper=reaper,
        )
        with Cluster(workdir, env, workers) as cluster:
            return fault_round(cluster=cluster, **options)


def run(args) -> None:
    from bench.common import BENCH_VAR_DIR, log, print_table, setup_django, write_result

    setup_django()
    from django.conf import settings

    if args.ingestion:
        from bench import fault_ingestion

        fault_ingestion.run(args)
        return
    if args.jobs:
        from bench import fault_jobs

        fault_jobs.run(args)
        return
    if args.services:
        from bench import fault_services

        fault_services.run(args)
        return
    corpus, user = _bench_corpus()
    brokers = [b for b in (args.brokers or "filesystem,redis").split(",") if b]
    results = []
    for broker in brokers:
        if broker == "redis" and shutil.which("redis-server") is None:
            log("redis-server is not installed; the Redis round is skipped")
            continue
        BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix=f"faults-{broker}-", dir=BENCH_VAR_DIR))
        log(f"{broker}: workers, beat and logs in {workdir}")
        results.append(_round(args, broker, corpus, user, workdir))
    rows = []
    for r in results:
        recovery, requeue = sorted(r.recovery_seconds), sorted(r.requeue_seconds)
        load = _load_summary(r.load_samples)
        rows.append(
            [
                r.broker + (f" ({' and '.join(r.down)} killed)" if r.down else ""),
                r.questions,
                r.done,
                r.failed,
                r.lost,
                r.duplicated_answers,
                len(r.kills),
                sum(1 for k in r.kills if k.whole_worker),
                f"{max(requeue):.1f}" if requeue else "-",
                f"{recovery[len(recovery) // 2]:.1f}" if recovery else "-",
                f"{max(recovery):.1f}" if recovery else "-",
                f"{max(r.waited_after_requeue):.1f}" if r.waited_after_requeue else "-",
                sum(1 for seconds in recovery if seconds <= 30),
                len(r.unrecovered_kills),
                f"{r.longest_gap_between_answers:.1f}",
                f"{r.longest_pause_between_tasks:.1f}",
                f"{max(r.restart_seconds):.0f}" if r.restart_seconds else "-",
                f"{r.wall_seconds:.0f}",
                f"{load['min']:.0f}-{load['max']:.0f}" if load else "-",
            ]
        )
    print_table(
        f"Questions with worker processes SIGKILLed at random points of their stages "
        f"(lease {settings.JOB_LEASE_SECONDS} s, heartbeat {settings.JOB_HEARTBEAT_SECONDS} s, "
        f"reaper every {settings.JOB_REAPER_INTERVAL_SECONDS} s)",
        [
            "broker",
            "asked",
            "done",
            "failed",
            "lost",
            "dup. answers",
            "kills",
            "whole workers",
            "requeued max s",
            "picked up p50 s",
            "picked up max s",
            "waited after requeue max s",
            "within 30 s",
            "never picked up",
            "longest gap s",
            "longest pause in tasks s",
            "worker restart max s",
            "wall s",
            "load",
        ],
        rows,
    )
    down = "".join(f"-{name}" for name in (args.down or "").split(",") if name)
    write_result(
        f"faults-down{down}" if down else "faults",
        {
            "lease_seconds": settings.JOB_LEASE_SECONDS,
            "heartbeat_seconds": settings.JOB_HEARTBEAT_SECONDS,
            "reaper_interval_seconds": settings.JOB_REAPER_INTERVAL_SECONDS,
            "worker_reclaim_seconds": settings.JOB_WORKER_RECLAIM_SECONDS,
            "rounds": [r.as_dict() for r in results],
        },
        quick=args.quick,
    )
