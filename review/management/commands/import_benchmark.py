"""python manage.py import_benchmark PATH --name NAME --format analyst-bench|clapnq|mtrag-un|jsonl

``mtrag-un`` writes one benchmark and one corpus per collection, named
``NAME-<collection>`` (``--collection`` picks some).

Reads and validates every file first: a malformed line stops the import with
a message naming the file and line, and nothing is written. Then, in one
transaction, stages the corpus documents and writes the gold cases; the
documents are embedded afterwards by the workers (watched with a progress
bar) or here with ``--in-process``.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from documents.errors import DomainError
from documents.management.embedding import embed_in_process, failed_documents, wait_for_workers
from documents.models import Corpus, Document
from documents.parsing import ParseError
from review.benchmark_files import read_analyst_bench, read_cases_jsonl, read_clapnq, read_mtrag_un
from review.models import Benchmark
from review.services.benchmarks import benchmark_import


class Command(BaseCommand):
    help = "Import a benchmark (questions, gold evidence and, for analyst-bench and clapnq, its corpus)."

    def add_arguments(self, parser):
        parser.add_argument(
            "paths", nargs="+", type=Path, help="analyst-bench directory, CLAPNQ files/dir, or JSONL."
        )
        parser.add_argument("--name", required=True, help="Benchmark name; created, or updated if it exists.")
        parser.add_argument(
            "--format", required=True, choices=["analyst-bench", "clapnq", "mtrag-un", "jsonl"]
        )
        parser.add_argument(
            "--corpus", help="Corpus name (default: the benchmark's, else the benchmark name)."
        )
        parser.add_argument(
            "--team", default="Analysts", help="Team owning a new corpus (default: Analysts)."
        )
        parser.add_argument(
            "--documents",
            choices=["all", "gold"],
            default="all",
            help="analyst-bench: ingest the whole corpus, or only the documents the questions ask about.",
        )
        parser.add_argument(
            "--split", default="dev", choices=["train", "dev", "test"], help="clapnq: the split."
        )
        parser.add_argument(
            "--collection",
            action="append",
            help="mtrag-un: import only this collection (govt, clapnq, ibmcloud, fiqa); repeatable.",
        )
        parser.add_argument("--in-process", action="store_true", help="Embed here instead of in the workers.")
        parser.add_argument("--no-wait", action="store_true", help="Queue the documents and return.")

    def handle(self, *args, **options):
        paths, fmt = options["paths"], options["format"]
        for path in paths:
            if not path.exists():
                raise CommandError(f"{path}: no such file or directory.")
        if fmt != "clapnq" and len(paths) > 1:
            raise CommandError(f"--format {fmt} takes one path.")
        if fmt == "mtrag-un":
            return self._import_mtrag_un(paths[0], options)
        corpus_name = options["corpus"] or self._default_corpus(options["name"])
        try:
            if fmt == "analyst-bench":
                plan = read_analyst_bench(paths[0], documents=options["documents"])
            elif fmt == "clapnq":
                plan = read_clapnq(paths, split=options["split"])
            else:
                plan = read_cases_jsonl(paths[0])
        except ParseError as exc:  # BenchmarkFileError too
            raise CommandError(f"{exc} Nothing was imported.") from exc
        if fmt == "jsonl":
            self._check_corpus(corpus_name, plan)
        self._import(plan, options["name"], corpus_name, fmt, paths[0], options)

    def _import_mtrag_un(self, path: Path, options) -> None:
        if options["corpus"]:
            raise CommandError("--format mtrag-un names each corpus NAME-<collection>; leave --corpus out.")
        try:
            plans = read_mtrag_un(path)
        except ParseError as exc:
            raise CommandError(f"{exc} Nothing was imported.") from exc
        wanted = options["collection"] or sorted(plans)
        unknown = sorted(set(wanted) - set(plans))
        if unknown:
            raise CommandError(
                f"No collection {', '.join(unknown)} in {path}; it has {', '.join(sorted(plans))}."
            )
        for collection in wanted:
            name = f"{options['name']}-{collection}"
            self._import(plans[collection], name, name, "mtrag-un", path, options)

    def _import(self, plan, name: str, corpus_name: str, fmt: str, path: Path, options) -> None:
        try:
            result = benchmark_import(
                name=name,
                plan=plan,
                corpus_name=corpus_name,
                team_name=options["team"],
                source_format=fmt,
                source_path=str(path.resolve()),
                enqueue=not options["in_process"],
            )
        except DomainError as exc:
            raise CommandError(f"{exc} Nothing was imported.") from exc
        to_embed = result.documents_to_embed
        self.stdout.write(
            f"Benchmark {result.benchmark.name!r} v{result.benchmark.version} "
            f"on corpus {result.corpus.name!r}: {len(plan.cases)} case(s) read, "
            f"{result.created} new, {result.revised} revised, "
            f"{result.unchanged} unchanged; {len(result.staged)} document(s) read, "
            f"{len(to_embed)} to embed."
        )
        if options["in_process"]:
            embed_in_process(to_embed)
        elif to_embed and not options["no_wait"]:
            wait_for_workers(to_embed, left_behind="The cases are imported and the documents stay queued.")
        errors = failed_documents(to_embed)
        for error in errors:
            self.stderr.write(f"error: {error}")
        if errors:
            raise CommandError(f"{len(errors)} document(s) could not be embedded (listed above).")

    def _default_corpus(self, benchmark_name: str) -> str:
        benchmark = Benchmark.objects.filter(name=benchmark_name).select_related("corpus").first()
        return benchmark.corpus.name if benchmark else benchmark_name

    def _check_corpus(self, corpus_name: str, plan) -> None:
        corpus = Corpus.objects.filter(name=corpus_name).first()
        if corpus is None:
            raise CommandError(
                f"Corpus {corpus_name!r} does not exist: a JSONL benchmark holds no documents, "
                "so give --corpus naming the corpus its cases are asked against. Nothing was imported."
            )
        known = set(Document.objects.filter(corpus=corpus).values_list("external_id", flat=True))
        missing = sorted({doc for case in plan.cases for doc in case.gold_documents} - known)
        if missing:
            self.stderr.write(
                f"warning: {len(missing)} gold document(s) are not in corpus {corpus_name!r}, "
                f"e.g. {missing[0]!r}."
            )
