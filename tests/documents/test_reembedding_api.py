"""Re-embedding through the REST API, run by a real Celery worker; corpora created with their model."""

from __future__ import annotations

import pytest

from documents.models import Corpus, EmbeddingSpace
from tests.conftest import wait_for
from tests.documents.test_api import client_for
from tests.qa.conftest import COUNTRY_PROFILE, PORT_REPORT, ingest_texts
from tests.qa.test_api import ask


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_a_re_embedding_started_through_the_api_runs_on_a_worker_and_answers_use_the_new_model(
    celery_worker_process, staff, analyst, corpus, embedder
):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT, "country-profile": COUNTRY_PROFILE})
    api, url = client_for(staff), f"/api/corpora/{corpus.pk}/embedding/"
    assert api.get(url).json()["model"] == "all-MiniLM-L6-v2"

    missing = api.post(url, {"model": "no-such/model-v9"}, format="json")
    assert (
        missing.status_code == 400
        and "model: 'no-such/model-v9' is not an embedding model" in missing.json()["detail"]
    )
    assert client_for(analyst).post(url, {"model": "e5-small"}, format="json").status_code == 403

    started = api.post(url, {"model": "e5-small"}, format="json")
    assert started.status_code == 202, started.content
    assert (started.json()["model"], started.json()["dimension"]) == ("e5-small", 384)
    again = api.post(url, {"model": "default"}, format="json")
    assert again.status_code == 409 and "being re-embedded" in again.json()["detail"]

    body = wait_for(
        lambda: (b := api.get(url).json())["jobs"][0]["status"] in ("active", "failed") and b,
        message="the worker to re-embed the corpus",
    )
    job = body["jobs"][0]
    assert job["status"] == "active", job["error"]
    assert (body["model"], body["dimension"], job["progress"], job["documents_done"]) == (
        "e5-small",
        384,
        100,
        2,
    )
    detail = api.get(f"/api/corpora/{corpus.pk}/").json()
    assert (detail["embedding_model"], detail["embedding_dimension"]) == ("e5-small", 384)

    asked = ask(client_for(analyst), corpus, "How many staff did the port authority employ?", preset="basic")
    assert asked.status_code == 202, asked.content
    answered = wait_for(
        lambda: (b := api.get(asked.json()["status_url"]).json())["status"] in ("done", "failed") and b,
        message="the worker to answer over the e5 vectors",
    )
    assert answered["status"] == "done", answered["error"]
    cited = [c["text"] for s in answered["answer"]["sentences"] for c in s["citations"]]
    assert any("1,850 staff" in text for text in cited)


@pytest.mark.django_db
def test_a_corpus_created_with_a_model_records_it_and_an_unknown_model_is_a_400(staff, team):
    api = client_for(staff)
    created = api.post(
        "/api/corpora/",
        {"name": "multilingual", "team": team.name, "embedding_model": "e5-small"},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert (created.json()["embedding_model"], created.json()["embedding_dimension"]) == ("e5-small", 384)
    corpus = Corpus.objects.get(name="multilingual")
    assert corpus.embedding_space.status == EmbeddingSpace.Status.ACTIVE

    refused = api.post(
        "/api/corpora/", {"name": "other", "team": team.name, "embedding_model": "not-a-model"}, format="json"
    )
    assert refused.status_code == 400 and "embedding_model: 'not-a-model'" in refused.json()["detail"]
    assert not Corpus.objects.filter(name="other").exists()
    plain = api.post("/api/corpora/", {"name": "plain", "team": team.name}, format="json").json()
    assert (plain["embedding_model"], plain["embedding_dimension"]) == ("all-MiniLM-L6-v2", 384)
