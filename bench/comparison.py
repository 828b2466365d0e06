"""The run comparison page (/evaluate/compare/) with 5 runs of 200 cases: wall time and query count.

Seeds, once, in the benchmark's own database: a benchmark of 200 synthetic gold
cases (one in eight unanswerable) and 5 finished evaluation runs whose
predictions differ run to run (each run retrieves the gold document at a
different rate, cites gold or neighbouring sentences, refuses some cases);
every prediction is scored by the real metric code (review.evaluation.evaluate)
and stored as an evaluation run stores it. Then requests the page through
Django's test client in this process (middleware, session, the view's three
data queries and the template) cold once and warm --repeat times, for the
default order (most disagreement first) and by case id, and reports p50/p95
wall time and the number of SQL queries per request.
"""

from __future__ import annotations

import random
import time

from bench.common import latency_summary, log, print_table, setup_django, write_result

BENCHMARK = "bench-comparison"
RUNS, CASES = 5, 200


def _synthetic_case(index: int, rng: random.Random) -> dict:
    doc = f"doc{index:03d}"
    answerable = index % 8 != 7
    labels = [f"S{n}" for n in rng.sample(range(1, 12), 2)] if answerable else []
    return {
        "case_id": f"q{index:03d}",
        "question": f"How many containers did report {index} say the harbour handled in {2000 + index % 25}?",
        "gold_documents": [doc],
        "gold_evidence": [f"{doc}#{label}" for label in labels],
        "evidence_texts": {
            f"{doc}#{label}": f"Report {index}, {label}: handled {rng.randint(11, 99) / 10} million "
            "containers, up from the year before, mostly through the eastern terminal."
            for label in labels
        },
        "reference_answer": f"About {rng.randint(1, 9)} million containers." if answerable else "",
        "answerable": answerable,
    }


def _synthetic_prediction(case: dict, run: int, rng: random.Random):
    from review.evaluation import Prediction

    doc = case["gold_documents"][0]
    others = [f"doc{rng.randrange(CASES):03d}" for _ in range(9)]
    hit_rate = 0.45 + 0.1 * run  # the runs differ: later ones retrieve better
    retrieved = [doc, *others] if rng.random() < hit_rate else [*others[:3], doc, *others[3:]]
    refused = (not case["answerable"] and rng.random() < 0.6) or rng.random() < 0.05
    cited = []
    if not refused:
        for key in case["gold_evidence"] or [f"{doc}#S1"]:
            cited.append(key if rng.random() < 0.5 + 0.08 * run else f"{doc}#S{rng.randint(12, 30)}")
    return Prediction(
        case_id=f"dev/{case['case_id']}",
        answer=""
        if refused
        else f"The harbour handled {rng.randint(1, 9)} million containers. {case['question']}",
        refused=refused,
        retrieved_documents=tuple(retrieved),
        cited_evidence=tuple(cited),
        cited_texts=tuple(case["evidence_texts"].get(key, f"Another sentence of {doc}.") for key in cited),
        support_score=rng.random(),
        confidence=rng.random(),
        stage_latency={"retrieval": rng.uniform(0.01, 0.2), "generation": rng.uniform(0.05, 0.8)},
    )


def seed_runs(*, user, corpus, name: str = BENCHMARK, runs: int = RUNS, cases: int = CASES, seed: int = 0):
    """A benchmark of ``cases`` synthetic cases on ``corpus`` and ``runs`` finished runs over it,
    scored by the real metric code; returns the runs (tests seed small ones the same way)."""
    from django.db import transaction
    from django.utils import timezone

    from review.evaluation import GoldCase as GoldValue
    from review.evaluation import evaluate
    from review.models import Benchmark, EvaluationCaseResult, EvaluationRun, GoldCase
    from review.services.evaluation import prediction_to_json

    rng = random.Random(seed)
    specs = [_synthetic_case(index, rng) for index in range(cases)]
    with transaction.atomic():
        benchmark = Benchmark.objects.create(name=name, corpus=corpus, version=1, source_format="synthetic")
        rows = GoldCase.objects.bulk_create(
            GoldCase(benchmark=benchmark, split="dev", corpus=corpus, provenance="imported", **spec)
            for spec in specs
        )
        gold = [
            GoldValue(
                case_id=f"dev/{s['case_id']}",
                question=s["question"],
                gold_documents=tuple(s["gold_documents"]),
                gold_evidence=tuple(s["gold_evidence"]),
                reference_answer=s["reference_answer"],
                answerable=s["answerable"],
            )
            for s in specs
        ]
        texts = {key: text for s in specs for key, text in s["evidence_texts"].items()}
        made = []
        for number in range(runs):
            predictions = [_synthetic_prediction(spec, number, rng) for spec in specs]
            outcome = evaluate(gold, predictions, texts)
            run = EvaluationRun.objects.create(
                benchmark=benchmark,
                benchmark_version=1,
                preset=("default", "hybrid", "bm25", "basic", "advanced", "rag", "chunk", "verify")[
                    number % 8
                ],
                preset_config={},
                split="dev",
                status=EvaluationRun.Status.DONE,
                progress_done=cases,
                progress_total=cases,
                metrics=outcome.metrics,
                created_by=user,
                finished_at=timezone.now(),
            )
            EvaluationCaseResult.objects.bulk_create(
                EvaluationCaseResult(
                    run=run,
                    gold_case=row,
                    gold_revision=1,
                    prediction=prediction_to_json(p),
                    metrics=per_case,
                )
                for row, p, per_case in zip(rows, predictions, outcome.per_case, strict=True)
            )
            made.append(run)
    return made


