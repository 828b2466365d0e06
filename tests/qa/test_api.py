"""Asking through the REST API: jobs, answers with citations, scoping and bad input."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from qa.models import Question
from tests.conftest import wait_for


def client_for(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def ask(client, corpus, question, **extra):
    return client.post(
        "/api/questions/", {"corpus": corpus.name, "question": question, **extra}, format="json"
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_question_answered_by_a_real_worker_with_sentence_citations(celery_worker_process, analyst, westmere):
    client = client_for(analyst)
    response = ask(client, westmere, "How many staff did the port authority employ?")
    assert response.status_code == 202, response.content
    status_url = response.json()["status_url"]
    body = wait_for(
        lambda: (b := client.get(status_url).json())["status"] in ("done", "failed") and b,
        message="the worker to answer the question",
    )
    assert body["status"] == "done", body["error"]
    answer = body["answer"]
    assert not answer["refused"]
    cited = [c for s in answer["sentences"] for c in s["citations"]]
    assert any("1,850 staff" in c["text"] for c in cited)
    for sentence in answer["sentences"]:
        assert sentence["support"] in ("supported", "partial", "unsupported")
        for citation in sentence["citations"]:
            assert citation["document"] and citation["sentence"]
            assert citation["end"] > citation["start"]
    # Each stage is traced: candidates with their scores, and timings.
    assert body["trace"]["retrieval"]["candidates"][0]["scores"]
    assert {"retrieval", "generation"} <= set(body["trace"]["timings"])


@pytest.mark.django_db
def test_unanswerable_question_is_refused_without_citations(analyst, westmere):
    from qa import services

    question = services.answer_now(
        corpus=westmere,
        text="What is the annual rainfall on the moon of Jupiter called Europa?",
        user=analyst,
    )
    assert question.status == Question.Status.DONE, question.error
    assert question.answer.refused
    assert "insufficient evidence" in question.answer.text.lower()
    assert not question.answer.sentences.filter(citations__isnull=False).exists()


@pytest.mark.django_db
def test_document_text_cannot_inject_instructions(analyst, westmere):
    from qa import services

    question = services.answer_now(corpus=westmere, text="What is the capital of Westmere?", user=analyst)
    assert question.status == Question.Status.DONE
    assert "Arlen" in question.answer.text
    assert "Paris" not in question.answer.text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "status", "phrase"),
    [
        ({"question": "   "}, 400, "blank"),
        ({"question": "Why?", "preset": "magic"}, 400, "magic"),
        ({"question": "x" * 2001}, 400, "2000"),
    ],
)
def test_bad_questions_get_a_clear_400(analyst, westmere, payload, status, phrase):
    response = client_for(analyst).post(
        "/api/questions/", {"corpus": westmere.name, **payload}, format="json"
    )
    assert response.status_code == status
    assert phrase in str(response.json()).lower()
    assert not Question.objects.exists()


@pytest.mark.django_db
def test_corpus_without_ready_documents_says_so(analyst, corpus):
    response = ask(client_for(analyst), corpus, "Anything?")
    assert response.status_code == 409
    assert "no ready documents" in response.json()["detail"]


@pytest.mark.django_db
def test_other_teams_corpora_and_answers_are_404(analyst, outsider, westmere):
    from qa import services

    question = services.answer_now(corpus=westmere, text="What is the capital of Westmere?", user=analyst)
    client = client_for(outsider)
    assert ask(client, westmere, "What is the capital?").status_code == 404
    assert client.get(f"/api/questions/{question.pk}/").status_code == 404
    assert client_for(analyst).get(f"/api/questions/{question.pk}/").status_code == 200


@pytest.mark.django_db
def test_llm_only_preset_without_an_llm_fails_with_a_readable_reason(analyst, westmere):
    from qa import services

    question = services.answer_now(
        corpus=westmere, text="What is the capital?", preset="llm-only", user=analyst
    )
    assert question.status == Question.Status.FAILED
    assert "QA_LLM_PROVIDER" in question.error


@pytest.mark.django_db
def test_openapi_schema_lists_the_question_endpoints(analyst):
    paths = client_for(analyst).get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert "/api/questions/" in paths and "/api/questions/{id}/" in paths
    assert client_for(analyst).get("/api/docs/").status_code == 200


@pytest.mark.django_db
def test_question_without_a_preset_uses_qa_default_preset(analyst, westmere, settings):
    from qa import services

    settings.QA_DEFAULT_PRESET = "bm25"
    response = ask(client_for(analyst), westmere, "What is the capital of Westmere?")
    assert response.status_code == 202, response.content
    assert Question.objects.get().preset == "bm25"
    queued = services.question_ask(user=analyst, corpus=westmere, text="Who runs the port?")
    assert queued.preset == "bm25" and queued.config["name"] == "bm25"


@pytest.mark.django_db
def test_an_unknown_qa_default_preset_is_named_instead_of_answering(analyst, westmere, settings):
    settings.QA_DEFAULT_PRESET = "fastest"
    from django.core.exceptions import ImproperlyConfigured

    from qa.apps import check_default_preset

    assert "QA_DEFAULT_PRESET='fastest'" in check_default_preset()[0].msg
    with pytest.raises(ImproperlyConfigured, match="QA_DEFAULT_PRESET"):
        ask(client_for(analyst), westmere, "What is the capital of Westmere?")


@pytest.mark.django_db
def test_a_vague_follow_up_is_asked_back_and_an_answerable_one_answered(analyst, westmere):
    from qa import services

    client = client_for(analyst)
    first = services.answer_now(corpus=westmere, text="What is the capital of Westmere?", user=analyst)
    # Nothing earlier in the conversation names an organisation: "this organisation" points at nothing.
    vague = services.answer_now(
        corpus=westmere,
        text="How many staff did this organisation employ?",
        user=analyst,
        conversation=first.conversation,
    )
    body = client.get(f"/api/questions/{vague.pk}/").json()
    assert body["conversation"] == first.conversation_id
    assert body["answer"]["kind"] == "underspecified" and not body["answer"]["refused"]
    assert body["answer"]["text"].startswith("Which organisation do you mean?")
    assert "learned turn-kind model" in body["answer"]["note"]
    assert all(not s["citations"] for s in body["answer"]["sentences"])
    # The same conversation goes on: a follow-up whose "it" memory resolves is answered with the fact.
    answerable = services.answer_now(
        corpus=westmere, text="When did it gain independence?", user=analyst, conversation=first.conversation
    )
    body = client.get(f"/api/questions/{answerable.pk}/").json()
    assert body["standalone_text"] == "When did Westmere gain independence?"
    assert body["answer"]["kind"] in ("answerable", "partial") and not body["answer"]["refused"]
    assert "1962" in body["answer"]["text"]
    assert any("1962" in c["text"] for s in body["answer"]["sentences"] for c in s["citations"])
