"""The reader's exact answer span is marked inside the quoted answer sentence on the answer card,
and the API carries the same span on the sentence (`span`)."""

from __future__ import annotations

import html
import re

import pytest

from tests.qa.pipeline.tiny_models import save_tiny_span_reader
from tests.ui.conftest import PASSWORD


@pytest.fixture(scope="module")
def tiny_reader(tmp_path_factory):
    return save_tiny_span_reader(tmp_path_factory.mktemp("squad2"))


def card_and_api_sentences(client, analyst, corpus, text: str) -> tuple[str, list[dict]]:
    """``text`` answered with ``default``: the answer card's HTML, and the API's answer sentences."""
    from rest_framework.test import APIClient

    from qa.services import answer_now

    question = answer_now(corpus=corpus, text=text, preset="default", user=analyst)
    assert client.login(username=analyst.username, password=PASSWORD)
    page = html.unescape(client.get(f"/questions/{question.pk}/").content.decode())
    api = APIClient()
    api.force_authenticate(analyst)
    sentences = api.get(f"/api/questions/{question.pk}/").json()["answer"]["sentences"]
    return page[page.index('aria-label="Answer, sentence by sentence"') :], sentences


@pytest.mark.django_db
def test_the_answer_card_and_the_api_show_the_readers_span(
    settings, tiny_reader, client, analyst, demo_documents, corpus
):
    settings.QA_SPAN_READER_MODEL = tiny_reader
    card, sentences = card_and_api_sentences(
        client, analyst, corpus, "How many containers did the port handle in 2024?"
    )
    marked = re.findall(r'<mark class="answer-span"[^>]*>([^<]+)</mark>', card)
    assert marked, "no answer span marked on the card"
    spans = [(s["text"], s["span"]) for s in sentences if s["span"]]
    for text, span in spans:
        assert text[span["start"] : span["end"]] == span["text"] and span["score"] > 0
        assert span["guess"] is False  # a SQuAD 2.0 reader judges whether there is an answer
    assert [span["text"] for _, span in spans] == marked
    assert "answer-span guess" not in card


@pytest.mark.django_db
def test_the_shipped_reader_marks_its_guess_and_says_so(settings, client, analyst, demo_documents, corpus):
    """QA_SPAN_READER_MODEL=shipped: the project's own span reader points at the likeliest words of
    every answer sentence; the card underlines them as a guess (not a named reader's highlight),
    saying the cited sentence is the answer, and the API says `guess`."""
    settings.QA_SPAN_READER_MODEL = "shipped"
    card, sentences = card_and_api_sentences(client, analyst, corpus, "What is the capital of Westmere?")
    marked = re.findall(r'<mark class="answer-span guess" title="([^"]+)">([^<]+)</mark>', card)
    assert marked, "the shipped reader's guess is not marked on the card"
    assert all("guess" in title and "the cited sentence is the answer" in title for title, _ in marked)
    spans = [s["span"] for s in sentences if s["span"]]
    assert len(spans) == len(sentences) and all(span["guess"] for span in spans)
    assert [span["text"] for span in spans] == [text for _, text in marked]
