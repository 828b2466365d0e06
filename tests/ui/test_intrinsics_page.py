"""The intrinsics page of a corpus: an analyst pastes a text and sees citations with support labels,
and checks a question's answerability, its passages' relevance and an answer (demo corpus, real
embedder, Django test client)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

COPIED = "The authority employed 1,850 staff at the end of the year."
INVENTED = "Westmere's national football team won the 1998 world championship in Arlen."


def rows(page: str, css: str) -> list[str]:
    return re.findall(rf'<tr class="{css}" data-label="([a-z_]+)"', page)


def test_the_corpus_page_links_to_the_check_page(client, analyst, corpus):
    client.force_login(analyst)
    page = client.get(f"/corpora/{corpus.pk}/").content.decode()
    assert f'href="/corpora/{corpus.pk}/intrinsics/"' in page
    check = client.get(f"/corpora/{corpus.pk}/intrinsics/")
    assert check.status_code == 200
    assert "Cite a text" in check.content.decode() and "Check a question" in check.content.decode()


def test_pasting_a_text_shows_each_sentence_with_its_label_and_source(
    client, analyst, demo_documents, corpus
):
    client.force_login(analyst)
    response = client.post(
        f"/corpora/{corpus.pk}/intrinsics/", {"tool": "cite", "text": f"{COPIED} {INVENTED} Thanks!"}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert rows(page, "support-row") == ["supported", "unsupported", "no_claim"]
    assert "1 supported · 0 partial · 1 unsupported · 1 no claim" in page
    assert '<span class="badge neutral">no claim</span>' in page  # the label in words, not "noclaim"
    # The copied sentence cites the report's own sentence, linked to the document viewer.
    [report] = [d for d in demo_documents if d.external_id == "harbor-authority-report"]
    assert re.search(rf'<a href="/documents/{report.pk}/\?highlight=[^"]+#s-\d+">Harbor Authority', page)
    assert "nothing in the corpus" in page  # the invented sentence has no source


def test_an_on_topic_question_for_an_unstated_fact_is_shown_as_unanswerable(
    client, analyst, demo_documents, corpus
):
    client.force_login(analyst)
    page = client.post(
        f"/corpora/{corpus.pk}/intrinsics/",
        {"tool": "check", "question": "What was the population of Westmere in 1962?", "preset": "default"},
    ).content.decode()
    assert 'data-kind="unanswerable"' in page and "Unanswerable" in page
    assert "the passages found do not state the answer" in page
    # The passages are still listed with their relevance, so the analyst sees what was read.
    assert rows(page, "passage-row")

    answerable = client.post(
        f"/corpora/{corpus.pk}/intrinsics/",
        {"tool": "check", "question": "How many residents were evacuated because of the floods?"},
    ).content.decode()
    assert 'data-kind="answerable"' in answerable
    labels = rows(answerable, "passage-row")
    assert labels[0] == "relevant"


def test_an_answer_of_true_but_off_question_sentences_is_marked_as_not_answering(
    client, analyst, demo_documents, corpus
):
    client.force_login(analyst)
    page = client.post(
        f"/corpora/{corpus.pk}/intrinsics/",
        {
            "tool": "check",
            "question": "How many staff did the port authority employ?",
            "preset": "default",
            "answer": "Westmere gained independence in 1962 and adopted its current constitution in 1994.",
        },
    ).content.decode()
    assert 'data-addresses="no"' in page
    assert rows(page, "support-row") == ["supported"]  # true, and still not an answer

    on = client.post(
        f"/corpora/{corpus.pk}/intrinsics/",
        {"tool": "check", "question": "How many staff did the port authority employ?", "answer": COPIED},
    ).content.decode()
    assert 'data-addresses="yes"' in on


def test_bad_input_is_explained_beside_the_form(client, analyst, demo_documents, corpus):
    client.force_login(analyst)
    empty = client.post(f"/corpora/{corpus.pk}/intrinsics/", {"tool": "cite", "text": "  "})
    assert empty.status_code == 400 and "Paste a text first." in empty.content.decode()
    unknown = client.post(
        f"/corpora/{corpus.pk}/intrinsics/",
        {"tool": "check", "question": "What is the capital?", "preset": "no-such-preset"},
    )
    assert unknown.status_code == 400 and "no-such-preset" in unknown.content.decode()
    no_retrieval = client.post(
        f"/corpora/{corpus.pk}/intrinsics/",
        {"tool": "check", "question": "What is the capital of Westmere?", "preset": "vanilla"},
    )
    assert no_retrieval.status_code == 400 and "does not retrieve" in no_retrieval.content.decode()


def test_other_teams_cannot_check_against_a_corpus(client, outsider, corpus):
    client.force_login(outsider)
    assert client.get(f"/corpora/{corpus.pk}/intrinsics/").status_code == 404
    refused = client.post(f"/corpora/{corpus.pk}/intrinsics/", {"tool": "cite", "text": COPIED})
    assert refused.status_code == 404
