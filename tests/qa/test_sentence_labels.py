"""What an analyst sees per answer sentence, end to end on the real database with an LLM preset (the LLM
answered by a local fake server, the only part outside the project): a generated claim whose figure
and direction differ from its citation is shown as contradicting it, never "supported"; a sentence
about something else is labelled "off the question"; and no such badge appears on a reply that is not
shown as an answer."""

from __future__ import annotations

import pytest

from qa import clients, services
from qa.management.commands.ask import as_json
from tests.qa.conftest import ingest_texts
from tests.qa.pipeline.test_llm_clients import FakeChatServer
from tests.qa.test_api import client_for
from tests.qa.test_reply_outcome import browser_for

MAN_DB_FAQ = (
    "man-db FAQ\n\n"
    "How fast is the full-text search of man-db compared with man? "
    "With its index, man-db performs a full-text search at least three times as quickly as man.\n\n"
    "The Debian archive keyring installation notes were written by a volunteer in Oslo."
)
QUESTION = "How much faster is man-db than man at full-text search?"
CLAIM = "man-db performs a full-text search about ten times more slowly than man."
ASIDE = "The Debian archive keyring installation notes were written by a volunteer in Oslo."


@pytest.fixture
def generated(analyst, corpus, embedder, settings):
    """The `rag` preset's answer (an LLM writes it, overlap cites it, the lexical verifier checks
    it) to the man-db question, the LLM restating the figure wrongly and adding an aside."""
    ingest_texts(corpus, embedder, {"man-db-faq": MAN_DB_FAQ})
    reply = {"choices": [{"message": {"content": f"{CLAIM} {ASIDE}"}}]}
    with FakeChatServer([(200, reply)]) as llm:
        settings.QA_LLM_PROVIDER, settings.QA_LLM_BASE_URL = "openai", f"{llm.url}/v1"
        settings.QA_LLM_MODEL = "fake"
        clients.get_llm_or_none.cache_clear()
        try:
            question = services.answer_now(corpus=corpus, text=QUESTION, user=analyst, preset="rag")
        finally:
            clients.get_llm_or_none.cache_clear()
        assert llm.requests, "the preset never asked the LLM"
    assert not question.answer.refused, question.answer.note
    return question


@pytest.mark.django_db
def test_the_api_shows_the_man_db_contradiction_and_the_off_question_aside(analyst, generated):
    body = client_for(analyst).get(f"/api/questions/{generated.pk}/").json()["answer"]
    assert body["outcome"] == "answer"  # rag estimates no confidence: shown as an answer
    by_text = {s["text"]: s for s in body["sentences"]}
    claim, aside = by_text[CLAIM], by_text[ASIDE]
    assert claim["citations"] and "three times as quickly" in claim["citations"][0]["text"]
    assert claim["label"] == "contradicted" and claim["support"] == "unsupported"
    assert "'about ten times'" in claim["mismatch"] and "'at least three times'" in claim["mismatch"]
    assert "'slowly'" in claim["mismatch"] and "'quickly'" in claim["mismatch"]
    assert aside["relation"] == "off_question"
    assert aside["label"] == "supported"  # true to its source, and still not an answer
    # ask --json says the same.
    printed = {s["text"]: s for s in as_json(generated)["sentences"]}
    assert printed[CLAIM]["label"] == "contradicted" and printed[ASIDE]["relation"] == "off_question"
    # The trace keeps why, for whoever reads it.
    verdicts = generated.trace["answering"]["attempts"][-1]["verification"]["verdicts"]
    assert any(v["contradicted"] and "slowly" in v["mismatch"] for v in verdicts)


def _item(page: str, text: str) -> str:
    """The answer card's list item of the sentence ``text`` (its source's text also appears in the
    citation markers' titles, so the item is found by the text before its first marker)."""
    items = [i.split("</li>")[0] for i in page.split('<li class="answer-sentence"')[1:]]
    return next(i for i in items if text in i.split("<a ")[0])


@pytest.mark.django_db
def test_the_answer_card_says_contradicts_its_citation_and_off_the_question(analyst, generated):
    page = browser_for(analyst).get(f"/questions/{generated.pk}/").content.decode()
    claim_item = _item(page, CLAIM)
    assert 'class="badge contradicted"' in claim_item
    assert "contradicts its citation: the claim says &#x27;about ten times&#x27;" in claim_item
    assert "supported by its citation" not in claim_item
    aside_item = _item(page, ASIDE)
    assert "off the question" in aside_item and "supported by its citation" in aside_item


@pytest.mark.django_db
def test_no_relation_or_support_badge_on_a_reply_not_shown_as_an_answer(analyst, generated):
    # As if asked with a team preset that shows nothing below 100% as an answer, and sure of it at 40%.
    generated.config["answer"]["answer_confidence"] = 1.0
    generated.trace["answering"]["config"]["answer_confidence"] = 1.0
    generated.answer.confidence = 0.4
    generated.answer.save()
    generated.save()
    body = client_for(analyst).get(f"/api/questions/{generated.pk}/").json()["answer"]
    assert body["outcome"] == "low_confidence"
    assert all(s["label"] is None and s["relation"] is None for s in body["sentences"])
    page = browser_for(analyst).get(f"/questions/{generated.pk}/").content.decode()
    assert "This may not answer your question." in page
    assert "answers the question" not in page and "badge relation" not in page
