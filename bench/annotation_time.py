"""Seconds for one annotation of an analyst-bench question in the browser (headless Chromium).

    nice -n 10 .venv/bin/python -m bench annotation_time [--repeat N] [--quick]

The browser test's own annotate step (bench/browser.annotate_item) answers N
analyst-bench questions (default 5; --quick 3) of an annotation task, one after another, as one
annotator: open the question's document from the list, click each evidence sentence the
benchmark names, choose the label, write a reference answer, save. Each item is timed from its
page being there to the "Saved" message (both page loads, the opened document, the clicks); the
first item is reported apart, since it pays for Chromium's and the server's first requests. The
server's own clock for the same items (Assignment.opened_at to submitted_at, what the task page's
median shows) is reported beside it.

This is the machine's share of an annotation with no human thinking time: a floor under what an
analyst waits for, not how long an analyst takes to read and decide. Documents are stored as
ingestion would store their sentences (analyst-bench's own labels), without vectors: the flow
opens documents from the list and never searches. The server runs in this process (Django's
live-server thread, DEBUG on so static files are read from source) on the benchmark's own
database (bench/common.py). Needs Chromium (`apt-get install chromium`) and Playwright.
Not in ``python -m bench``'s default set: name it to run it.
"""

from __future__ import annotations

import json
import os
import shutil
import time

from bench.common import log, median, print_table, write_result
from bench.corpus import analyst_bench_root

PASSWORD = "bench-annotate-1"
UNANSWERABLE = "unanswerable_from_source"


def _questions(root, count: int) -> list[dict]:
    """The first ``count`` analyst-bench questions (dev, then test, then train), each on its own document."""
    chosen, documents = [], set()
    for split in ("dev", "test", "train"):
        for line in (root / "questions" / f"{split}.jsonl").read_text().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            if record["doc_id"] in documents:
                continue
            documents.add(record["doc_id"])
            chosen.append(record)
            if len(chosen) == count:
                return chosen
    return chosen


def _load(root, records: list[dict]):
    """A fresh team, corpus, benchmark and one-annotator task over the questions: (task, user, answers)."""
    from django.contrib.auth import get_user_model

    from documents.models import Corpus, Document, Membership, Sentence, Team
    from documents.parsing.benchmarks import iter_analyst_bench_gold
    from review.benchmark_files import CaseSpec, ImportPlan
    from review.evaluation.types import evidence_key
    from review.services.annotation import annotation_task_create
    from review.services.benchmarks import benchmark_import

    stamp = time.strftime("%Y%m%d-%H%M%S")
    team = Team.objects.create(name=f"bench-annotation-{stamp}")
    corpus = Corpus.objects.create(name=f"bench-annotation-{stamp}", team=team)
    users = {}
    for role in ("reviewer", "annotator"):
        user = get_user_model().objects.create_user(username=f"bench-{role}-{stamp}", password=PASSWORD)
        Membership.objects.create(team=team, user=user, role=role)
        users[role] = user
    wanted = {record["doc_id"] for record in records}
    texts: dict[str, dict[str, str]] = {}
    for parsed in iter_analyst_bench_gold(root):
        if parsed.external_id not in wanted:
            continue
        document = Document.objects.create(
            corpus=corpus,
            external_id=parsed.external_id,
            title=parsed.title,
            text=parsed.text,
            status=Document.Status.READY,
        )
        Sentence.objects.bulk_create(
            Sentence(
                document=document,
                ordinal=ordinal,
                label=s.label or f"S{ordinal + 1}",
                text=parsed.text[s.start : s.end],
                start=s.start,
                end=s.end,
            )
            for ordinal, s in enumerate(parsed.sentences)
        )
        texts[parsed.external_id] = {
            s.label or f"S{i + 1}": parsed.text[s.start : s.end] for i, s in enumerate(parsed.sentences)
        }
    cases, answers = [], {}
    for index, record in enumerate(records):
        doc_id, labels = record["doc_id"], list(record["evidence_sentences"])
        unanswerable = record.get("edge_case_type") == UNANSWERABLE
        keys = tuple(evidence_key(doc_id, label) for label in labels)
        cases.append(
            CaseSpec(
                case_id=f"q{index + 1}",
                split="dev",
                question=record["question"],
                gold_documents=(doc_id,),
                gold_evidence=keys,
                evidence_texts={key: texts[doc_id][label] for key, label in zip(keys, labels, strict=True)},
                reference_answer=record.get("answer", ""),
                answerable=not unanswerable,
            )
        )
        # The annotator answers as the benchmark does: its evidence, or none when unanswerable.
        answers[" ".join(record["question"].split())] = (
            ("Unanswerable", doc_id, [])
            if unanswerable
            else ("Answerable", doc_id, [texts[doc_id][label] for label in labels])
        )
    benchmark = benchmark_import(
        name=f"bench-annotation-{stamp}",
        plan=ImportPlan(documents=(), cases=tuple(cases)),
        corpus_name=corpus.name,
        source_format="analyst-bench",
    ).benchmark
    task = annotation_task_create(
        benchmark=benchmark,
        name="bench",
        annotators=[users["annotator"]],
        overlap=1,
        user=users["reviewer"],
    )
    return task, users["annotator"], answers


