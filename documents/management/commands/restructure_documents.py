"""python manage.py restructure_documents [--corpus NAME ...]

Gives the sentences of documents stored before sentences kept their structure their role
(heading, question, list item ...) and section path, from the stored text, in place: nothing is
re-embedded and every stored citation keeps its sentence. Plain text and PDFs are read again with
the current layout rules; a Markdown, HTML or Word document that has its structure keeps it. Then
recuts each document's chunks so that none runs across a section, as ingestion cuts them
(documents/services/restructure.py).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from documents.models import Corpus, Document
from documents.services.restructure import document_rechunk, document_restructure


class Command(BaseCommand):
    help = (
        "Give stored documents' sentences their roles and section paths, in place, and recut their "
        "chunks inside sections (no re-embedding)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--corpus", action="append", default=[], help="a corpus name (default: all)")

    def handle(self, *args, **options):
        corpora = Corpus.objects.all()
        if options["corpus"]:
            corpora = corpora.filter(name__in=options["corpus"])
            missing = set(options["corpus"]) - set(corpora.values_list("name", flat=True))
            if missing:
                raise CommandError(f"no corpus named {', '.join(sorted(missing))}")
        documents = Document.objects.filter(corpus__in=corpora, status=Document.Status.READY).order_by("pk")
        total = documents.count()
        sentences = changed = uncovered = rechunked = from_markup = 0
        for number, document in enumerate(documents.iterator(), 1):
            result = document_restructure(document=document)
            sentences += result.sentences
            changed += result.changed
            uncovered += result.uncovered
            from_markup += result.from_markup
            rechunked += document_rechunk(document=document)
            if number % 50 == 0 or number == total:
                self.stdout.write(
                    f"{number}/{total} documents: {changed} of {sentences} sentences given structure,"
                    f" {rechunked} documents' chunks recut"
                )
        self.stdout.write(
            f"Done: {total} documents, {sentences} sentences, {changed} changed, "
            f"{uncovered} kept as they were (no new sentence covers them); "
            f"{from_markup} documents kept the structure their markup gave them (Markdown, HTML, Word); "
            f"{rechunked} documents' chunks recut inside sections."
        )
