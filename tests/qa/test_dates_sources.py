"""Date ranges and source filters run inside the SQL searches; answers show each cited document's date.

Real PostgreSQL with pgvector, the real encoder. Four short articles about the
same pipeline from different dates and outlets, so a search without the filter
finds the wrong day first.
"""

from __future__ import annotations

import datetime
from dataclasses import replace

import pytest

from documents import services as document_services
from documents.models import Document
from qa import services
from qa.adapters import DjangoCorpusIndex
from qa.models import Question
from qa.pipeline.reading.dates import DocumentScope
from tests.qa.test_api import ask, client_for

D = datetime.date
ARTICLES = {
    # name: (published, source, text)
    "gas-june": (
        D(2022, 6, 14),
        "wire",
        "Gas flows through the Nord Stream pipeline fell to 40 percent of capacity on Tuesday. "
        "Gazprom blamed a delayed turbine repair for the cut.",
    ),
    "gas-july": (
        D(2022, 7, 21),
        "wire",
        "Gas flows through the Nord Stream pipeline resumed on Thursday after ten days of maintenance. "
        "Germany welcomed the restart but kept filling its storage.",
    ),
    "gas-late-july": (
        D(2022, 7, 27),
        "daily",
        "Gas flows through the Nord Stream pipeline fell to 20 percent of capacity on Wednesday. "
        "Gazprom blamed a turbine repair for the cut.",
    ),
    "pipeline-profile": (
        None,
        "reference",
        "Nord Stream is a pair of gas pipelines under the Baltic Sea from Russia to Germany. "
        "Each line can carry 27.5 billion cubic meters of gas a year.",
    ),
}
QUERY = "gas flows through the Nord Stream pipeline"


@pytest.fixture
def news(corpus, embedder):
    for name, (published, source, text) in ARTICLES.items():
        [parsed] = document_services.parse_upload(filename=f"{name}.txt", data=text.encode())
        parsed = replace(parsed, published=published, source=source)
        staged = document_services.document_stage(corpus=corpus, parsed=parsed, enqueue=False).document
        staged = Document.objects.get(pk=staged.pk)
        document_services.document_embed(
            document_id=staged.pk, expected_hash=staged.pending_hash, embedder=embedder
        )
    return corpus


def _documents(index: DjangoCorpusIndex, hits) -> list[str]:
    return [index.passage(key).document_id for key, _ in hits]


JULY = DocumentScope(D(2022, 7, 1), D(2022, 7, 31))


@pytest.mark.django_db
def test_bm25_filters_before_its_top_k_and_keeps_the_corpus_scores(news):
    for unit in ("sentence", "chunk", "document"):
        everything = DjangoCorpusIndex(news)
        july = DjangoCorpusIndex(news, scope=JULY)
        full = everything.lexical_search(QUERY, unit, 50)
        scoped = july.lexical_search(QUERY, unit, 50)
        assert set(_documents(july, scoped)) == {"gas-july", "gas-late-july"}, unit
        # The scope's best k, not what of the corpus's top k survived: k=1 still finds July.
        [(best, _)] = july.lexical_search(QUERY, unit, 1)
        assert july.passage(best).published.month == 7
        # Same scores as the whole corpus gives them: only the set of documents changes.
        full_scores = dict(full)
        assert all(abs(full_scores[key] - score) < 1e-9 for key, score in scoped)


SCOPES = [
    # Two of four documents: the HNSW index with iterative scans.
    (JULY, {"gas-july", "gas-late-july"}),
    # One of four (at most a quarter of the corpus): an exact scan of the scope's own rows.
    (DocumentScope(sources=("daily",)), {"gas-late-july"}),
    (DocumentScope(published_to=D(2022, 6, 30), sources=("wire",)), {"gas-june"}),
]


@pytest.mark.django_db
def test_dense_search_returns_only_documents_in_scope(news, embedder):
    vector = embedder.encode([QUERY])[0]
    for scope, expected in SCOPES:
        for unit in ("sentence", "chunk", "document"):
            index = DjangoCorpusIndex(news, scope=scope)
            assert len(index.dense_search(vector, unit, 1)) == 1
            assert set(_documents(index, index.dense_search(vector, unit, 50))) == expected, (scope, unit)
            assert set(_documents(index, index.lexical_search(QUERY, unit, 50))) <= expected


