"""A question reads one version of its corpus, whatever ingestion does meanwhile.

Real rows throughout. The concurrent change is committed from another thread
(its own database connection) at the moment named by each test: that moment is
chosen by wrapping ``qa.adapters.corpus_version``, the read of the version a
stage will read the corpus at, which precedes every search.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from documents import services as documents_services
from documents.models import Document
from qa import adapters, presets, services
from qa.models import Citation, Question
from qa.pipeline.flow.run import PipelineRun
from qa.services import asking
from tests.qa.conftest import COUNTRY_PROFILE, ingest_texts

NEW_REPORT = (
    "Fisheries Bulletin 2024\n\n"
    "The Westmere fishing fleet landed 91,000 tonnes of cod in 2024. "
    "Most of the catch was sold to processors in Arlen."
)


def in_other_connection(work) -> None:
    """Run ``work`` in a thread of its own, so it commits on its own connection, and wait for it."""
    errors = []

    def target():
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def interleave(monkeypatch, change) -> None:
    """Commit ``change`` once, after the corpus version was read and before anything is searched."""
    original = adapters.corpus_version
    pending = [change]

    def corpus_version(corpus_id):
        version = original(corpus_id)
        while pending:
            in_other_connection(pending.pop())
        return version

    monkeypatch.setattr(adapters, "corpus_version", corpus_version)


def ask_stage_by_stage(user, corpus, text):
    question = asking._create_question(
        user=user, corpus=corpus, text=text, config=presets.get_preset("default"), conversation=None
    )
    assert services.question_retrieve(question_id=question.pk)
    return question


@pytest.mark.django_db(transaction=True)
def test_a_document_turning_ready_between_the_two_reads_does_not_fail_the_question(
    monkeypatch, analyst, westmere, embedder
):
    before = Document.objects.filter(corpus=westmere).count()
    interleave(monkeypatch, lambda: ingest_texts(westmere, embedder, {"fisheries": NEW_REPORT}))

    question = services.answer_now(corpus=westmere, text="What is the capital of Westmere?", user=analyst)

    assert question.status == Question.Status.DONE, question.error
    assert "Arlen" in question.answer.text
    # The question read the version from before the bulletin arrived, all of it and only it.
    index = adapters.DjangoCorpusIndex(westmere, version=question.corpus_version)
    assert len(index.passages("document")) == before
    assert not any(p.document_id == "fisheries" for p in index.passages("chunk"))
    # The next question sees the bulletin.
    later = services.answer_now(
        corpus=westmere, text="How many tonnes of cod did the fleet land?", user=analyst
    )
    assert later.status == Question.Status.DONE, later.error
    assert later.corpus_version > question.corpus_version
    assert "91,000 tonnes" in later.answer.text


@pytest.mark.django_db(transaction=True)
def test_a_document_replaced_after_the_version_was_read_is_absent_not_mixed_in(
    monkeypatch, westmere, embedder
):
    replaced = COUNTRY_PROFILE.replace("Its capital is Arlen", "Its capital is Brenford")
    interleave(monkeypatch, lambda: ingest_texts(westmere, embedder, {"country-profile": replaced}))

    index = adapters.DjangoCorpusIndex(westmere)
    texts = " ".join(p.text for p in index.passages("chunk"))
    # The old rows are gone and the new ones went live after this version: neither is read.
    assert "Brenford" not in texts and "Arlen" not in texts
    assert index.document_sentences("country-profile") == ()
    assert [key for key, _ in index.lexical_search("Brenford Sel river", "sentence", 5)] == []
    assert "port-report" in {p.document_id for p in index.passages("chunk")}

    fresh = adapters.DjangoCorpusIndex(westmere)
    assert fresh.version == index.version + 1
    assert "Brenford" in " ".join(p.text for p in fresh.passages("chunk"))


@pytest.mark.django_db(transaction=True)
def test_the_cited_document_deleted_between_retrieval_and_generation(analyst, westmere):
    question = ask_stage_by_stage(analyst, westmere, "How many staff did the port authority employ?")
    question.refresh_from_db()
    assert PipelineRun.from_json(question.trace).retrieval.ranking[0].key  # handed to generation
    in_other_connection(
        lambda: documents_services.document_delete(document=Document.objects.get(external_id="port-report"))
    )

    answer = services.question_answer_stages(question_id=question.pk)

    question.refresh_from_db()
    assert question.status == Question.Status.DONE, question.error
    assert answer is not None
    assert not Citation.objects.filter(
        answer_sentence__answer=answer, document_external_id="port-report"
    ).exists()
    assert "1,850" not in answer.text


@pytest.mark.django_db(transaction=True)
def test_a_document_replaced_between_retrieval_and_generation_is_not_mixed_in(analyst, westmere, embedder):
    question = ask_stage_by_stage(analyst, westmere, "What is the capital of Westmere?")
    replaced = COUNTRY_PROFILE.replace("Its capital is Arlen", "Its capital is Brenford")
    in_other_connection(lambda: ingest_texts(westmere, embedder, {"country-profile": replaced}))

    answer = services.question_answer_stages(question_id=question.pk)

    question.refresh_from_db()
    assert question.status == Question.Status.DONE, question.error
    # Retrieval never saw the new text; the old rows are gone: the answer uses neither.
    assert "Brenford" not in answer.text
    assert not Citation.objects.filter(answer_sentence__answer=answer, text__contains="Brenford").exists()


@pytest.mark.django_db(transaction=True)
def test_a_new_document_is_searchable_at_once_and_not_at_an_earlier_version(westmere, embedder):
    earlier = adapters.DjangoCorpusIndex(westmere)
    ingest_texts(westmere, embedder, {"fisheries": NEW_REPORT})

    index = adapters.DjangoCorpusIndex(westmere)

    [(key, _)] = index.lexical_search("tonnes of cod landed", "sentence", 1)
    assert index.passage(key).document_id == "fisheries"
    [(key, _)] = index.lexical_search("tonnes of cod landed", "document", 1)
    assert key == "document:fisheries"
    assert "fisheries" in {p.document_id for p in index.passages("chunk")}
    # Retrievers that encode the whole corpus cache by this sequence: the same one until it changes.
    assert adapters.DjangoCorpusIndex(westmere).passages("chunk") is index.passages("chunk")
    assert earlier.passages("chunk") is not index.passages("chunk")
    # A stage that recorded the version before the bulletin still reads without it.
    again = adapters.DjangoCorpusIndex(westmere, version=earlier.version)
    assert again.lexical_search("tonnes of cod landed", "sentence", 5) == []
    assert "fisheries" not in {p.document_id for p in again.passages("document")}
