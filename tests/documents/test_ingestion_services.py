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


FLEET = b"""Fleet note

The company operates 41 tugboats. Its oldest vessel was launched in 1987 and still works the northern berths.
"""
WEATHER = b"""Weather log

Fog closed the harbour for three days in February.
"""


def staged(corpus, filename, data, *, bulk=False, enqueue=True) -> Document:
    [parsed] = services.parse_upload(filename=filename, data=data)
    submitted = services.document_stage(
        corpus=corpus, parsed=parsed, filename=filename, bulk=bulk, enqueue=enqueue
    )
    return Document.objects.get(pk=submitted.document.pk)


@pytest.mark.django_db
def test_queued_documents_of_the_corpus_are_embedded_together_each_with_its_own_vectors(corpus, embedder):
    from tests.factories import CorpusFactory

    report, fleet, weather = (
        staged(corpus, name, data)
        for name, data in (("report.txt", REPORT), ("fleet.txt", FLEET), ("weather.txt", WEATHER))
    )
    elsewhere = staged(CorpusFactory(team=corpus.team), "report.txt", REPORT)
    done = services.document_embed(
        document_id=report.pk, expected_hash=report.pending_hash, embedder=embedder
    )
    assert done.status == Document.Status.READY
    for document in (fleet, weather):
        document.refresh_from_db()
        assert document.status == Document.Status.READY and document.progress == 100
        # Its own message, delivered later, finds nothing left to do.
        assert (
            services.document_embed(
                document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder
            )
            is None
        )
    elsewhere.refresh_from_db()
    assert elsewhere.status == Document.Status.QUEUED  # another corpus waits for its own task
    # Sorted by length for encoding, every sentence still got its own vector back.
    sentences = list(Sentence.objects.filter(document__corpus=corpus).order_by("document_id", "ordinal"))
    alone = embedder.encode([s.text for s in sentences])
    stored = np.array([s.embedding for s in sentences])
    assert np.allclose(np.sum(stored * alone, axis=1), 1.0, atol=1e-3)
    query = embedder.encode(["How many tugboats does the company have?"])[0]
    best = Sentence.objects.annotate(d=CosineDistance("embedding", query)).order_by("d").first()
    assert best.text == "The company operates 41 tugboats."


@pytest.mark.django_db
def test_shared_encoding_stops_at_the_sentence_budget_and_the_lane(corpus, embedder, settings):
    settings.INGEST_ENCODE_SENTENCES = 6  # the report's 5 sentences fit, not the fleet note's too
    report, fleet = staged(corpus, "report.txt", REPORT), staged(corpus, "fleet.txt", FLEET)
    bulk = staged(corpus, "weather.txt", WEATHER, bulk=True)
    services.document_embed(document_id=report.pk, expected_hash=report.pending_hash, embedder=embedder)
    for document in (fleet, bulk):
        document.refresh_from_db()
        assert document.status == Document.Status.QUEUED
    services.document_embed(document_id=fleet.pk, expected_hash=fleet.pending_hash, embedder=embedder)
    fleet.refresh_from_db()
    bulk.refresh_from_db()
    assert fleet.status == Document.Status.READY
    assert bulk.status == Document.Status.QUEUED  # a bulk import's documents wait in their own lane


@pytest.mark.django_db
def test_a_companion_that_cannot_be_built_fails_alone(corpus, embedder):
    report, fleet = staged(corpus, "report.txt", REPORT), staged(corpus, "fleet.txt", FLEET)
    Document.objects.filter(pk=fleet.pk).update(pending_sentences={"sentences": []})
    services.document_embed(document_id=report.pk, expected_hash=report.pending_hash, embedder=embedder)
    report.refresh_from_db()
    fleet.refresh_from_db()
    assert report.status == Document.Status.READY
    assert fleet.status == Document.Status.FAILED and "no sentences" in fleet.error


@pytest.mark.django_db
def test_an_encoder_failure_fails_every_document_it_was_encoding(corpus):
    report, fleet = staged(corpus, "report.txt", REPORT), staged(corpus, "fleet.txt", FLEET)
    services.document_embed(
        document_id=report.pk, expected_hash=report.pending_hash, embedder=FailingEmbedder()
    )
    for document in (report, fleet):
        document.refresh_from_db()
        assert document.status == Document.Status.FAILED and "ran out of memory" in document.error
