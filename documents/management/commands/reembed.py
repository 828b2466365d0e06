"""python manage.py reembed --corpus NAME [--model MODEL] [--in-process] [--no-wait]

Without ``--model``: the corpus's embedding model, dimension and re-embeddings.
With it: queue a re-embedding and follow it with a progress bar until the
corpus has switched (``--in-process`` runs it here, for a machine with no
worker; ``--no-wait`` queues it and returns).
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from documents import reembedding, selectors
from documents.errors import DomainError
from documents.models import Corpus, EmbeddingSpace

WAIT_WITHOUT_PROGRESS_SECONDS = 120
FINISHED = (EmbeddingSpace.Status.ACTIVE, EmbeddingSpace.Status.FAILED, EmbeddingSpace.Status.RETIRED)


class Command(BaseCommand):
    help = "Show a corpus's embedding model, or re-embed the corpus with another one."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True, help="Corpus name.")
        parser.add_argument(
            "--model",
            help="default (the site's QA_EMBEDDING_MODEL), e5-small, or a sentence-transformers name "
            "or folder.",
        )
        parser.add_argument("--in-process", action="store_true", help="Embed here instead of in a worker.")
        parser.add_argument("--no-wait", action="store_true", help="Queue the re-embedding and return.")

    def handle(self, *args, **options):
        corpus = Corpus.objects.select_related("embedding_space").filter(name=options["corpus"]).first()
        if corpus is None:
            raise CommandError(f"No corpus named {options['corpus']!r}.")
        if not options["model"]:
            self._show(corpus)
            return
        try:
            job = reembedding.reembedding_start(
                corpus=corpus, model=options["model"], enqueue=not options["in_process"]
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Re-embedding {corpus.name!r} with {job.model!r} ({job.dimension} dimensions).")
        if options["in_process"]:
            self._run_here(job)
        elif options["no_wait"]:
            return
        else:
            self._follow(job)
        job.refresh_from_db()
        if job.status != EmbeddingSpace.Status.ACTIVE:
            raise CommandError(f"The re-embedding ended {job.status}: {job.error or 'no reason given'}")
        self.stdout.write(f"{corpus.name!r} now uses {job.model!r} (corpus version {job.activated_version}).")

    def _show(self, corpus: Corpus) -> None:
        model, dimension = reembedding.corpus_model(corpus)
        self.stdout.write(f"{corpus.name}: {model} ({dimension} dimensions), corpus version {corpus.version}")
        for job in selectors.corpus_embedding_jobs(corpus):
            line = f"  {job.created_at:%Y-%m-%d %H:%M} {job.model}: {job.status}, {job.progress}%"
            self.stdout.write(line + (f" ({job.error})" if job.error else ""))

    def _run_here(self, job: EmbeddingSpace) -> None:
        with tqdm(desc="re-embedding", unit="doc", disable=None) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            reembedding.reembedding_run(space_id=job.pk, on_progress=progress)

    def _follow(self, job: EmbeddingSpace) -> None:
        """Poll the job; give up (it carries on) after two minutes without progress."""
        last, last_change = (None, None), time.monotonic()
        with tqdm(desc="re-embedding", unit="doc", disable=None) as bar:
            while True:
                job.refresh_from_db()
                if job.documents_total:
                    bar.total = job.documents_total
                    bar.update(job.documents_done - bar.n)
                if job.status in FINISHED:
                    return
                if (job.status, job.documents_done) != last:
                    last, last_change = (job.status, job.documents_done), time.monotonic()
                elif time.monotonic() - last_change > WAIT_WITHOUT_PROGRESS_SECONDS:
                    raise CommandError(
                        "No progress for two minutes: is a Celery worker consuming the 'ingestion-bulk' "
                        "queue? Start one (make run starts it) or re-run with --in-process. "
                        "The re-embedding stays queued."
                    )
                time.sleep(1)
