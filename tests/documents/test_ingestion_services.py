"""Ingestion services on the real database with the real embedder (in-process, no worker)."""

from __future__ import annotations

import numpy as np
import pytest
from pgvector.django import CosineDistance

from documents import services
from documents.models import EMBEDDING_DIM, Chunk, Document, Sentence

REPORT = b"""Harbor report

The port handled 4.2 million containers in 2024. Dredging of the main channel finished in October.
The authority employed 1,850 staff. Revenue reached 312 million dollars.
"""


def ingest(corpus, embedder, filename="report.txt", data=REPORT, **kwargs):
    [submitted] = services.documents_submit(corpus=corpus, filename=filename, data=data, **kwargs)
    if submitted.changed:
        document = Document.objects.get(pk=submitted.document.pk)
        services.document_embed(
            document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder
        )
    submitted.document.refresh_from_db()
    return submitted


class FailingEmbedder:
    def encode(self, texts):
        raise RuntimeError("the embedding model ran out of memory")


class NaNEmbedder:
    def encode(self, texts):
        return np.full((len(texts), EMBEDDING_DIM), np.nan, dtype=np.float32)


@pytest.mark.django_db
def test_ingested_document_is_ready_with_sentences_chunks_and_vectors(corpus, embedder):
    submitted = ingest(corpus, embedder)
    document = submitted.document
    assert document.status == Document.Status.READY
    assert document.progress == 100
    sentences = list(document.sentences.order_by("ordinal"))
    assert [s.text for s in sentences][1] == "The port handled 4.2 million containers in 2024."
    for sentence in sentences:
        assert document.text[sentence.start : sentence.end] == sentence.text
        assert len(sentence.embedding) == EMBEDDING_DIM
    assert Chunk.objects.filter(document=document).count() >= 1
    assert document.embedding is not None


@pytest.mark.django_db
def test_cosine_query_over_pgvector_finds_the_right_sentence(corpus, embedder):
    ingest(corpus, embedder)
    query = embedder.encode(["How many people work for the port authority?"])[0]
    best = Sentence.objects.annotate(d=CosineDistance("embedding", query)).order_by("d").first()
    assert best.text == "The authority employed 1,850 staff."


@pytest.mark.django_db
def test_reingesting_an_unchanged_file_is_a_noop(corpus, embedder):
    first = ingest(corpus, embedder)
    ids_before = list(Sentence.objects.filter(document=first.document).values_list("pk", flat=True))
    again = ingest(corpus, embedder)
    assert again.changed is False
    assert again.document.pk == first.document.pk
    assert list(Sentence.objects.filter(document=first.document).values_list("pk", flat=True)) == ids_before


@pytest.mark.django_db
def test_changed_file_replaces_sentences_only_when_the_new_version_is_ready(corpus, embedder):
    first = ingest(corpus, embedder)
    [submitted] = services.documents_submit(
        corpus=corpus, filename="report.txt", data=REPORT.replace(b"1,850", b"2,100")
    )
    assert submitted.changed
    # While the new version waits for its embeddings the old sentences stay searchable.
    staged = Document.objects.get(pk=first.document.pk)
    assert staged.status == Document.Status.QUEUED
    assert Sentence.objects.filter(document=staged, text="The authority employed 1,850 staff.").exists()
    services.document_embed(document_id=staged.pk, expected_hash=staged.pending_hash, embedder=embedder)
    texts = set(Sentence.objects.filter(document=staged).values_list("text", flat=True))
    assert "The authority employed 2,100 staff." in texts
    assert "The authority employed 1,850 staff." not in texts
    assert Document.objects.filter(corpus=corpus).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("bad_embedder", [FailingEmbedder(), NaNEmbedder()])
def test_embedding_failure_leaves_a_failed_document_with_no_sentences(corpus, bad_embedder):
    [submitted] = services.documents_submit(corpus=corpus, filename="report.txt", data=REPORT)
    document = Document.objects.get(pk=submitted.document.pk)
    services.document_embed(
        document_id=document.pk, expected_hash=document.pending_hash, embedder=bad_embedder
    )
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED
    assert document.error  # a readable reason, shown in the admin and the API
    assert not Sentence.objects.filter(document=document).exists()
    assert not Chunk.objects.filter(document=document).exists()


@pytest.mark.django_db
def test_failed_update_keeps_serving_the_previous_version(corpus, embedder):
    first = ingest(corpus, embedder)
    [submitted] = services.documents_submit(
        corpus=corpus, filename="report.txt", data=REPORT + b"More text here."
    )
    document = Document.objects.get(pk=submitted.document.pk)
    services.document_embed(
        document_id=document.pk, expected_hash=document.pending_hash, embedder=FailingEmbedder()
    )
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    assert "previous version" in document.error
    assert Sentence.objects.filter(document=first.document).count() == first.document.sentences.count() > 0


@pytest.mark.django_db
def test_a_second_delivery_of_the_same_task_does_nothing(corpus, embedder):
    [submitted] = services.documents_submit(corpus=corpus, filename="report.txt", data=REPORT)
    digest = Document.objects.get(pk=submitted.document.pk).pending_hash
    assert services.document_embed(document_id=submitted.document.pk, expected_hash=digest, embedder=embedder)
    count = Sentence.objects.filter(document_id=submitted.document.pk).count()
    assert (
        services.document_embed(document_id=submitted.document.pk, expected_hash=digest, embedder=embedder)
        is None
    )
    assert Sentence.objects.filter(document_id=submitted.document.pk).count() == count


@pytest.mark.django_db
def test_task_for_a_deleted_document_exits_cleanly(corpus, embedder):
    [submitted] = services.documents_submit(corpus=corpus, filename="report.txt", data=REPORT)
    digest = Document.objects.get(pk=submitted.document.pk).pending_hash
    Document.objects.filter(pk=submitted.document.pk).delete()
    assert (
        services.document_embed(document_id=submitted.document.pk, expected_hash=digest, embedder=embedder)
        is None
    )
