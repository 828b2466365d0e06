"""Give the sentences of stored documents their structure, in place.

Documents ingested before sentences kept their role and section are restructured from their stored
text (``documents.parsing.structure.structure_of_text``). Nothing is re-embedded and no row is
replaced: each stored sentence keeps its primary key, text and vector, so every citation stored in
an answer, review or gold case keeps pointing at the same sentence. A stored sentence takes the
structure of the new sentence that covers it (the same span, or a wider one: "## 1." and "Is zlib
Y2K-compliant?", once two sentences, both lie inside the heading "## 1. Is zlib Y2K-compliant?");
one no new sentence covers keeps what it had.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from documents.models import Document, Sentence
from documents.parsing.structure import structure_of_text


@dataclass(frozen=True)
class Restructured:
    sentences: int  # the document's stored sentences
    changed: int  # those whose role, section or page changed
    uncovered: int  # those no sentence of the new parse covers (left as they were)


def document_restructure(*, document: Document) -> Restructured:
    parsed = structure_of_text(document.text, title=document.title)
    stored = list(Sentence.objects.filter(document=document).order_by("ordinal"))
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
