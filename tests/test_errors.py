"""What a client meets when something goes wrong: JSON under /api/, the site's own pages
elsewhere, one wording per kind of error, and never a debug page or a server error for a
malformed request."""

from __future__ import annotations

import logging

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from groundedqa_site import api
from qa.models import Question
from tests.factories import CorpusFactory, TeamFactory


@pytest.fixture
def client_of(db):
    def make(user) -> APIClient:
        client = APIClient(raise_request_exception=False)
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.mark.parametrize(
    "path",
    [
        "/api/corpora/null,null/",
        "/api/questions/abc/",
        "/api/answers/-1/reviews/",
        "/api/no-such-endpoint/",
        "/api/corpora/1/nothing-here/",
    ],
)
def test_an_unmatched_api_path_answers_json_404_naming_it(client_of, analyst, path):
    response = client_of(analyst).get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": f"No such resource: {path}"}


def test_an_unmatched_api_path_is_json_for_a_client_not_signed_in_too(db):
    response = Client().post("/api/corpora/null,null/", data="{}", content_type="application/json")
    assert response.status_code == 404
    assert response.json()["detail"] == "No such resource: /api/corpora/null,null/"


def test_another_teams_corpus_is_not_found_in_one_wording_whichever_endpoint_is_asked(client_of, analyst):
    hidden = CorpusFactory(team=TeamFactory())
    client = client_of(analyst)
    details = {
        client.get(f"/api/corpora/{hidden.pk}/").json()["detail"],  # a generic detail view
        client.get(f"/api/corpora/{hidden.pk}/embedding/").json()["detail"],  # a selector
        client.get(f"/api/corpora/{hidden.pk + 1000}/").json()["detail"],
    }
    assert details == {"No such corpus."}


def test_a_team_preset_missing_is_named_in_words_not_as_a_model_class(client_of, analyst):
    response = client_of(analyst).get("/api/team-presets/999999/")
    assert response.status_code == 404
    assert response.json()["detail"].startswith("No such team preset")


def test_a_nul_character_in_a_team_name_is_a_400_not_a_server_error(client_of, staff):
    team = staff.teams.first()
    response = client_of(staff).post("/api/corpora/", {"name": "reports", "team": f"{team.name}\u0000"})
    assert response.status_code == 400
    assert response.json() == {"team": ["Null characters are not allowed."]}


@pytest.mark.parametrize(
    "body",
    [
        {"question": "What\u0000?"},
        {"question": "What?", "preset": "default\u0000"},
        {"question": "What?", "sources": ["wire\u0000"]},
        {"question": "What?", "parameters": {"retriever\u0000": "bm25"}},
    ],
)
def test_a_nul_character_anywhere_in_a_question_is_a_400(client_of, analyst, corpus, body):
    response = client_of(analyst).post("/api/questions/", {"corpus": corpus.pk, **body})
    assert response.status_code == 400, response.content
    assert not Question.objects.exists()


@pytest.mark.parametrize(("value", "kind"), [(12345, "a number"), (True, "a boolean"), (["why?"], "a list")])
def test_a_question_that_is_not_a_string_is_refused_and_nothing_is_asked(
    client_of, analyst, corpus, value, kind
):
    response = client_of(analyst).post("/api/questions/", {"corpus": corpus.pk, "question": value})
    assert response.status_code == 400
    assert response.json() == {"question": [f"Must be a string, not {kind}."]}
    assert not Question.objects.exists()


def test_the_intrinsics_refuse_a_question_that_is_not_a_string(client_of, analyst, corpus):
    response = client_of(analyst).post(f"/api/corpora/{corpus.pk}/answerability/", {"question": 42})
    assert response.status_code == 400
    assert response.json() == {"question": ["Must be a string, not a number."]}


def test_a_server_error_under_api_is_json_without_a_traceback(client_of, analyst, monkeypatch):
    # An unforeseen failure inside a view (a bug, a lost database): stood in for by a selector
    # that raises, since the point is what the client receives.
    from documents.api import views

    def broken(**_):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(views.CorpusListCreate, "get_queryset", lambda self: broken())
    response = client_of(analyst).get("/api/corpora/")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": api.SERVER_ERROR}
    assert "secret internals" not in response.content.decode()


def test_a_site_page_that_does_not_exist_is_the_friendly_404_not_a_url_listing(analyst):
    client = Client()
    client.force_login(analyst)
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "Page not found" in page and 'href="/corpora/"' in page
    assert "URLconf" not in page and "urlpatterns" not in page


def test_another_teams_corpus_page_is_the_friendly_404(analyst):
    hidden = CorpusFactory(team=TeamFactory())
    client = Client()
    client.force_login(analyst)
    response = client.get(f"/corpora/{hidden.pk}/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


def test_a_server_error_on_a_site_page_is_the_friendly_500(rf):
    # Django renders the 500 page with no request context (the failure may lie there), so the
    # template must stand on its own: this is the handler the URLconf names, as Django calls it.
    from django.urls import get_resolver

    handler = get_resolver().resolve_error_handler(500)
    response = handler(rf.get("/corpora/"))
    assert response.status_code == 500
    page = response.content.decode()
    assert "Something went wrong" in page and "server log" in page
    assert 'href="/login/"' in page  # the header's link for someone the page cannot tell is signed in


def test_the_file_system_broker_connects_without_a_hostname_warning(caplog):
    from groundedqa_site.celery import app

    with caplog.at_level(logging.WARNING, logger="kombu.connection"):
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1)
            connection.info()
    assert "No hostname was supplied" not in caplog.text