def run(args) -> None:
    # Before Django's settings load: static files read from source, and ORM calls from the thread
    # Playwright's sync API keeps an event loop in (plain synchronous code, as in the browser tests).
    os.environ.setdefault("DEBUG", "1")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from bench.common import setup_django

    setup_django()
    import re

    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    from bench.browser import CHROMIUM_ARGS, annotate_item
    from review.models import Assignment

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    count = args.repeat or (3 if args.quick else 5)
    root = analyst_bench_root()
    records = _questions(root, count)
    task, annotator, answers = _load(root, records)
    log(f"task {task.pk}: {len(records)} analyst-bench questions for {annotator.username}")

    server = LiveServerThread("127.0.0.1", StaticFilesHandler)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    url = f"http://127.0.0.1:{server.port}"
    seconds: list[float] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.set_default_timeout(60_000)
            page.goto(f"{url}/login/?next=/tasks/{task.pk}/")
            page.get_by_label("Username").fill(annotator.username)
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{url}/tasks/{task.pk}/")
            page.locator("a[href*='/tasks/assignments/']").first.click()
            for _ in records:
                page.wait_for_url(re.compile(r"/tasks/assignments/\d+/$"))
                page.locator("h1").wait_for()
                started = time.perf_counter()
                label, document, sentences = answers[" ".join(page.locator("h1").inner_text().split())]
                annotate_item(page, label, document, sentences, "bench reference answer")
                seconds.append(time.perf_counter() - started)
            browser.close()
    finally:
        server.terminate()
    server_seconds = sorted(
        (a.submitted_at - a.opened_at).total_seconds()
        for a in Assignment.objects.filter(task=task, status="done")
        if a.opened_at and a.submitted_at
    )
    rest = seconds[1:] or seconds
    rows = [
        ("browser, first item", f"{seconds[0]:.2f}"),
        (f"browser, median of the other {len(rest)}", f"{median(rest):.2f}"),
        (f"browser, median of all {len(seconds)}", f"{median(seconds):.2f}"),
        (
            "server clock (opened to saved), median",
            f"{median(server_seconds):.2f}" if server_seconds else "-",
        ),
    ]
    print_table(f"One annotation of an analyst-bench question, {len(seconds)} items", ["", "seconds"], rows)
    write_result(
        "annotation_time",
        {
            "items": len(seconds),
            "questions": [r["question"] for r in records],
            "documents": [r["doc_id"] for r in records],
            "evidence_sentences": [len(r["evidence_sentences"]) for r in records],
            "seconds_per_item": seconds,
            "first_item_s": seconds[0],
            "median_after_first_s": median(rest),
            "median_s": median(seconds),
            "server_seconds_per_item": server_seconds,
            "server_median_s": median(server_seconds) if server_seconds else None,
            "what": "machine time of one annotation in headless Chromium, no human thinking time",
        },
        quick=args.quick,
    )
