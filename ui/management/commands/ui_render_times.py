"""python manage.py ui_render_times --user NAME [--repeat 5]

Times the server-side render of the UI's main pages against the current
database, as the given user sees them: the median and slowest of several
requests, the response size and the number of SQL queries. The heaviest
objects are picked on purpose (the largest document, the corpus with most
documents, the latest run), so the numbers are an upper bound for a page.
A measurement, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import statistics
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.models import Count
from django.test import Client
from django.test.utils import CaptureQueriesContext

from documents.selectors import corpora_with_counts, documents_for_user
from qa.selectors import questions_for_user
from review.selectors import answers_for_user, benchmarks_for_user, runs_for_user


class Command(BaseCommand):
    help = "Time the render of the UI's main pages for one user against the current database."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="Username to render the pages as.")
        parser.add_argument("--repeat", type=int, default=5, help="Requests per page (default 5).")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user named {options['user']!r}.")
        client = Client(SERVER_NAME="localhost")
        client.force_login(user)
        rows = []
        for name, url in self._pages(user):
            timings, cpu, queries, size, status = [], [], 0, 0, 0
            for _ in range(max(1, options["repeat"])):
                with CaptureQueriesContext(connection) as captured:
                    started, started_cpu = time.perf_counter(), time.process_time()
                    response = client.get(url)
                    timings.append(time.perf_counter() - started)
                    cpu.append(time.process_time() - started_cpu)
                queries, size, status = len(captured), len(response.content), response.status_code
            wall, own_cpu = statistics.median(timings), statistics.median(cpu)
            rows.append((name, url, status, wall, max(timings), own_cpu, queries, size))
        width = max(len(r[0]) for r in rows)
        # Wall time includes waiting for PostgreSQL and for the CPU on a busy machine; "cpu ms" is
        # this process's own CPU time (Python: views, templates), which a busy machine inflates less.
        self.stdout.write(f"{'page':<{width}}  status  median ms  max ms  cpu ms  queries  KiB  url")
        for name, url, status, median, slowest, own_cpu, queries, size in sorted(rows, key=lambda r: -r[3]):
            self.stdout.write(
                f"{name:<{width}}  {status:>6}  {median * 1000:>9.1f}  {slowest * 1000:>6.1f}"
                f"  {own_cpu * 1000:>6.1f}  {queries:>7}  {size / 1024:>4.0f}  {url}"
            )

    def _pages(self, user):
        pages = [
            ("ask", "/"),
            ("history", "/history/"),
            ("corpora", "/corpora/"),
            ("review queue", "/review/"),
            ("evaluate", "/evaluate/"),
            ("annotate: choose", "/annotate/"),
        ]
        corpus = corpora_with_counts(user).order_by("-document_count").first()
        if corpus is not None:
            pages.append((f"corpus ({corpus.document_count} documents)", f"/corpora/{corpus.pk}/"))
        by_size = documents_for_user(user).annotate(n=Count("sentences")).order_by("-n")
        largest = by_size.values_list("pk", "n").first()
        if largest is not None:
            pk, sentences = largest
            pages.append((f"document viewer ({sentences} sentences)", f"/documents/{pk}/?highlight=S1"))
            pages.append(("annotate a document", f"/annotate/?document={pk}"))
        question = questions_for_user(user).filter(status="done").order_by("-created_at").first()
        if question is not None:
            pages.append(("question / answer", f"/questions/{question.pk}/"))
            pages.append(("trace", f"/questions/{question.pk}/trace/"))
        answer = answers_for_user(user).order_by("-created_at").first()
        if answer is not None:
            pages.append(("review an answer", f"/review/answers/{answer.pk}/"))
        run = runs_for_user(user).filter(status="done").order_by("-created_at").first()
        if run is not None:
            pages.append((f"evaluation run ({run.progress_total} cases)", f"/evaluate/runs/{run.pk}/"))
        benchmark = benchmarks_for_user(user).order_by("-case_count").first()
        if benchmark is not None:
            pages.append(("benchmark", f"/benchmarks/{benchmark.pk}/"))
        return pages
