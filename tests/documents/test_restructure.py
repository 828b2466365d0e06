"""Documents stored as flat sentences get their structure in place: same rows, same vectors, same
citations (manage.py restructure_documents)."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import call_command

from documents import lexical, services, vectors
from documents.models import Chunk, Document, EmbeddingSpace, LexicalUnit, Sentence, StoredVector
from documents.parsing import parse_bytes
from documents.parsing.assemble import document_from_text
from documents.services.restructure import document_rechunk, document_restructure
from documents.vectors import pool
from tests.documents.parsing.files import pdf_bytes

# A Markdown FAQ as the flat parser stored it: the heading's marks and number were sentences.
FAQ = """# Frequently Asked Questions about zlib

## 1. Is zlib Y2K-compliant?

Yes. zlib doesn't handle dates.

## 2. Is zlib thread-safe?

Yes. However any library routines that zlib uses must also be thread-safe.
"""


def stored_document(corpus, embedder, parsed, filename: str) -> Document:
    """Stage and embed a parsed document, as an upload is stored."""
    submitted = services.document_stage(corpus=corpus, parsed=parsed, filename=filename, enqueue=False)
    document = Document.objects.get(pk=submitted.document.pk)
    services.document_embed(document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder)
    return Document.objects.get(pk=document.pk)


def flat_document(corpus, embedder) -> Document:
    """Stage and embed ``FAQ`` as documents were before structure was kept: every sentence plain."""
    parsed = document_from_text(FAQ, external_id="zlib-faq", filename="zlib-faq.md")
    assert {s.role for s in parsed.sentences} == {"paragraph"}
    return stored_document(corpus, embedder, parsed, "zlib-faq.md")


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
def test_restructuring_a_pdf_keeps_its_pages_and_the_headings_of_its_text_layer(corpus, embedder):
    # A PDF's text layer has no blank lines: its short lines head what follows wherever they stand,
    # and each sentence keeps the page it was read from.
    data = pdf_bytes(
        ["Oman is a sultanate.", "History", "The sultanate signed the first of its treaties with Britain."],
        ["Economy", "Oil and gas make up most of the sultanate's exports."],
    )
    document = stored_document(corpus, embedder, parse_bytes(data, "oman.pdf")[0], "oman.pdf")
    stored = {s.text: (s.role, s.section, s.page) for s in Sentence.objects.filter(document=document)}
    assert stored["History"] == ("heading", "", 1)

    document_restructure(document=document)

    after = {s.text: (s.role, s.section, s.page) for s in Sentence.objects.filter(document=document)}
    assert after == stored
    assert after["Oil and gas make up most of the sultanate's exports."] == ("paragraph", "Economy", 2)


@pytest.mark.django_db
def test_restructuring_keeps_the_structure_a_markdown_document_got_from_its_markup(corpus, embedder, capsys):
    # The stored text has lost the table's pipes: read again as plain text, a row was a heading.
    data = b"# Dominica\n\n| Indicator | 2021 | 2022 |\n|---|---|---|\n| Population | 72,412 | 72,737 |\n"
    document = stored_document(corpus, embedder, parse_bytes(data, "dominica.md")[0], "dominica.md")
    stored = {s.text: (s.role, s.section) for s in Sentence.objects.filter(document=document)}
    assert stored["Indicator: Population | 2021: 72,412 | 2022: 72,737"] == ("table_row", "")

    call_command("restructure_documents", "--corpus", corpus.name)

    assert {s.text: (s.role, s.section) for s in Sentence.objects.filter(document=document)} == stored
    assert "1 documents kept the structure their markup gave them" in capsys.readouterr().out


@pytest.mark.django_db
def test_restructuring_an_unknown_corpus_names_it():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no corpus named nowhere"):
        call_command("restructure_documents", "--corpus", "nowhere")


@pytest.mark.django_db
def test_restructuring_recuts_chunks_inside_sections_searchable_at_once(corpus, embedder, capsys):
    document = flat_document(corpus, embedder)
    texts = {s.ordinal: s.text for s in Sentence.objects.filter(document=document)}

    def chunk_texts():
        return sorted(c.text for c in Chunk.objects.filter(document=document))

    # Stored flat, the first chunk ran from the title across both questions and their answers.
    assert any("Y2K" in text and "thread-safe" in text for text in chunk_texts())
    sentence_pks = set(Sentence.objects.filter(document=document).values_list("pk", flat=True))

    call_command("restructure_documents", "--corpus", corpus.name)

    assert not any("Y2K" in text and "thread-safe" in text for text in chunk_texts())
    assert set(Sentence.objects.filter(document=document).values_list("pk", flat=True)) == sentence_pks
    vectors = {s.ordinal: np.asarray(s.embedding) for s in Sentence.objects.filter(document=document)}
    for chunk in Chunk.objects.filter(document=document):  # pooled from the stored sentence vectors
        assert chunk.text == " ".join(texts[i] for i in range(chunk.first_ordinal, chunk.last_ordinal + 1))
        members = np.stack([vectors[i] for i in range(chunk.first_ordinal, chunk.last_ordinal + 1)])
        np.testing.assert_allclose(np.asarray(chunk.embedding), pool(members), atol=1e-6)
    corpus.refresh_from_db()
    document.refresh_from_db()
    assert document.ready_version == corpus.version  # live at a new version: cached searches miss
    found = lexical.bm25_search(
        corpus_id=corpus.pk, unit="chunk", query="thread-safe", version=corpus.version, k=3
    )
    best = Chunk.objects.get(pk=found[0][0])
    assert "thread-safe" in best.text and "Y2K" not in best.text
    assert "1 documents' chunks recut inside sections" in capsys.readouterr().out

    call_command("restructure_documents", "--corpus", corpus.name)  # a second run changes nothing
    assert "0 documents' chunks recut" in capsys.readouterr().out
    assert document.ready_version == Document.objects.get(pk=document.pk).ready_version


@pytest.mark.django_db
def test_recut_chunks_get_vectors_in_every_embedding_space_the_document_has(corpus, embedder):
    # A corpus re-embedded with another model keeps that model's vectors beside the columns; a recut
    # chunk without them would drop out of that model's dense search.
    document = flat_document(corpus, embedder)
    space = EmbeddingSpace.objects.create(corpus=corpus, model="other", dimension=4, status="active")
    sentences = list(Sentence.objects.filter(document=document).order_by("ordinal"))
    other = np.random.default_rng(0).normal(size=(len(sentences), 4)).astype(np.float32)
    vectors.write_document_vectors(
        space, document.pk, sentences=[(s.pk, v) for s, v in zip(sentences, other, strict=True)],
        chunks=[], document=pool(other),
    )  # fmt: skip
    document_restructure(document=document)

    assert document_rechunk(document=document)

    stored = dict(
        StoredVector.objects.filter(space=space, unit=LexicalUnit.CHUNK).values_list("item", "embedding")
    )
    chunks = list(Chunk.objects.filter(document=document))
    assert set(stored) == {c.pk for c in chunks}
    for chunk in chunks:
        expected = pool(other[chunk.first_ordinal : chunk.last_ordinal + 1])
        np.testing.assert_allclose(np.asarray(stored[chunk.pk]), expected, atol=1e-6)
