"""python manage.py ingest PATH... --corpus NAME

Parses files and directories, stages their documents, and waits for the
workers to embed them, with a progress bar. ``--in-process`` embeds here
instead, for a machine with no worker running.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from documents import parsing, services
from documents.management.embedding import embed_in_process, failed_documents, wait_for_workers
from documents.models import Corpus, Team


class Command(BaseCommand):
    help = "Ingest files or directories into a corpus (created if missing)."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--corpus", required=True, help="Corpus name; created if it does not exist.")
        parser.add_argument(
            "--team", default="Analysts", help="Team owning a new corpus (default: Analysts)."
        )
        parser.add_argument(
            "--layout",
            choices=["auto", "files", "analyst-bench", "clapnq"],
            default="auto",
            help="auto: an analyst-bench directory is recognised, everything else is read as files.",
        )
        parser.add_argument("--in-process", action="store_true", help="Embed here instead of in the workers.")
        parser.add_argument("--no-wait", action="store_true", help="Queue the documents and return.")

    def handle(self, *args, **options):
        for path in options["paths"]:
            if not path.exists():
                raise CommandError(f"{path}: no such file or directory.")
        corpus = self._corpus(options["corpus"], options["team"])
        staged, errors = self._stage(
            corpus, options["paths"], options["layout"], enqueue=not options["in_process"]
        )
        changed = [s.document.pk for s in staged if s.changed]
        self.stdout.write(
            f"{len(staged)} document(s) read, {len(changed)} new or changed, {len(errors)} file(s) refused."
        )
        if options["in_process"]:
            embed_in_process(changed)
        elif changed and not options["no_wait"]:
            wait_for_workers(changed)
        errors.extend(failed_documents(changed))
        for error in errors:
            self.stderr.write(f"error: {error}")
        if errors:
            raise CommandError(f"{len(errors)} file(s) or document(s) could not be ingested (listed above).")

    def _corpus(self, name: str, team_name: str) -> Corpus:
        corpus = Corpus.objects.filter(name=name).first()
        if corpus is None:
            team, _ = Team.objects.get_or_create(name=team_name)
            corpus = services.corpus_create(name=name, team=team)
            self.stdout.write(f"Created corpus {name!r} for team {team.name!r}.")
        return corpus

    def _stage(self, corpus, paths, layout, *, enqueue):
        staged, errors = [], []
        with tqdm(desc="reading", unit="doc", disable=None) as bar:
            for filename, documents in iter_documents(paths, layout):
                try:
                    parsed_docs = documents()
                except services.IngestError as exc:
                    errors.append(str(exc))
                    continue
                for parsed in parsed_docs:
                    staged.append(
                        # The command is for imports: its documents never hold up an upload.
                        services.document_stage(
                            corpus=corpus, parsed=parsed, filename=filename, enqueue=enqueue, bulk=True
                        )
                    )
                    bar.update(1)
        return staged, errors


def iter_documents(paths: list[Path], layout: str) -> Iterator[tuple[str, callable]]:
    """Yield (filename, thunk returning parsed documents); a thunk raises IngestError for a bad file."""
    for path in paths:
        if layout == "analyst-bench" or (
            layout == "auto" and (path / "corpus").is_dir() and (path / "questions").is_dir()
        ):
            yield from _analyst_bench(path)
        elif layout == "clapnq":
            files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
            yield str(path), _thunk(lambda files=files: list(parsing.iter_clapnq(files)), str(path))
        elif path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                yield _file(file, external_id=str(file.relative_to(path).with_suffix("")))
        else:
            yield _file(path)


def _analyst_bench(root: Path):
    # Gold documents first, so the demo questions are answerable while the rest embeds.
    gold = set(parsing.analyst_bench_gold_ids(root))
    documents = list(parsing.iter_analyst_bench_corpus(root))
    documents.sort(key=lambda d: d.external_id not in gold)
    for document in documents:
        yield document.external_id, (lambda document=document: [document])


def _file(path: Path, external_id: str | None = None):
    def read():
        return services.parse_upload(filename=path.name, data=path.read_bytes(), external_id=external_id)

    return str(path), read


def _thunk(produce, label):
    def run():
        try:
            return produce()
        except parsing.ParseError as exc:
            raise services.IngestError(f"{label}: {exc}") from exc

    return run
