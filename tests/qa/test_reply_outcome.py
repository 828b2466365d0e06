"""The reply outcome a client branches on, end to end on the real database: the API, `ask --json` and
the answer card agree, and no reply that is low-confidence or refused carries an answer's badge."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from qa import services
from qa.management.commands.ask import as_json
from qa.pipeline.checks.reply import DEFAULT_ANSWER_CONFIDENCE
from qa.services.team_presets import team_preset_create
from tests.qa.test_api import client_for

PASSWORD = "correct horse battery"  # tests.factories.UserFactory's
STAFF = "How many staff did the port authority employ?"
ANSWER_BADGES = (
    'class="badge supported"',
    'class="badge quote"',
    'class="badge partial"',
    'class="badge relation answers"',
)


def browser_for(user) -> Client:
    browser = Client()
    assert browser.login(username=user.username, password=PASSWORD)
    return browser


def team_preset(analyst, corpus, name: str, **parameters):
    return team_preset_create(
        user=analyst, team=corpus.team, name=name, base="default", parameters=parameters
    )


@pytest.mark.django_db
def test_a_low_confidence_answer_is_marked_in_the_api_ask_json_and_the_page(analyst, westmere):
    # Every calibrated confidence is below 0.99 (qa.pipeline.checks.confidence), so this team preset shows
    # no answer as an answer: the same question, the same answer, another outcome.
    team_preset(analyst, westmere, "wary", answer_confidence=1.0)
    question = services.answer_now(corpus=westmere, text=STAFF, user=analyst, preset="wary")
    assert not question.answer.refused and "1,850" in question.answer.text

    body = client_for(analyst).get(f"/api/questions/{question.pk}/").json()["answer"]
    assert body["outcome"] == "low_confidence"
    assert "sure that this answers your question" in body["outcome_reason"]
    assert "%" not in body["outcome_reason"]  # plain words; the figures are in the trace
    assert [s["label"] for s in body["sentences"]] == [None] * len(body["sentences"])

    page = browser_for(analyst).get(f"/questions/{question.pk}/").content.decode()
    assert "This may not answer your question." in page
    assert "sure that this answers your question" in page
    assert not any(badge in page for badge in ANSWER_BADGES)
    assert '<details class="sources sources-collapsed">' in page  # the sources are collapsed
    assert "1,850 staff" in page  # still shown, for the reader to judge

    # `ask --json` prints as_json (its --preset takes built-in presets only).
    printed = as_json(question)
    assert printed["outcome"] == "low_confidence" and printed["outcome_reason"] == body["outcome_reason"]
    assert all(s["label"] is None for s in printed["sentences"])


@pytest.mark.django_db
def test_ask_json_prints_the_outcome_at_the_default_threshold(analyst, westmere):
    out = io.StringIO()
    call_command("ask", STAFF, "--corpus", westmere.name, "--user", analyst.username, "--json", stdout=out)
    printed = json.loads(out.getvalue())
    confident = printed["confidence"] >= DEFAULT_ANSWER_CONFIDENCE
    assert printed["outcome"] == ("answer" if confident else "low_confidence")
    labels = {s["label"] for s in printed["sentences"] if s["citations"]}
    assert labels == ({"quote"} if confident else {None})


@pytest.mark.django_db
def test_a_confident_extractive_answer_is_labelled_quote_not_supported(analyst, westmere):
    team_preset(analyst, westmere, "trusting", answer_confidence=0.0)
    question = services.answer_now(corpus=westmere, text=STAFF, user=analyst, preset="trusting")

    body = client_for(analyst).get(f"/api/questions/{question.pk}/").json()["answer"]
    assert body["outcome"] == "answer"
    assert "likely right" in body["outcome_reason"]
    cited = [s for s in body["sentences"] if s["citations"]]
    assert cited and all(s["label"] == "quote" for s in cited)
    assert all(s["support"] in ("supported", "partial", "unsupported") for s in cited)  # stored as it was

    page = browser_for(analyst).get(f"/questions/{question.pk}/").content.decode()
    assert 'class="badge quote"' in page and 'class="badge supported"' not in page
    assert "quoted from the sources" in page
    assert "This may not answer your question." not in page


@pytest.mark.django_db
def test_a_refusal_has_outcome_refused_and_no_badges(analyst, westmere):
    question = services.answer_now(
        corpus=westmere,
        text="What is the annual rainfall on the moon of Jupiter called Europa?",
        user=analyst,
    )
    assert question.answer.refused
    body = client_for(analyst).get(f"/api/questions/{question.pk}/").json()["answer"]
    assert body["outcome"] == "refused" and body["outcome_reason"]
    assert all(s["label"] is None for s in body["sentences"])
    page = browser_for(analyst).get(f"/questions/{question.pk}/").content.decode()
    assert "No answer." in page
    # (the page's preset guide has badges of its own: only an answer's would mislead)
    assert not any(badge in page for badge in ANSWER_BADGES)


@pytest.mark.django_db
def test_an_answer_stored_before_outcomes_still_loads_and_renders(analyst, westmere):
    question = services.answer_now(corpus=westmere, text=STAFF, user=analyst)
    # As stored before this change: a configuration without the thresholds, an answering step whose
    # settings lack them, and (a second time) the untyped version 1 trace.
    del question.config["answer"]["answer_confidence"], question.config["answer"]["withhold_confidence"]
    del question.trace["answering"]["config"]["answer_confidence"]
    question.save()
    for trace in (question.trace, {"retrieval": {"candidates": []}}):
        question.trace = trace
        question.save()
        response = client_for(analyst).get(f"/api/questions/{question.pk}/")
        assert response.status_code == 200
        confidence = question.answer.confidence
        expected = "answer" if confidence >= DEFAULT_ANSWER_CONFIDENCE else "low_confidence"
        assert response.json()["answer"]["outcome"] == expected
        page = browser_for(analyst).get(f"/questions/{question.pk}/")
        assert page.status_code == 200 and "1,850 staff" in page.content.decode()


@pytest.mark.django_db
def test_the_openapi_schema_documents_the_outcome(analyst):
    schema = client_for(analyst).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]
    answer = components["Answer"]["properties"]
    [outcomes] = answer["outcome"]["allOf"]
    assert set(components[outcomes["$ref"].rsplit("/", 1)[1]]["enum"]) == {
        "answer",
        "low_confidence",
        "partial",
        "ask_back",
        "refused",
    }
    assert "low_confidence" in answer["outcome"]["description"]
    assert "outcome_reason" in answer


@pytest.mark.django_db
def test_an_answer_below_withhold_confidence_is_not_shown(analyst, westmere):
    team_preset(analyst, westmere, "silent", answer_confidence=1.0, withhold_confidence=1.0)
    question = services.answer_now(corpus=westmere, text=STAFF, user=analyst, preset="silent")
    assert not question.answer.refused  # the pipeline answered; the preset withholds it
    body = client_for(analyst).get(f"/api/questions/{question.pk}/").json()["answer"]
    assert body["outcome"] == "refused"
    assert "not sure enough of it to show it" in body["outcome_reason"]
    page = browser_for(analyst).get(f"/questions/{question.pk}/").content.decode()
    assert "No answer." in page and "not sure enough of it to show it" in page
    assert "1,850 staff" not in page.split('class="sources')[0]  # the withheld text is not shown as an answer
    assert not any(badge in page for badge in ANSWER_BADGES)
