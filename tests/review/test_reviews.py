"""Reviewing answers through the API: history, the conflict rule, reasons, corrections, team scoping."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from review.models import Review
from review.services import reviews as review_services
from tests.factories import CorpusFactory, TeamFactory, UserFactory
from tests.review.helpers import OMAN, PORT, client_for, make_answer, make_document, sentence

pytestmark = pytest.mark.urls("tests.review.urls")


@pytest.fixture
def oman(corpus):
    return make_document(corpus, "gold/oman", OMAN)


@pytest.fixture
def answer(corpus, analyst, oman):
    return make_answer(
        corpus=corpus,
        user=analyst,
        parts=[("The Portuguese held Muscat from 1507.", [sentence(oman, "S2")])],
        retrieved=["gold/oman"],
    )


@pytest.fixture
def second_reviewer(team):
    user = UserFactory()
    team.members.add(user)
    return user


def reviews_url(answer) -> str:
    return f"/api/answers/{answer.pk}/reviews/"


@pytest.mark.django_db
def test_every_decision_is_kept_and_the_latest_is_current(analyst, answer, oman):
    client = client_for(analyst)
    assert (
        client.post(reviews_url(answer), {"action": "accept", "base_version": 0}, format="json").status_code
        == 201
    )
    flagged = client.post(
        reviews_url(answer),
        {"action": "flag", "reason": "incomplete", "comment": "Say when they left.", "base_version": 1},
        format="json",
    )
    assert flagged.status_code == 201, flagged.content
    corrected = client.post(
        reviews_url(answer),
        {
            "action": "correct",
            "base_version": 2,
            "sentences": [
                {
                    "text": "The Portuguese held Muscat from 1507 to 1650.",
                    "citations": [sentence(oman, "S2").pk],
                }
            ],
        },
        format="json",
    )
    assert corrected.status_code == 201, corrected.content

    history = client.get(reviews_url(answer)).json()
    assert [r["action"] for r in history["reviews"]] == ["accept", "flag", "correct"]
    assert [r["version"] for r in history["reviews"]] == [1, 2, 3]
    assert history["version"] == 3
    assert history["current"]["action"] == "correct"
    assert history["reviews"][1]["comment"] == "Say when they left."
    assert history["reviews"][0]["reviewer"] == analyst.username
    assert history["content"]["text"] == "The Portuguese held Muscat from 1507 to 1650."
    [cited] = history["content"]["sentences"][0]["citations"]
    assert (cited["document_external_id"], cited["label"]) == ("gold/oman", "S2")
    assert cited["text"] == OMAN[1]
    # The generated answer itself is untouched.
    answer.refresh_from_db()
    assert answer.text == "The Portuguese held Muscat from 1507."


@pytest.mark.django_db
def test_second_reviewer_on_a_stale_version_gets_409_and_sees_the_first_decision(
    analyst, second_reviewer, answer
):
    first, second = client_for(analyst), client_for(second_reviewer)
    seen_by_both = first.get(reviews_url(answer)).json()["version"]
    assert second.get(reviews_url(answer)).json()["version"] == seen_by_both == 0

    flagged = first.post(
        reviews_url(answer),
        {"action": "flag", "reason": "wrong_citation", "comment": "S2 does not say 1650.", "base_version": 0},
        format="json",
    )
    assert flagged.status_code == 201
    stale = second.post(
        reviews_url(answer), {"action": "accept", "base_version": seen_by_both}, format="json"
    )

    assert stale.status_code == 409
    body = stale.json()
    assert body["current_version"] == 1
    [newer] = body["newer"]
    assert (newer["action"], newer["reason"], newer["reviewer"]) == (
        "flag",
        "wrong_citation",
        analyst.username,
    )
    assert newer["comment"] == "S2 does not say 1650."
    assert Review.objects.filter(answer=answer).count() == 1  # nothing was overwritten or added

    retried = second.post(reviews_url(answer), {"action": "accept", "base_version": 1}, format="json")
    assert retried.status_code == 201
    assert [r["action"] for r in first.get(reviews_url(answer)).json()["reviews"]] == ["flag", "accept"]


@pytest.mark.django_db(transaction=True)
def test_simultaneous_decisions_on_the_same_version_store_exactly_one(team, corpus, analyst, second_reviewer):
    oman = make_document(corpus, "gold/oman", OMAN)
    answer = make_answer(corpus=corpus, user=analyst, parts=[("Muscat.", [sentence(oman, "S2")])])
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def decide(reviewer):
        try:
            barrier.wait()
            review_services.answer_accept(answer=answer, reviewer=reviewer, base_version=0)
            outcomes.append("stored")
        except review_services.ReviewConflict as conflict:
            outcomes.append(f"conflict:{len(conflict.newer)}")
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(user,)) for user in (analyst, second_reviewer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict:1", "stored"]
    assert list(Review.objects.filter(answer=answer).values_list("version", flat=True)) == [1]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "phrase"),
    [
        ({"action": "flag"}, "needs a reason"),
        ({"action": "flag", "reason": "looks odd"}, "looks odd"),
        ({"action": "flag", "reason": "other"}, "needs a comment"),
        ({"action": "accept", "reason": "wrong"}, "no reason"),
        ({"action": "correct"}, "corrected text"),
        ({"action": "accept", "text": "New text"}, "correction only"),
        ({"action": "approve"}, "approve"),
    ],
)
def test_invalid_decisions_are_refused_with_a_reason_and_store_nothing(analyst, answer, payload, phrase):
    response = client_for(analyst).post(reviews_url(answer), {**payload, "base_version": 0}, format="json")
    assert response.status_code == 400, response.content
    assert phrase in str(response.json())
    assert not Review.objects.filter(answer=answer).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reason", ["wrong", "incomplete", "unsupported_claim", "wrong_citation", "should_have_refused", "other"]
)
def test_every_flag_reason_is_accepted_with_a_comment(analyst, answer, reason):
    response = client_for(analyst).post(
        reviews_url(answer),
        {"action": "flag", "reason": reason, "comment": "see S2", "base_version": 0},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["reason"] == reason


@pytest.mark.django_db
def test_a_correction_cannot_cite_sentences_of_another_corpus(analyst, answer):
    elsewhere = make_document(CorpusFactory(), "port", PORT)
    foreign = sentence(elsewhere, "S1")
    response = client_for(analyst).post(
        reviews_url(answer),
        {
            "action": "correct",
            "base_version": 0,
            "sentences": [{"text": "Containers.", "citations": [foreign.pk]}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert str(foreign.pk) in response.json()["detail"]
    assert not Review.objects.exists()


@pytest.mark.django_db
def test_text_only_correction_keeps_the_citations(analyst, answer):
    response = client_for(analyst).post(
        reviews_url(answer),
        {"action": "correct", "base_version": 0, "text": "Portugal held Muscat."},
        format="json",
    )
    assert response.status_code == 201
    content = client_for(analyst).get(reviews_url(answer)).json()["content"]
    assert content["text"] == "Portugal held Muscat."
    assert [c["label"] for c in content["sentences"][0]["citations"]] == ["S2"]


@pytest.mark.django_db
def test_other_teams_get_404_everywhere(outsider, analyst, answer):
    client = client_for(outsider)
    assert client.get(reviews_url(answer)).status_code == 404
    assert (
        client.post(reviews_url(answer), {"action": "accept", "base_version": 0}, format="json").status_code
        == 404
    )
    assert (
        client.post(f"/api/answers/{answer.pk}/gold/", {"benchmark": "b", "split": "dev"}).status_code == 404
    )
    assert client.get("/api/review-queue/").json()["results"] == []
    assert not Review.objects.exists()


@pytest.mark.django_db
def test_review_queue_filters_by_status_corpus_preset_and_reviewer(
    team, corpus, analyst, second_reviewer, oman
):
    other_corpus = CorpusFactory(team=team)
    port = make_document(other_corpus, "port", PORT)
    fresh = make_answer(
        corpus=corpus, user=analyst, question="Q fresh", parts=[("A.", [sentence(oman, "S1")])]
    )
    flagged = make_answer(corpus=corpus, user=analyst, question="Q flagged", preset="bm25")
    accepted = make_answer(
        corpus=other_corpus, user=analyst, question="Q port", parts=[("B.", [sentence(port, "S1")])]
    )
    review_services.answer_flag(answer=flagged, reviewer=analyst, base_version=0, reason="wrong")
    review_services.answer_accept(answer=accepted, reviewer=second_reviewer, base_version=0)
    hidden = make_answer(corpus=CorpusFactory(team=TeamFactory()), user=UserFactory(), question="Q hidden")

    client = client_for(analyst)

    def ids(query: str) -> list[int]:
        response = client.get(f"/api/review-queue/{query}")
        assert response.status_code == 200, response.content
        return [item["answer"] for item in response.json()["results"]]

    assert ids("") == [fresh.pk, flagged.pk, accepted.pk]
    assert hidden.pk not in ids("")
    assert ids("?status=unreviewed") == [fresh.pk]
    assert ids("?status=flagged") == [flagged.pk]
    assert ids(f"?corpus={other_corpus.pk}") == [accepted.pk]
    assert ids(f"?corpus={corpus.name}") == [fresh.pk, flagged.pk]
    assert ids("?preset=bm25") == [flagged.pk]
    assert ids(f"?reviewer={second_reviewer.username}") == [accepted.pk]
    item = client.get("/api/review-queue/?status=flagged").json()["results"][0]
    assert (item["latest_action"], item["latest_reason"], item["review_count"]) == ("flag", "wrong", 1)
    assert client.get("/api/review-queue/?status=bogus").status_code == 400


@pytest.mark.django_db
def test_review_queue_puts_the_least_confident_answers_first(corpus, analyst, oman):
    sure = make_answer(corpus=corpus, user=analyst, question="Q sure", confidence=0.93)
    unsure = make_answer(corpus=corpus, user=analyst, question="Q unsure", confidence=0.21)
    unknown = make_answer(corpus=corpus, user=analyst, question="Q stored before confidence")
    middling = make_answer(corpus=corpus, user=analyst, question="Q middling", confidence=0.55)
    client = client_for(analyst)

    def ids(query: str) -> list[int]:
        response = client.get(f"/api/review-queue/{query}")
        assert response.status_code == 200, response.content
        return [item["answer"] for item in response.json()["results"]]

    assert ids("?order=confidence") == [unsure.pk, middling.pk, sure.pk, unknown.pk]
    assert ids("") == [sure.pk, unsure.pk, unknown.pk, middling.pk]
    first = client.get("/api/review-queue/?order=confidence").json()["results"][0]
    assert first["confidence"] == pytest.approx(0.21)
