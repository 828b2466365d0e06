"""Queued documents encoded in waves, each wave made live on the writer thread while the next encodes.

Transactional tests: the writer thread has a connection of its own, which sees
only committed rows, as in a worker (inside a test's transaction the swap-ins
run inline instead; test_ingestion_services covers that path).
"""

from __future__ import annotations

import pytest

from documents import services
from documents.models import Corpus, Document
from qa.adapters import DjangoCorpusIndex
from tests.documents.test_ingestion_services import FLEET, REPORT, WEATHER, staged

pytestmark = pytest.mark.django_db(transaction=True)


class FailsOnSecondCall:
    """The site's encoder, until a second call runs out of memory."""

    def __init__(self, embedder) -> None:
        self.embedder, self.calls = embedder, 0

    def encode(self, texts):
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("the embedding model ran out of memory")
        return self.embedder.encode(texts)


def embed_three(corpus, embedder, settings):
    settings.INGEST_WAVE_SENTENCES = 1  # one document a wave
    # Not sent to the broker: these tests commit, and the session's Celery worker (started by an
    # earlier test) would claim a document under the test's feet, leaving it 'parsing' here.
    report, fleet, weather = (
        staged(corpus, name, data, enqueue=False)
        for name, data in (("report.txt", REPORT), ("fleet.txt", FLEET), ("weather.txt", WEATHER))
    )
    services.document_embed(document_id=report.pk, expected_hash=report.pending_hash, embedder=embedder)
    for document in (report, fleet, weather):
        document.refresh_from_db()
    return report, fleet, weather


def test_every_wave_turns_ready_in_order_and_is_found_lexically_and_densely(corpus, embedder, settings):
    report, fleet, weather = embed_three(corpus, embedder, settings)
    for document in (report, fleet, weather):
        assert (document.status, document.progress, document.error) == (Document.Status.READY, 100, "")
    # Each wave was its own swap-in, made live in the order it was encoded.
    assert report.ready_version < fleet.ready_version < weather.ready_version
    assert Corpus.objects.get(pk=corpus.pk).version == weather.ready_version
    index = DjangoCorpusIndex(Corpus.objects.get(pk=corpus.pk))
    for question, answer in (
        ("How many tugboats does the company operate?", "The company operates 41 tugboats."),
        ("How many days did fog close the harbour?", "Fog closed the harbour for three days in February."),
    ):
        [(lexical_key, _)] = index.lexical_search(question, "sentence", 1)
        [(dense_key, _)] = index.dense_search(embedder.encode([question])[0], "sentence", 1)
        assert lexical_key == dense_key
        assert index.passage(lexical_key).text == answer


def test_an_encoder_failure_keeps_the_waves_before_it_and_fails_the_rest(corpus, embedder, settings):
    report, fleet, weather = embed_three(corpus, FailsOnSecondCall(embedder), settings)
    assert report.status == Document.Status.READY
    for document in (fleet, weather):
        assert document.status == Document.Status.FAILED and "ran out of memory" in document.error
    index = DjangoCorpusIndex(Corpus.objects.get(pk=corpus.pk))
    [(key, _)] = index.lexical_search("How many staff did the authority employ?", "sentence", 1)
    assert index.passage(key).text == "The authority employed 1,850 staff."
