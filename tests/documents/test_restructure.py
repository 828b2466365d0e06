"""Documents stored as flat sentences get their structure in place: same rows, same vectors, same
citations (manage.py restructure_documents)."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import call_command

from documents import services
from documents.models import Document, Sentence
from documents.parsing.assemble import document_from_text

# A Markdown FAQ as the flat parser stored it: the heading's marks and number were sentences.
FAQ = """# Frequently Asked Questions about zlib

## 1. Is zlib Y2K-compliant?

Yes. zlib doesn't handle dates.

## 2. Is zlib thread-safe?

Yes. However any library routines that zlib uses must also be thread-safe.
"""


def flat_document(corpus, embedder) -> Document:
    """Stage and embed ``FAQ`` as documents were before structure was kept: every sentence plain."""
    parsed = document_from_text(FAQ, external_id="zlib-faq", filename="zlib-faq.md")
    assert {s.role for s in parsed.sentences} == {"paragraph"}
    submitted = services.document_stage(corpus=corpus, parsed=parsed, filename="zlib-faq.md", enqueue=False)
    document = Document.objects.get(pk=submitted.document.pk)
    services.document_embed(document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder)
    return Document.objects.get(pk=document.pk)


@pytest.mark.django_db
def test_restructuring_keeps_every_sentence_row_and_vector_and_marks_headings(corpus, embedder, capsys):
    document = flat_document(corpus, embedder)
    before = {s.pk: (s.text, np.asarray(s.embedding)) for s in Sentence.objects.filter(document=document)}
    assert any(text == "## 1." for text, _ in before.values())  # what a user saw quoted

    call_command("restructure_documents", "--corpus", corpus.name)

    after = {s.pk: s for s in Sentence.objects.filter(document=document)}
    assert set(after) == set(before)  # no row replaced: stored citations keep their sentence
    for pk, (text, vector) in before.items():
        assert after[pk].text == text
        np.testing.assert_array_equal(np.asarray(after[pk].embedding), vector)
    roles = {s.text: s.role for s in after.values()}
    assert roles["## 1."] == "heading"
    assert roles["Is zlib Y2K-compliant?"] == "heading"
    assert roles["zlib doesn't handle dates."] == "paragraph"
    sections = {s.text: s.section for s in after.values()}
    assert sections["zlib doesn't handle dates."] == "1. Is zlib Y2K-compliant?"
    assert "Done: 1 documents" in capsys.readouterr().out


@pytest.mark.django_db
def test_restructuring_an_unknown_corpus_names_it():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no corpus named nowhere"):
        call_command("restructure_documents", "--corpus", "nowhere")
