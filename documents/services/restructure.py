"""Give the sentences of stored documents their structure, in place.

Documents ingested before sentences kept their role and section are restructured from their stored
text (``documents.parsing.structure.structure_of_text``). Nothing is re-embedded and no row is
replaced: each stored sentence keeps its primary key, text and vector, so every citation stored in
an answer, review or gold case keeps pointing at the same sentence. A stored sentence takes the
structure of the new sentence that covers it (the same span, or a wider one: "## 1." and "Is zlib
Y2K-compliant?", once two sentences, both lie inside the heading "## 1. Is zlib Y2K-compliant?");
one no new sentence covers keeps what it had. Plain text and PDFs are read again from their layout,
so a change of the layout rules reaches them; a document parsed from markup (Markdown, HTML, Word)
with its structure kept is left as it is, since its stored text no longer holds the markup.

Once its sentences have sections, a document's chunks are recut so that none runs across a section
(``document_rechunk``): new chunk rows, their vectors pooled from the stored sentence vectors of
every embedding space, their postings written again, live at a new corpus version. Sentences are
untouched; chunks are only ever searched, never cited.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

import numpy as np
from django.conf import settings
from django.db import transaction

from documents import copy_rows, lexical, vectors
from documents.models import Chunk, Document, EmbeddingSpace, LexicalUnit, Sentence, StoredVector
from documents.parsing import section_windows
from documents.parsing.formats import MARKUP_EXTENSIONS
from documents.parsing.structure import structure_of_text
from documents.services.ingestion import chunk_rows, next_corpus_version
from documents.vectors import pool
from qa.pipeline.core import roles


@dataclass(frozen=True)
class Restructured:
    sentences: int  # the document's stored sentences
    changed: int  # those whose role, section or page changed
    uncovered: int  # those no sentence of the new parse covers (left as they were)
    from_markup: bool = False  # left as it was: its structure came from its markup


def document_restructure(*, document: Document) -> Restructured:
    stored = list(Sentence.objects.filter(document=document).order_by("ordinal"))
    if _structured_by_markup(document, stored):
        return Restructured(len(stored), 0, 0, from_markup=True)
    parsed = structure_of_text(document.text, title=document.title, page_starts=_page_starts(stored))
    changed, uncovered = [], 0
    position = 0
    for sentence in stored:
        # Both lists run in text order, so the covering sentence is at or after the last one found.
        while position < len(parsed) and parsed[position].end <= sentence.start:
            position += 1
        cover = parsed[position] if position < len(parsed) else None
        if cover is None or not (cover.start <= sentence.start and sentence.end <= cover.end):
            uncovered += 1
            continue
        if (sentence.role, sentence.section, sentence.page) != (cover.role, cover.section, cover.page):
            sentence.role, sentence.section, sentence.page = cover.role, cover.section, cover.page
            changed.append(sentence)
    with transaction.atomic():
        Sentence.objects.bulk_update(changed, ["role", "section", "page"], batch_size=1000)
    return Restructured(len(stored), len(changed), uncovered)


def _structured_by_markup(document: Document, stored: list[Sentence]) -> bool:
    """Whether the document was parsed from markup (Markdown, HTML, Word) with its structure kept:
    its stored text has lost the markup, so its layout would give worse roles than it has (a
    Markdown table's rows read as headings). A flat document of any format, stored before
    structure was kept, has nothing to lose and is read from its layout."""
    markup = PurePath(document.filename).suffix.lower() in MARKUP_EXTENSIONS
    return markup and any(s.role != roles.PARAGRAPH or s.section for s in stored)


def _page_starts(stored: list[Sentence]) -> list[int]:
    """Where each page of a stored PDF begins, read off its sentences' pages (none: not a PDF), so
    that the new parse keeps every sentence's page and reads the text layer as a PDF's. A page
    with no sentence (a blank one) begins where the next one does."""
    first: dict[int, int] = {}
    for sentence in stored:
        if sentence.page is not None:
            first.setdefault(sentence.page, sentence.start)
    if not first:
        return []
    starts = [0] * max(first)
    following = first[max(first)]
    for page in range(max(first), 0, -1):
        following = first.get(page, following)
        starts[page - 1] = following
    return starts


def document_rechunk(*, document: Document) -> bool:
    """Recut the document's chunks by its sentences' sections, as ingestion now cuts them; True when
    they changed. Stored sentences, their vectors and citations are kept; a document replaced or
    deleted meanwhile is left to its new version."""
    sentences = list(Sentence.objects.filter(document=document).order_by("ordinal"))
    windows = section_windows(
        [s.section for s in sentences], settings.CHUNK_SENTENCES, settings.CHUNK_OVERLAP
    )
    stored = set(Chunk.objects.filter(document=document).values_list("first_ordinal", "last_ordinal"))
    if not sentences or stored == set(windows):
        return False
    with transaction.atomic():
        version = next_corpus_version(document.corpus_id)  # locks the corpus first, as ingestion does
        locked = Document.objects.select_for_update().filter(pk=document.pk).first()
        if locked is None or locked.content_hash != document.content_hash:
            return False
        old = list(Chunk.objects.filter(document=locked).values_list("pk", flat=True))
        StoredVector.objects.filter(document=locked, unit=LexicalUnit.CHUNK, item__in=old).delete()
        Chunk.objects.filter(pk__in=old).delete()
        columns = [s.embedding for s in sentences]
        encoded = None if any(v is None for v in columns) else np.asarray(columns)
        chunks = chunk_rows(locked.pk, sentences, windows, encoded)
        copy_rows.copy_chunks(chunks)
        _pool_stored_vectors(locked, sentences, chunks)
        lexical.unindex_document(corpus_id=locked.corpus_id, document_id=locked.pk)
        lexical.index_document(
            corpus_id=locked.corpus_id,
            document_id=locked.pk,
            ready_version=version,
            sentences=[(s.pk, s.text) for s in sentences],
            chunks=[(c.pk, c.first_ordinal, c.last_ordinal) for c in chunks],
        )
        Document.objects.filter(pk=locked.pk).update(ready_version=version)
    return True


def _pool_stored_vectors(document: Document, sentences: list[Sentence], chunks: list[Chunk]) -> None:
    """The new chunks' vectors in every other embedding space that holds all the document's sentences
    (written as a re-embedding writes them: ``vectors.write_document_vectors``)."""
    position = {s.pk: i for i, s in enumerate(sentences)}
    by_space: dict[int, dict[int, np.ndarray]] = {}
    rows = StoredVector.objects.filter(document=document, unit=LexicalUnit.SENTENCE)
    for space_id, item, vector in rows.values_list("space_id", "item", "embedding"):
        by_space.setdefault(space_id, {})[position[item]] = np.asarray(vector, dtype=np.float32)
    spaces = EmbeddingSpace.objects.in_bulk(list(by_space))
    for space_id, stored in by_space.items():
        if len(stored) != len(sentences):
            continue  # a re-embedding still on its way: it writes the chunks' vectors when it gets here
        matrix = np.stack([stored[i] for i in range(len(sentences))])
        vectors.write_document_vectors(
            spaces[space_id],
            document.pk,
            sentences=[],
            chunks=[(c.pk, pool(matrix[c.first_ordinal : c.last_ordinal + 1])) for c in chunks],
            document=pool(matrix),  # already stored: kept as it is
        )
