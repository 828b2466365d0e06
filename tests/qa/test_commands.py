"""The ask, presets and chat commands."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from qa.models import Question
from qa.pipeline.config.presets import PRESET_NAMES


@pytest.mark.django_db
def test_ask_json_gives_answer_sentences_with_document_and_label_citations(westmere, analyst):
    out = io.StringIO()
    call_command(
        "ask",
        "What is the capital of Westmere?",
        "--corpus",
        westmere.name,
        "--user",
        analyst.username,
        "--json",
        stdout=out,
    )
    body = json.loads(out.getvalue())
    assert {"answer", "refused", "sentences", "preset", "trace"} <= set(body)
    assert "Arlen" in body["answer"]
    citation = body["sentences"][0]["citations"][0]
    assert citation["document"] == "country-profile"
    assert citation["sentence"].isdigit()
    assert citation["text"] in body["answer"] or citation["text"]
    assert body["preset"]["name"] == "default"
    assert 0.5 < body["confidence"] <= 1.0  # calibrated: a plainly stated fact is likely right
    assert body["trace"]["trust"]["answerability"]["kind"] == "answerable"
    assert list(analyst.questions.values_list("text", flat=True)) == ["What is the capital of Westmere?"]


@pytest.mark.django_db
def test_ask_without_preset_answers_with_qa_default_preset(westmere, analyst, settings):
    settings.QA_DEFAULT_PRESET = "bm25"
    out = io.StringIO()
    call_command(
        "ask",
        "What is the capital of Westmere?",
        "--corpus",
        westmere.name,
        "--user",
        analyst.username,
        "--json",
        stdout=out,
    )
    assert json.loads(out.getvalue())["preset"]["name"] == "bm25"


@pytest.mark.django_db
def test_ask_names_an_unknown_corpus(westmere, analyst):
    with pytest.raises(CommandError, match="No corpus named 'nope'"):
        call_command("ask", "Anything?", "--corpus", "nope", "--user", analyst.username, stdout=io.StringIO())


@pytest.mark.django_db
def test_ask_needs_an_existing_user_and_creates_none(westmere):
    users = get_user_model().objects.count()
    with pytest.raises(CommandError, match="Give --user NAME"):
        call_command("ask", "Where is Arlen?", "--corpus", westmere.name, stdout=io.StringIO())
    with pytest.raises(CommandError, match="No user named 'ghost' \\(--user\\)"):
        call_command(
            "ask", "Where is Arlen?", "--corpus", westmere.name, "--user", "ghost", stdout=io.StringIO()
        )
    assert get_user_model().objects.count() == users
    assert not Question.objects.exists()


def test_presets_lists_every_preset_with_its_parameters():
    out = io.StringIO()
    call_command("presets", "--json", stdout=out)
    presets = json.loads(out.getvalue())
    assert [p["name"] for p in presets] == list(PRESET_NAMES)
    report = {"bm25", "llm-only", "rag", "rerank", "llm-cite", "hybrid", "chunk", "verify"}
    flows = {"flow-none", "flow-rewrite", "flow-answerability", "flow-rewrite-answerability"}
    added = {"vanilla", "basic", "advanced", "default", "pairwise", "agentic", "careful"}
    assert report | added | flows == set(PRESET_NAMES)
    default = next(p for p in presets if p["name"] == "default")
    assert default["retrieval"]["unit"] and default["answer"]["max_attempts"] >= 1


def test_presets_plain_listing_groups_every_preset_and_says_llm_only_retrieves_nothing():
    from qa.pipeline.config import preset_guide

    out = io.StringIO()
    call_command("presets", stdout=out)
    lines = out.getvalue().splitlines()
    # Grouped as where presets are chosen in the browser: recommended first, default at its head.
    assert [line for line in lines if line.startswith("== ")] == [
        f"== {group.title} ==" for group in preset_guide.groups()
    ]
    headers = [line.split(":")[0] for line in lines if not line.startswith((" ", "== "))]
    assert sorted(headers) == sorted(PRESET_NAMES)
    assert lines[1].startswith("default: ") and "[no LLM" in lines[1]
    llm_only = next(i for i, line in enumerate(lines) if line.startswith("llm-only:"))
    assert lines[llm_only + 1].strip() == "retrieval: none"
    default = next(i for i, line in enumerate(lines) if line.startswith("default:"))
    assert lines[default + 1].strip().startswith("retrieval: unit=")


def test_chat_answers_follow_ups_with_citations_and_obeys_its_commands(westmere, analyst):
    session = io.StringIO(
        "How many staff did the port authority employ?\n"
        "/preset nonsense\n"
        "/preset bm25\n"
        "And how many containers did it handle?\n"
        "/clear\n"
        "/help\n"
        "/unknown\n"
    )
    out, err = io.StringIO(), io.StringIO()
    call_command("chat", corpus=westmere.name, user=analyst.username, stdin=session, stdout=out, stderr=err)
    text = out.getvalue()
    assert "1,850 staff" in text  # the first answer, with its citation line
    assert "] Harbor Authority Annual Report 2024" in text or "port-report" in text
    assert "Unknown preset 'nonsense'" in err.getvalue() and "Preset: bm25." in text
    # The follow-up was searched with the earlier turn, and answered from the port report.
    assert "(searched as:" in text and "4.2 million containers" in text
    assert "New conversation" in text and "/preset NAME" in text
    assert "Unknown command /unknown" in err.getvalue()
    turns = Question.objects.filter(user=analyst).order_by("created_at")
    assert turns.count() == 2 and turns[0].conversation_id == turns[1].conversation_id


def test_chat_names_a_missing_user(westmere):
    with pytest.raises(CommandError, match="No user named 'ghost'"):
        call_command("chat", corpus=westmere.name, user="ghost", stdin=io.StringIO(""))
