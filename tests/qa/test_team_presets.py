"""Team presets: saved in the browser, listed and used through the API, evaluated by `evaluate`,
and the 400s a bad preset or parameter gets."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from audit.models import AuditEvent
from documents.embedding import get_embedder
from documents.models import Sentence
from qa.models import Question, TeamPreset
from review.benchmark_files import CaseSpec, ImportPlan
from review.models import EvaluationRun
from review.services.benchmarks import benchmark_import
from tests.factories import CorpusFactory, TeamFactory
from tests.qa.conftest import COUNTRY_PROFILE, ingest_texts
from tests.qa.test_api import ask, client_for

PASSWORD = "correct horse battery"  # tests.factories.UserFactory's

STAFF_QUESTION = "How many staff did the port authority employ?"


@pytest.fixture
def analyst(member_with_role):
    """A team admin: saving and deleting a team's presets is its admins' (documents.permissions)."""
    return member_with_role("admin")


def browser_for(user) -> Client:
    browser = Client()
    assert browser.login(username=user.username, password=PASSWORD)
    return browser


def port_benchmark(corpus):
    [staff] = Sentence.objects.filter(document__corpus=corpus, text__contains="1,850 staff")
    key = f"port-report#{staff.label}"
    case = CaseSpec(
        case_id="staff",
        split="dev",
        question=STAFF_QUESTION,
        gold_documents=("port-report",),
        gold_evidence=(key,),
        evidence_texts={key: staff.text},
        reference_answer="1,850 staff.",
        answerable=True,
    )
    plan = ImportPlan(documents=(), cases=(case,))
    return benchmark_import(name="port", plan=plan, corpus_name=corpus.name, source_format="jsonl").benchmark


@pytest.mark.django_db
def test_a_team_preset_round_trips_through_the_browser_the_api_and_evaluate(analyst, westmere):
    browser = browser_for(analyst)
    saved = browser.post(
        "/presets/",
        {
            "team": westmere.team.pk,
            "name": "lexical-3",
            "description": "BM25 only, three passages",
            "base": "default",
            "retriever": "bm25",
            "top_k": "3",
        },
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert "lexical-3" in browser.get("/presets/").content.decode()

    # The ask form offers it, under the team's name.
    form = browser.get("/").content.decode()
    assert f'<optgroup label="Team {westmere.team.name}">' in form
    assert '<option value="lexical-3">' in form

    # The API lists it with the configuration it resolves to.
    api = client_for(analyst)
    [listed] = api.get("/api/team-presets/").json()["results"]
    assert listed["name"] == "lexical-3" and listed["team"] == westmere.team.name
    assert listed["parameters"] == {"retriever": "bm25", "top_k": 3}
    assert listed["config"]["retrieval"]["method"] == "bm25" and listed["config"]["retrieval"]["top_k"] == 3

    # Asking with it by name, through the API and through the browser, runs that configuration.
    response = ask(api, westmere, STAFF_QUESTION, preset="lexical-3")
    assert response.status_code == 202, response.content
    assert response.json()["preset"] == "lexical-3"
    assert response.json()["config"]["retrieval"]["method"] == "bm25"
    asked = browser.post("/", {"corpus": westmere.pk, "preset": "lexical-3", "question": STAFF_QUESTION})
    assert asked.status_code == 302
    from_browser = Question.objects.filter(user=analyst).latest("created_at")
    assert from_browser.preset == "lexical-3" and from_browser.config["retrieval"]["top_k"] == 3

    # `evaluate --preset lexical-3` runs it on the team's benchmark, with the real pipeline.
    port_benchmark(westmere)
    out = StringIO()
    call_command("evaluate", user=analyst.username, benchmark="port", preset="lexical-3", stdout=out)
    run = EvaluationRun.objects.get(preset="lexical-3")
    assert run.status == EvaluationRun.Status.DONE, run.error
    assert run.preset_config["retrieval"]["method"] == "bm25" and run.preset_config["base"] == "default"
    evaluated = Question.objects.get(is_evaluation=True, text=STAFF_QUESTION)
    assert evaluated.config["retrieval"]["method"] == "bm25"
    trace = evaluated.trace["retrieval"]["candidates"]
    assert trace and all(set(c["scores"]) == {"bm25"} for c in trace)  # no dense retriever ran
    assert run.metrics["recall_at_1"] == 1.0  # BM25 finds the port report for a staff question

    # Deleted through the API, it leaves the form; what ran with it keeps its configuration.
    assert api.delete(f"/api/team-presets/{listed['id']}/").status_code == 204
    assert '<option value="lexical-3">' not in browser.get("/").content.decode()
    gone = ask(api, westmere, STAFF_QUESTION, preset="lexical-3")
    assert gone.status_code == 400 and "Unknown preset 'lexical-3'" in gone.json()["detail"]
    evaluated.refresh_from_db()
    assert evaluated.config["retrieval"]["method"] == "bm25"

    # The audit trail says who saved and who deleted it, and what it was.
    trail = AuditEvent.objects.filter(target_type="team_preset").order_by("id")
    assert [(e.action, e.actor_name) for e in trail] == [
        ("preset.create", analyst.username),
        ("preset.delete", analyst.username),
    ]
    assert trail[0].detail["base"] == "default" and trail[0].team_id == westmere.team_id


@pytest.mark.django_db
def test_ask_parameters_change_one_question_and_contradictions_get_a_400(analyst, westmere):
    api = client_for(analyst)
    response = ask(api, westmere, STAFF_QUESTION, preset="default", parameters={"top_k": 2, "alpha": 0.8})
    assert response.status_code == 202, response.content
    config = response.json()["config"]
    assert config["retrieval"]["top_k"] == 2 and config["retrieval"]["alpha"] == 0.8
    assert config["parameters"] == {"top_k": 2, "alpha": 0.8} and config["base"] == "default"

    bad = {
        "alpha with a BM25 retriever": ({"retriever": "bm25", "alpha": 0.3}, "alpha weighs a hybrid"),
        "an unknown retriever": ({"retriever": "grep"}, "retriever"),
        "a misspelt parameter": ({"topk": 3}, "topk"),
        "top_k out of range": ({"top_k": 0}, "top_k"),
        "a reranker with nothing to rerank": ({"reranker": "evidence", "rerank_depth": 0}, "rerank_depth"),
        "an overlap as long as the chunk": (
            {"chunker": "tokens", "chunk_size": 30, "chunk_overlap": 30},
            "chunk_overlap 30 must be below chunk_size 30",
        ),
        "a chunker for sentences": ({"unit": "sentence", "chunker": "recursive"}, "need unit chunk"),
    }
    for what, (parameters, named) in bad.items():
        refused = ask(api, westmere, STAFF_QUESTION, parameters=parameters)
        assert refused.status_code == 400, what
        assert named in refused.content.decode(), (what, refused.content)
    recut = ask(api, westmere, STAFF_QUESTION, parameters={"chunker": "tokens", "chunk_size": 30})
    assert recut.status_code == 202, recut.content
    assert recut.json()["config"]["retrieval"]["chunker"] == {
        "kind": "tokens",
        "size": 30,
        "overlap": 7,
        "within_sections": True,  # read by the sentence windows only
    }
    no_retrieval = ask(api, westmere, STAFF_QUESTION, preset="vanilla", parameters={"top_k": 3})
    assert no_retrieval.status_code == 400 and "does not retrieve" in no_retrieval.json()["detail"]
    assert Question.objects.count() == 2  # nothing refused was queued


@pytest.mark.django_db
def test_team_presets_belong_to_their_team(analyst, outsider, westmere):
    api = client_for(analyst)
    created = api.post(
        "/api/team-presets/",
        {"team": westmere.team.name, "name": "wide", "base": "default", "parameters": {"top_k": 12}},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["config"]["retrieval"]["top_k"] == 12

    # Another team's member neither sees it nor may ask with it on their own corpus.
    other_team = TeamFactory()
    other_team.members.add(outsider)
    other_corpus = CorpusFactory(team=other_team)
    theirs = client_for(outsider)
    assert theirs.get("/api/team-presets/").json()["results"] == []
    assert theirs.get(f"/api/team-presets/{created.json()['id']}/").status_code == 404
    assert theirs.delete(f"/api/team-presets/{created.json()['id']}/").status_code == 404
    ingest_texts(other_corpus, get_embedder(), {"profile": COUNTRY_PROFILE})
    refused = ask(theirs, other_corpus, "What is the capital of Westmere?", preset="wide")
    assert refused.status_code == 400 and "Unknown preset 'wide'" in refused.json()["detail"]
    # ... nor save one for a team they are not in.
    foreign = theirs.post("/api/team-presets/", {"team": westmere.team.name, "name": "x"}, format="json")
    assert foreign.status_code == 404


@pytest.mark.django_db
def test_saving_a_team_preset_refuses_bad_names_and_parameters(analyst, westmere):
    api = client_for(analyst)

    def save(**body):
        return api.post("/api/team-presets/", {"team": westmere.team.pk, **body}, format="json")

    assert save(name="default").status_code == 400  # a built-in preset's name
    assert "built-in" in save(name="default").json()["detail"]
    assert save(name="has space").status_code == 400
    assert save(name="ok", base="no-such-preset").status_code == 400
    contradiction = save(name="ok", parameters={"retriever": "dense", "fusion": "rrf"})
    assert contradiction.status_code == 400 and "fusion" in contradiction.json()["detail"]
    assert save(name="ok", parameters={"retriever": "dense"}).status_code == 201
    taken = save(name="ok")
    assert taken.status_code == 409 and "already has a preset named 'ok'" in taken.json()["detail"]
    assert list(TeamPreset.objects.values_list("name", flat=True)) == ["ok"]

    # The browser shows the same message beside the form, and saves nothing.
    page = browser_for(analyst).post(
        "/presets/", {"team": westmere.team.pk, "name": "ok2", "base": "bm25", "alpha": "0.3"}
    )
    assert page.status_code == 400 and "alpha weighs a hybrid" in page.content.decode()
    assert not TeamPreset.objects.filter(name="ok2").exists()


@pytest.mark.django_db
def test_an_evaluation_run_started_in_the_browser_runs_the_team_preset(analyst, westmere):
    api = client_for(analyst)
    assert (
        api.post(
            "/api/team-presets/",
            {"team": westmere.team.pk, "name": "dense-2", "parameters": {"retriever": "dense", "top_k": 2}},
            format="json",
        ).status_code
        == 201
    )
    benchmark = port_benchmark(westmere)
    browser = browser_for(analyst)
    assert '<option value="dense-2">' in browser.get("/evaluate/").content.decode()
    started = browser.post("/evaluate/", {"benchmark": benchmark.pk, "preset": "dense-2", "split": ""})
    assert started.status_code == 302
    run = EvaluationRun.objects.get(preset="dense-2")
    assert (
        run.preset_config["retrieval"]["method"] == "dense" and run.preset_config["retrieval"]["top_k"] == 2
    )
    # The review queue can filter on it too.
    assert '<option value="dense-2">' in browser.get("/review/").content.decode()


@pytest.mark.django_db
def test_a_team_preset_switches_reply_rules_off_and_fuses_two_retrievers_chosen_in_the_browser(
    analyst, westmere
):
    browser = browser_for(analyst)
    form = browser.get("/presets/").content.decode()
    # Both multi-value parameters are boxes to tick, one per choice, not a number field.
    assert 'type="checkbox" name="rules_off" value="answer_in_part"' in form
    assert 'type="checkbox" name="hybrid_of" value="bm25"' in form
    saved = browser.post(
        "/presets/",
        {
            "team": westmere.team.pk,
            "name": "no-partial",
            "base": "default",
            "retriever": "hybrid",
            "hybrid_of": ["bm25", "dense"],
            "rules_off": ["answer_in_part", "unanswerable"],
        },
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]

    api = client_for(analyst)
    [listed] = api.get("/api/team-presets/").json()["results"]
    assert listed["parameters"]["rules_off"] == ["unanswerable", "answer_in_part"]
    assert listed["config"]["answer"]["rules_off"] == ["unanswerable", "answer_in_part"]
    assert listed["config"]["retrieval"]["hybrid_of"] == ["bm25", "dense"]

    # A question asked with it runs with those rules off; one API request can switch another off.
    response = ask(
        api, westmere, STAFF_QUESTION, preset="no-partial", parameters={"rules_off": ["answer_check"]}
    )
    assert response.status_code == 202, response.content
    assert response.json()["config"]["answer"]["rules_off"] == ["answer_check"]
    unknown = ask(api, westmere, STAFF_QUESTION, preset="default", parameters={"rules_off": ["be_nice"]})
    assert unknown.status_code == 400 and "be_nice" in unknown.content.decode()