@pytest.mark.django_db
def test_passages_carry_their_document_date_and_source(news):
    index = DjangoCorpusIndex(news)
    by_document = {p.document_id: p for p in index.passages("chunk")}
    assert by_document["gas-july"].published == D(2022, 7, 21)
    assert by_document["gas-july"].source == "wire"
    assert by_document["pipeline-profile"].published is None
    assert {p.document_id for p in DjangoCorpusIndex(news, scope=JULY).passages("sentence")} == {
        "gas-july",
        "gas-late-july",
    }


@pytest.mark.django_db
def test_an_answer_in_a_date_range_cites_only_that_range_and_shows_each_date(news, analyst):
    question = services.answer_now(
        user=analyst,
        corpus=news,
        text="What happened to gas flows through the Nord Stream pipeline?",
        scope=DocumentScope(D(2022, 7, 1), D(2022, 7, 24)),
    )
    assert question.status == Question.Status.DONE, question.error
    assert (question.published_from, question.published_to) == (D(2022, 7, 1), D(2022, 7, 24))
    answer = question.answer
    assert not answer.refused, answer.note
    cited = [c for s in answer.sentences.all() for c in s.citations.all()]
    assert cited and {c.document_external_id for c in cited} == {"gas-july"}
    assert {c.document_published for c in cited} == {D(2022, 7, 21)}
    assert set(answer.retrieved_documents) == {"gas-july"}
    # The API gives each citation its document's date.
    body = client_for(analyst).get(f"/api/questions/{question.pk}/").json()
    dates = {c["document_published"] for s in body["answer"]["sentences"] for c in s["citations"]}
    assert dates == {"2022-07-21"}
    assert body["published_from"] == "2022-07-01"


@pytest.mark.django_db
def test_a_question_naming_a_month_ranks_that_months_article_above_the_other_days(news, analyst):
    asked = {
        "How far did gas flows through the Nord Stream pipeline fall in June 2022?": "gas-june",
        "How far did gas flows through the Nord Stream pipeline fall on 27 July 2022?": "gas-late-july",
    }
    for text, expected in asked.items():
        question = services.answer_now(user=analyst, corpus=news, text=text)
        assert question.status == Question.Status.DONE, question.error
        dated = [d for d in question.answer.retrieved_documents if d.startswith("gas-")]
        assert dated[0] == expected, (text, dated)
        assert question.trace["retrieval"]["period"]


REFUSED = [
    ({"published_from": "2022-08-01", "published_to": "2022-07-01"}, "published_to", "empty"),
    ({"published_from": "21/07/2022"}, "published_from", "format"),
    ({"sources": ["reuters"]}, "detail", "wire"),
    ({"sources": [f"s{i}" for i in range(21)]}, "sources", "20"),
]


@pytest.mark.django_db
def test_the_api_refuses_a_scope_that_cannot_match_and_stores_one_that_can(news, analyst):
    client = client_for(analyst)
    for extra, field, phrase in REFUSED:
        response = ask(client, news, "What happened to gas flows?", **extra)
        assert response.status_code == 400, response.content
        body = response.json()
        assert phrase in str(body[field]), body
    assert not Question.objects.exists()
    response = ask(
        client,
        news,
        "What happened to gas flows?",
        published_from="2022-07-01",
        sources=["wire", "daily"],
    )
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["published_from"] == "2022-07-01"
    assert body["published_to"] is None
    assert body["sources"] == ["wire", "daily"]


@pytest.mark.django_db
def test_a_corpus_re_embedded_with_another_model_filters_its_stored_vectors_too(news):
    from documents import reembedding
    from qa.clients import search_embedder

    job = reembedding.reembedding_start(corpus=news, model="e5-small", enqueue=False)
    reembedding.reembedding_run(space_id=job.pk)
    for scope, expected in SCOPES:
        index = DjangoCorpusIndex(news, scope=scope)
        assert index.space is not None
        vector = search_embedder(index.space).encode([QUERY])[0]
        for unit in ("sentence", "chunk", "document"):
            assert set(_documents(index, index.dense_search(vector, unit, 50))) == expected, (scope, unit)
