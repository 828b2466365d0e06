"""The ask form's advanced settings, and the trace's per-retriever view of what retrieval did."""

from __future__ import annotations

import pytest

from qa.models import Question
from qa.pipeline.search.retrievers import RETRIEVER_NAMES
from tests.ui.conftest import PASSWORD

pytestmark = pytest.mark.django_db
QUESTION = "How many containers did the port handle in 2024?"


@pytest.fixture
def browser(client, analyst):
    assert client.login(username=analyst.username, password=PASSWORD)
    return client


def test_the_advanced_settings_offer_every_retriever_of_the_pipeline(browser, corpus):
    page = browser.get("/").content.decode()
    assert "Advanced: retriever, alpha, top-k, reranker" in page
    for name in RETRIEVER_NAMES:
        assert f'<option value="{name}">' in page, name
    assert 'type="range"' in page  # the alpha slider


def test_advanced_settings_change_this_question_only(browser, analyst, demo_documents, corpus):
    asked = browser.post(
        "/",
        {"corpus": corpus.pk, "preset": "default", "question": QUESTION, "retriever": "bm25", "top_k": "2",
         "alpha": "0.5"},
    )  # fmt: skip
    assert asked.status_code == 302
    question = Question.objects.get(user=analyst)
    assert question.preset == "default" and question.config["base"] == "default"
    assert question.config["retrieval"]["method"] == "bm25" and question.config["retrieval"]["top_k"] == 2
    assert question.config["parameters"] == {"retriever": "bm25", "top_k": 2}  # the slider was not set

    # The slider counts once its box says so; alpha on a BM25 retriever is explained, not asked.
    refused = browser.post(
        "/",
        {"corpus": corpus.pk, "preset": "default", "question": QUESTION, "retriever": "bm25", "alpha": "0.3",
         "alpha_set": "on"},
    )  # fmt: skip
    assert refused.status_code == 200
    assert "alpha weighs a hybrid" in refused.content.decode()
    assert Question.objects.filter(user=analyst).count() == 1
    hybrid = browser.post(
        "/",
        {"corpus": corpus.pk, "preset": "default", "question": QUESTION, "alpha": "0.8", "alpha_set": "on"},
    )
    assert hybrid.status_code == 302
    assert Question.objects.filter(user=analyst).latest("created_at").config["retrieval"]["alpha"] == 0.8


def test_the_trace_shows_each_retrievers_own_ranking_before_fusion(browser, answered):
    run = answered.trace["retrieval"]
    page = browser.get(f"/questions/{answered.pk}/trace/").content.decode()
    assert "What each retriever contributed" in page
    bm25, dense = run["retrievers"]
    assert (bm25["retriever"], dense["retriever"]) == ("bm25", "dense")
    for contribution in (bm25, dense):
        assert f'<table data-retriever="{contribution["retriever"]}">' in page
        assert f"returned {contribution['returned']} candidate" in page
        # Its own first passage, with the rank fusion gave it.
        top = contribution["hits"][0]
        assert top["rank"] == 1 and top["key"] in page
    # BM25's ranking is by BM25 score, and the candidate table's fused order is where each landed.
    assert [h["score"] for h in bm25["hits"]] == sorted((h["score"] for h in bm25["hits"]), reverse=True)
    fused_order = [c["key"] for c in run["candidates"]]
    for h in bm25["hits"][:5]:
        if h["fused_rank"] <= len(fused_order):
            assert fused_order[h["fused_rank"] - 1] == h["key"]


def test_a_run_stored_before_the_per_retriever_record_says_so(browser, answered):
    trace = dict(answered.trace)
    trace["retrieval"] = {k: v for k, v in trace["retrieval"].items() if k != "retrievers"}
    Question.objects.filter(pk=answered.pk).update(trace=trace)
    page = browser.get(f"/questions/{answered.pk}/trace/").content.decode()
    assert "stored before each retriever's own ranking was recorded" in page
    assert "BM25" in page and "Dense" in page  # its candidate table keeps the old columns
