"""What a corpus holds, document by document, and the same files ingested in this process to
compare it with.

The fault benches (bench/fault_ingestion.py, bench/fault_jobs.py) count the rows a corpus ends
with after its workers were killed and compare them with a clean import of the same files: a
document swapped in twice, or half of one left behind, shows as a difference.
"""

from __future__ import annotations

from collections.abc import Iterable

COUNTED = ("sentences", "embedded sentences", "chunks", "embedded chunks", "postings", "lexical totals")


def row_counts(corpus_id: int) -> dict[str, dict[str, int]]:
    """Per document (by external id), how many rows of each kind in ``COUNTED`` it has."""
    from django.db.models import Count

    from documents.models import Chunk, Document, LexicalTotals, Posting, Sentence

    names = dict(Document.objects.filter(corpus_id=corpus_id).values_list("pk", "external_id"))
    counts = {external_id: dict.fromkeys(COUNTED, 0) for external_id in names.values()}

    def add(kind: str, queryset) -> None:
        for document_id, n in (
            queryset.filter(document_id__in=list(names))
            .values("document_id")
            .annotate(n=Count("*"))
            .values_list("document_id", "n")
        ):
            counts[names[document_id]][kind] = n

    add("sentences", Sentence.objects.all())
    add("embedded sentences", Sentence.objects.exclude(embedding=None))
    add("chunks", Chunk.objects.all())
    add("embedded chunks", Chunk.objects.exclude(embedding=None))
    add("postings", Posting.objects.filter(corpus_id=corpus_id))
    add("lexical totals", LexicalTotals.objects.filter(corpus_id=corpus_id))
    return counts


def term_stats(corpus_id: int) -> set[tuple[int, str, int]]:
    from documents.models import TermStat

    return set(TermStat.objects.filter(corpus_id=corpus_id).values_list("unit", "term", "df"))


def compare_with_clean(corpus_id: int, clean_corpus_id: int) -> tuple[list[str], int]:
    """(documents whose rows differ from the clean import's, with how; BM25 term statistics that
    differ)."""
    faulted, clean = row_counts(corpus_id), row_counts(clean_corpus_id)
    mismatched = []
    for external_id in sorted(set(faulted) | set(clean)):
        got, want = faulted.get(external_id), clean.get(external_id)
        if got != want:
            mismatched.append(f"{external_id}: {got} after the faults, {want} in a clean import")
    return mismatched, len(term_stats(corpus_id) ^ term_stats(clean_corpus_id))


def ingest_in_process(corpus, files: Iterable[tuple[str, bytes]], embedder) -> None:
    """Each (filename, data) staged and embedded in this process, one document at a time: no
    worker, no queue, no faults."""
    from documents import services
    from documents.models import Document

    for filename, data in files:
        for parsed in services.parse_upload(filename=filename, data=data):
            submitted = services.document_stage(
                corpus=corpus, parsed=parsed, filename=filename, enqueue=False
            )
            document = Document.objects.get(pk=submitted.document.pk)
            services.document_embed(
                document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder
            )


def clean_import(corpus, files: dict[str, tuple[bytes, bool]], embedder) -> None:
    """The same files (``Stager.files``: filename -> (data, bulk)) ingested with no faults."""
    ingest_in_process(corpus, ((filename, data) for filename, (data, _) in files.items()), embedder)
