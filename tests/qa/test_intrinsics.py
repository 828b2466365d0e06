"""The intrinsics on their own, through the REST API and the `intrinsic` command:
real embedder, real PostgreSQL, the small Westmere corpus."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.factories import CorpusFactory, TeamFactory
from tests.qa.test_api import client_for

INVENTED = "Westmere's national football team won the 1998 world championship in Arlen."
COPIED = "The authority employed 1,850 staff at the end of the year."


def post(user, corpus, endpoint, **body):
    return client_for(user).post(f"/api/corpora/{corpus.pk}/{endpoint}/", body, format="json")


@pytest.mark.django_db
def test_cite_outside_text_supports_a_copied_sentence_and_not_an_invented_one(analyst, westmere):
    response = post(analyst, westmere, "cite", text=f"{COPIED} {INVENTED} Hope this helps!")
    assert response.status_code == 200, response.content
    body = response.json()
    copied, invented, aside = body["sentences"]
    assert copied["label"] == "supported"
    assert [c["document"] for c in copied["citations"]] == ["port-report"]
    assert "1,850 staff" in copied["citations"][0]["text"]
    assert copied["citations"][0]["sentence_id"] > 0
    assert invented["label"] == "unsupported"
    assert invented["risk"] > copied["risk"]
    assert aside["label"] == "no_claim" and not aside["citations"]
    assert body["counts"] == {"supported": 1, "partial": 0, "unsupported": 1, "no_claim": 1}


@pytest.mark.django_db
def test_check_answers_and_citations_never_calls_a_claim_supported_that_its_citation_contradicts(
    analyst, westmere
):
    """The words overlap almost entirely; the direction and the figure do not."""
    checked = post(
        analyst,
        westmere,
        "answer-check",
        question="How did container traffic at the Port of Westmere change in 2024?",
        answer="The Port of Westmere handled 4.2 million containers in 2024, a decrease of 6 percent "
        "over 2023. The authority employed 1,850 staff at the end of the year. "
        "The authority employed twelve thousand staff at the end of the year.",
    )
    assert checked.status_code == 200, checked.content
    direction, copied, figure = checked.json()["sentences"]
    assert "increase of 6 percent" in direction["citations"][0]["text"]
    assert direction["label"] == "unsupported" and direction["risk"] == 1.0
    assert direction["reason"] == (
        "contradicts its citation: the claim says 'decrease', the source says 'increase'"
    )
    assert copied["label"] == "supported"
    assert figure["label"] == "unsupported"
    assert "the claim says 'twelve thousand', the source says '1,850'" in figure["reason"]


@pytest.mark.django_db
def test_cite_refuses_empty_text_and_other_teams_corpora(analyst, westmere):
    empty = post(analyst, westmere, "cite", text="   ")
    assert empty.status_code == 400 and "text" in empty.json()
    foreign = CorpusFactory(team=TeamFactory())
    missing = post(analyst, foreign, "cite", text=COPIED)
    assert missing.status_code == 404
    assert missing.json() == {"detail": "No such corpus."}


@pytest.mark.django_db
def test_answerability_tells_an_answerable_question_from_an_unanswerable_one(analyst, westmere):
    answerable = post(
        analyst, westmere, "answerability", question="How many staff did the port authority employ?"
    )
    assert answerable.status_code == 200, answerable.content
    verdict = answerable.json()["answerability"]
    assert verdict["kind"] == "answerable" and verdict["probability"] >= 0.5
    assert verdict["signals"]["best_sentence_cosine"] > 0
    refused = post(analyst, westmere, "answerability", question="What was the population of Arlen in 1850?")
    assert refused.json()["answerability"]["kind"] in ("unanswerable", "partial")
    assert refused.json()["answerability"]["probability"] < verdict["probability"]


@pytest.mark.django_db
def test_context_relevance_labels_each_retrieved_passage(analyst, westmere):
    response = post(
        analyst,
        westmere,
        "context-relevance",
        question="How many containers did the Port of Westmere handle?",
    )
    assert response.status_code == 200, response.content
    passages = response.json()["passages"]
    labels = {p["document"]: p["label"] for p in passages}
    assert labels["port-report"] == "relevant"
    assert [p["rank"] for p in passages] == list(range(1, len(passages) + 1))
    assert labels.get("memo", "irrelevant") != "relevant"


@pytest.mark.django_db
def test_answer_check_flags_supported_sentences_that_do_not_answer(analyst, westmere):
    question = "How many staff did the port authority employ?"
    off = post(
        analyst,
        westmere,
        "answer-check",
        question=question,
        answer="Westmere gained independence in 1962 and adopted its current constitution in 1994.",
    )
    assert off.status_code == 200, off.content
    body = off.json()
    assert body["sentences"][0]["label"] == "supported"
    assert body["check"]["addresses_question"] is False
    on = post(analyst, westmere, "answer-check", question=question, answer=COPIED).json()
    assert on["check"]["addresses_question"] is True
    assert on["check"]["probability"] > body["check"]["probability"]


@pytest.mark.django_db
def test_intrinsic_command_prints_labels_and_json(westmere):
    out = StringIO()
    call_command("intrinsic", "cite", "--corpus", westmere.name, f"{COPIED} {INVENTED}", stdout=out)
    text = out.getvalue()
    assert "supported" in text and "port-report" in text and "unsupported" in text
    out = StringIO()
    call_command(
        "intrinsic",
        "answerability",
        "--corpus",
        westmere.name,
        "--json",
        "How many staff did the port employ?",
        stdout=out,
    )
    assert json.loads(out.getvalue())["answerability"]["kind"] == "answerable"


@pytest.mark.django_db
def test_intrinsics_run_a_team_preset_by_name_and_refuse_unknown_ones(analyst, staff, westmere):
    # The team's admin saves the preset; any member runs it by name.
    created = client_for(staff).post(
        "/api/team-presets/",
        {"team": westmere.team.pk, "name": "lexical-2", "parameters": {"retriever": "bm25", "top_k": 2}},
        format="json",
    )
    assert created.status_code == 201, created.content
    question = "How many containers did the Port of Westmere handle?"
    context = post(analyst, westmere, "context-relevance", question=question, preset="lexical-2")
    assert context.status_code == 200, context.content
    passages = context.json()["passages"]
    assert len(passages) == 2  # the team preset's top_k, not default's
    assert passages[0]["document"] == "port-report"
    answerable = post(analyst, westmere, "answerability", question=question, preset="lexical-2")
    assert answerable.status_code == 200 and answerable.json()["answerability"]["kind"] == "answerable"

    unknown = post(analyst, westmere, "answerability", question=question, preset="no-such-preset")
    assert unknown.status_code == 400
    assert "Unknown preset 'no-such-preset'" in unknown.json()["detail"]
    assert f"a preset of team {westmere.team.name}" in unknown.json()["detail"]
    no_retrieval = post(analyst, westmere, "context-relevance", question=question, preset="vanilla")
    assert no_retrieval.status_code == 400 and "does not retrieve" in no_retrieval.json()["detail"]

    out = StringIO()
    call_command(
        "intrinsic",
        "context-relevance",
        "--corpus",
        westmere.name,
        "--preset",
        "lexical-2",
        "--json",
        question,
        stdout=out,
    )
    assert len(json.loads(out.getvalue())["passages"]) == 2
    with pytest.raises(CommandError, match="Unknown preset 'wide'"):
        call_command("intrinsic", "answerability", "--corpus", westmere.name, "--preset", "wide", question)
