"""The ask form's date range and source filter: clear errors, and the scope shown with the question."""

from __future__ import annotations

import datetime

import pytest

from qa.models import Question
from tests.ui.conftest import PASSWORD, PRESET

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, analyst):
    assert client.login(username=analyst.username, password=PASSWORD)
    return client


@pytest.mark.parametrize(
    "data, message",
    [
        ({"published_from": "2022-08-01", "published_to": "2022-07-01"}, "The date range is empty"),
        ({"published_from": "21 July"}, "Enter a date like 2022-07-21."),
        ({"sources": "reuters, harbor-authority-report.txt"}, "has no documents from &#x27;reuters&#x27;"),
    ],
)
def test_a_scope_that_cannot_match_is_reported_on_the_form(signed_in, demo_documents, corpus, data, message):
    body = {"corpus": corpus.pk, "preset": PRESET, "question": "How many staff?", **data}
    response = signed_in.post("/", body)
    assert response.status_code == 200
    page = response.content.decode()
    assert message in page
    assert 'id="ask-scope" open' in page  # the disclosure opens on its own errors
    assert not Question.objects.exists()


def test_a_question_asked_in_a_scope_shows_it(signed_in, demo_documents, corpus):
    client = signed_in
    response = client.post(
        "/",
        {
            "corpus": corpus.pk,
            "preset": PRESET,
            "question": "How many staff?",
            "published_from": "2022-07-01",
            "sources": "harbor-authority-report.txt",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    question = Question.objects.get()
    assert question.published_from == datetime.date(2022, 7, 1)
    assert question.sources == ["harbor-authority-report.txt"]
    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert "documents published 2022-07-01 to any time" in page
    assert "sources harbor-authority-report.txt" in page