def _seeded():
    from django.contrib.auth import get_user_model

    from documents.models import Corpus, Team
    from review.models import Benchmark, EvaluationRun

    user, _ = get_user_model().objects.get_or_create(username="bench-comparison")
    team, _ = Team.objects.get_or_create(name="bench-comparison")
    # A member as members were before roles (documents migration team_membership_roles).
    team.members.add(user, through_defaults={"role": "reviewer"})
    existing = Benchmark.objects.filter(name=BENCHMARK).first()
    if existing is not None:
        return user, list(EvaluationRun.objects.filter(benchmark=existing).order_by("pk"))
    corpus, _ = Corpus.objects.get_or_create(name="bench-comparison", defaults={"team": team})
    log(f"seeding {RUNS} runs of {CASES} cases")
    return user, seed_runs(user=user, corpus=corpus)


def count_queries(client, url: str):
    """The response and the number of SQL statements the request ran.

    Counted by an execute wrapper, not the debug query log, which every request start empties."""
    from django.db import connection

    statements = []

    def counted(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(counted):
        response = client.get(url)
    return response, len(statements)


def _measure(client, url: str, repeat: int) -> dict:
    started = time.perf_counter()
    response, queries = count_queries(client, url)
    cold = time.perf_counter() - started
    assert response.status_code == 200, response.status_code
    warm = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(url)
        warm.append(time.perf_counter() - started)
    return {"cold_s": cold, "queries": queries, "bytes": len(response.content), **latency_summary(warm)}


def run(args) -> None:
    setup_django()
    from django.core import signals
    from django.db import close_old_connections
    from django.test import Client

    # One connection for the whole benchmark, as a long-lived server process keeps it (and so the
    # query count sees every query of a request).
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)

    user, runs = _seeded()
    client = Client()
    client.force_login(user)
    ids = "&".join(f"runs={run.pk}" for run in runs)
    pages = {
        "most disagreement first (default)": f"/evaluate/compare/?{ids}",
        "by case id, page 4": f"/evaluate/compare/?{ids}&order=case&page=4",
        "only cases that differ": f"/evaluate/compare/?{ids}&show=differ",
    }
    repeat = args.repeat or (5 if args.quick else 30)
    # A server process's very first request imports the views and the pipeline whatever the page;
    # timed apart, so "cold" below is this page's first request in a process already serving.
    started = time.perf_counter()
    client.get("/evaluate/")
    process_warmup = time.perf_counter() - started
    results = {label: _measure(client, url, repeat) for label, url in pages.items()}
    print(f"first request of the process (/evaluate/): {process_warmup * 1000:.0f} ms")
    print_table(
        f"/evaluate/compare/ with {len(runs)} runs of {CASES} cases ({repeat} warm requests each)",
        ["page", "cold ms", "p50 ms", "p95 ms", "queries", "KiB"],
        [
            [label, r["cold_s"] * 1000, r["p50_ms"], r["p95_ms"], r["queries"], r["bytes"] / 1024]
            for label, r in results.items()
        ],
    )
    write_result(
        "comparison",
        {
            "runs": len(runs),
            "cases": CASES,
            "repeat": repeat,
            "process_first_request_s": process_warmup,
            "pages": results,
        },
        quick=args.quick,
    )
