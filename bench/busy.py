"""Interactive work while the system is busy ingesting.

``python -m bench busy [--questions 50] [--documents N] [--import-wait 3600]``

Real processes as ``make run`` starts them (``bench.cluster``): a QA worker
(2 processes, every stage queue), the upload worker (``ingestion``), the bulk
worker (``ingestion-bulk``) and the maintenance worker (beat, the reaper),
on the file-system broker in a private folder and the benchmark's own
PostgreSQL. In order:

1. idle: two small files uploaded (``documents_submit``, as the API does),
   timed until both are ready, twice;
2. the analyst-bench corpus (``--documents``, default all 787, the documents
   its questions need first, as ``make run`` queues them) staged as a bulk
   import, and, once it is under way, the same two-file upload timed again;
3. ``--questions`` analyst-bench *train* questions asked one every 2 s while
   the import goes on: how many fail or never finish, and how many
   documents turned ready while they ran (they read different corpus versions).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.cluster import Cluster, WorkerSpec, cluster_environment, use_broker

QA_QUEUES = "requeued,retrieval,generation,citation,verification,evaluation,default"
WORKERS = [
    WorkerSpec("qa", QA_QUEUES, 2),
    WorkerSpec("ingestion", "ingestion", 1),
    WorkerSpec("bulk", "ingestion-bulk", 1),
]
MEMO = "Memo {tag} {n}. The {tag} office moves to the harbour building on Monday {n}. Staff park at gate {n}."


def _wait(predicate, timeout: float, what: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.2)
    raise TimeoutError(f"{what} took over {timeout:.0f} s")


def _upload_two(corpus, tag: str) -> float:
    """Seconds from submitting two small files to both being ready."""
    from documents import services
    from documents.models import Document

    ids = []
    for n in (1, 2):
        submitted = services.documents_submit(
            corpus=corpus, filename=f"{tag}-{n}.txt", data=MEMO.format(tag=tag, n=n).encode()
        )
        ids.extend(d.document.pk for d in submitted)
    ready = Document.objects.filter(pk__in=ids, status=Document.Status.READY)
    return _wait(lambda: ready.count() == len(ids), 900, f"the {tag} upload")


def _questions(root: Path, count: int) -> list[str]:
    import json

    lines = (root / "questions" / "train.jsonl").read_text().splitlines()
    texts = [json.loads(line)["question"] for line in lines if line.strip()]
    return [texts[i % len(texts)] for i in range(count)]


def _ask_during_import(corpus, user, texts: list[str], bulk_ids: list[int]) -> dict:
    from documents.models import Document
    from qa import services
    from qa.models import Answer, Question

    def ready() -> int:
        return Document.objects.filter(pk__in=bulk_ids, status=Document.Status.READY).count()

    ready_at_start, ids = ready(), []
    for text in texts:
        ids.append(services.question_ask(user=user, corpus=corpus, text=text, preset="default").pk)
        time.sleep(2)
    pending = Question.objects.filter(pk__in=ids, status__in=["queued", "running"])
    try:
        _wait(lambda: not pending.exists(), 1800, "the questions")
    except TimeoutError:
        pass
    rows = list(Question.objects.filter(pk__in=ids))
    return {
        "asked": len(ids),
        "done": sum(q.status == "done" for q in rows),
        "failed": sum(q.status == "failed" for q in rows),
        "never_finished": sum(q.status in ("queued", "running") for q in rows),
        "errors": sorted({q.error for q in rows if q.error})[:5],
        "duplicated_answers": sum(max(Answer.objects.filter(question=q).count() - 1, 0) for q in rows),
        "corpus_versions_read": len({q.corpus_version for q in rows}),
        "import_ready_when_asking_started": ready_at_start,
        "import_ready_when_answers_ended": ready(),
        "import_total": len(bulk_ids),
    }


def _corpus(name: str):
    from django.contrib.auth import get_user_model

    from documents import services
    from documents.models import Team

    team, _ = Team.objects.get_or_create(name="bench-busy")
    corpus = services.corpus_create(name=name, team=team)
    user, _ = get_user_model().objects.get_or_create(username="bench-busy")
    # A member as members were before roles (documents migration team_membership_roles).
    team.members.add(user, through_defaults={"role": "reviewer"})
    return corpus, user


def _measure(args) -> dict:
    from django.conf import settings

    from documents import parsing, services
    from documents.models import Document

    load_at_start = [round(x, 2) for x in os.getloadavg()]
    root = settings.SHARED_DATA_DIR / "analyst-bench"
    gold = set(parsing.analyst_bench_gold_ids(root))
    documents = sorted(parsing.iter_analyst_bench_corpus(root), key=lambda d: d.external_id not in gold)
    documents = documents[: args.documents] if args.documents else documents
    corpus, user = _corpus(f"bench-busy-{int(time.time())}")
    idle = [_upload_two(corpus, f"idle{n}") for n in (1, 2)]
    bulk_ids = [
        services.document_stage(
            corpus=corpus, parsed=parsed, filename=parsed.external_id, bulk=True
        ).document.pk
        for parsed in documents
    ]
    started = time.monotonic()
    bulk_ready = Document.objects.filter(pk__in=bulk_ids, status=Document.Status.READY)
    _wait(lambda: bulk_ready.count() >= min(5, len(bulk_ids)), 900, "the import to start")
    busy = _upload_two(corpus, "busy")
    questions = _ask_during_import(corpus, user, _questions(root, args.questions or 50), bulk_ids)
    try:
        _wait(lambda: bulk_ready.count() == len(bulk_ids), args.import_wait, "the whole import")
        import_seconds = time.monotonic() - started
    except TimeoutError:
        import_seconds = None
    idle_seconds = statistics.median(idle)
    return {
        "documents": len(bulk_ids),
        "upload_idle_seconds": idle,
        "upload_during_import_seconds": busy,
        "upload_ratio": busy / idle_seconds,
        "questions": questions,
        "import_seconds": import_seconds,
        "import_failed": Document.objects.filter(pk__in=bulk_ids, status=Document.Status.FAILED).count(),
        "import_ready_at_end": bulk_ready.count(),
        "loadavg_when_started": load_at_start,
    }


def run(args) -> None:
    from bench.common import BENCH_VAR_DIR, log, print_table, setup_django, write_result

    setup_django()
    from django.conf import settings
    from django.db import connection

    from groundedqa_site.broker import folder_options

    BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="busy-", dir=BENCH_VAR_DIR))
    log(f"workers, beat and logs in {workdir}")
    folder = workdir / "broker"
    env = cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url="filesystem://",
        broker_dir=folder,
        lease=settings.JOB_LEASE_SECONDS,
        heartbeat=settings.JOB_HEARTBEAT_SECONDS,
        reaper=settings.JOB_REAPER_INTERVAL_SECONDS,
    )
    with use_broker("filesystem://", folder_options(folder), "groundedqa_site.broker:Transport"):
        with Cluster(workdir, env, WORKERS):
            result = _measure(args)
    q = result["questions"]
    print_table(
        "Interactive work during a bulk import of analyst-bench (file-system broker)",
        [
            "documents",
            "upload idle s",
            "upload during import s",
            "ratio",
            "questions",
            "done",
            "failed",
            "never finished",
            "versions read",
            "import s",
        ],
        [
            [
                result["documents"],
                "/".join(f"{s:.1f}" for s in result["upload_idle_seconds"]),
                f"{result['upload_during_import_seconds']:.1f}",
                f"{result['upload_ratio']:.2f}",
                q["asked"],
                q["done"],
                q["failed"],
                q["never_finished"],
                q["corpus_versions_read"],
                f"{result['import_seconds']:.0f}" if result["import_seconds"] else "-",
            ]
        ],
    )
    write_result("busy", result, quick=args.quick)
