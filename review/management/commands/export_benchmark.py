"""python manage.py export_benchmark NAME OUT.jsonl: one gold case a line, current revisions."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from review import selectors
from review.models import Benchmark


class Command(BaseCommand):
    help = "Export a benchmark's gold cases as JSONL (import_benchmark --format jsonl reads it back)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("out", type=Path)
        parser.add_argument("--split", choices=["train", "dev", "test"])

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark named {options['name']!r}.")
        cases = selectors.benchmark_cases(benchmark, split=options["split"])
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            count = 0
            for case in cases.iterator():
                handle.write(json.dumps(selectors.gold_case_record(case), ensure_ascii=False) + "\n")
                count += 1
        self.stdout.write(f"Wrote {count} case(s) of {benchmark.name!r} v{benchmark.version} to {out}.")
