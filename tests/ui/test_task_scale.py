"""Annotation at team scale in the pages (Django's test client): the annotate page's rubric and keys,
tasks over the questions analysts asked, and the review queue split among a team's annotators."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils.html import escape

from review.models import Annotation, AnnotationTask, Assignment, GoldCase, ReviewAssignment
from review.services.annotation import adjudicate, agreed_to_gold, annotation_submit, annotation_task_create
from review.services.reviews import answer_accept, answer_flag
from tests.review.helpers import OMAN, PORT, client_for, make_answer, make_document, sentence
from tests.ui.test_tasks import people, tiny  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


def _browser(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def _one_item_task(tiny, lead, annotators, overlap=2):  # noqa: F811
    return annotation_task_create(
        benchmark=tiny, name="rubric", annotators=annotators, overlap=overlap, case_ids=["c1"], user=lead
    )


def test_the_annotate_page_has_the_rubric_fields_and_names_its_keys(tiny, corpus, people):  # noqa: F811
    task = _one_item_task(tiny, people["lead"], [people["ann"]], overlap=1)
    assignment = Assignment.objects.get(task=task)
    page = _browser(people["ann"]).get(f"/tasks/assignments/{assignment.pk}/").content.decode()
    for score in "12345":
        assert f'<label for="rubric_{score}">Score {score}</label>' in page
    assert 'name="rubric_description"' in page
    keys = re.search(r'<p class="small muted" id="shortcuts">(.*?)</p>', page, re.S).group(1)
    for key in ("1", "2", "3", "j", "k", "/", "o", "r", "s", "Enter"):
        assert f"<kbd>{key}</kbd>" in keys, key
    assert "task_annotate.js" in page


def test_a_rubric_written_on_the_page_is_kept_shown_again_and_becomes_the_gold_rubric(
    tiny,  # noqa: F811
    corpus,
    people,  # noqa: F811
):
    lead, ann, bob = people["lead"], people["ann"], people["bob"]
    task = _one_item_task(tiny, lead, [ann, bob])
    oman = corpus.documents.get(external_id="oman")
    for user in (ann, bob):
        assignment = Assignment.objects.get(task=task, annotator=user)
        saved = _browser(user).post(
            f"/tasks/assignments/{assignment.pk}/",
            {
                "action": "save",
                "answerability": "answerable",
                "evidence": [sentence(oman, "S2").pk],
                "opened": [oman.pk],
                "reference_answer": "The Portuguese.",
                "rubric_description": f"{user.username}: names the holders",
                "rubric_1": "Wrong people.",
                "rubric_5": "The Portuguese, 1507-1650.",
            },
        )
        assert saved.status_code == 302, saved.content.decode()[:2000]
    mine = Annotation.objects.get(assignment__annotator=ann)
    assert mine.rubric == {
        "description": f"{ann.username}: names the holders",
        "scale": {"1": "Wrong people.", "5": "The Portuguese, 1507-1650."},
    }
    # Reopened, the page shows the rubric as it was saved.
    again = _browser(ann).get(f"/tasks/assignments/{mine.assignment_id}/").content.decode()
    assert 'value="The Portuguese, 1507-1650."' in again
    assert "names the holders</textarea>" in again

    assert agreed_to_gold(task=task, reviewer=lead) == 1
    case = GoldCase.objects.get(benchmark=tiny, case_id="c1")
    first = min(ann.username, bob.username)
    assert case.provenance == "agreed" and case.rubric["description"] == f"{first}: names the holders"


def test_an_annotation_with_no_score_keeps_no_rubric_and_a_bad_rubric_is_refused_by_the_api(
    tiny,  # noqa: F811
    corpus,
    people,  # noqa: F811
):
    task = _one_item_task(tiny, people["lead"], [people["ann"]], overlap=1)
    assignment = Assignment.objects.get(task=task)
    oman = corpus.documents.get(external_id="oman")
    _browser(people["ann"]).post(
        f"/tasks/assignments/{assignment.pk}/",
        {
            "action": "save",
            "answerability": "answerable",
            "evidence": [sentence(oman, "S2").pk],
            "rubric_description": "A description with no score is not a rubric.",
        },
    )
    assert Annotation.objects.get(assignment=assignment).rubric is None
    refused = client_for(people["ann"]).post(
        f"/api/assignments/{assignment.pk}/annotation/",
        {
            "answerability": "answerable",
            "evidence_sentence_ids": [sentence(oman, "S2").pk],
            "rubric": {"scale": {"10": "x"}},
        },
        format="json",
    )
    assert refused.status_code == 400 and "1 to 5" in refused.content.decode()


@pytest.fixture
def asked(corpus, member_with_role):
    """Three questions an analyst asked: one answer accepted, one flagged, one not reviewed."""
    make_document(corpus, "oman", OMAN)
    make_document(corpus, "port", PORT)
    oman = corpus.documents.get(external_id="oman")
    port = corpus.documents.get(external_id="port")
    analyst = member_with_role("viewer")
    reviewer = member_with_role("reviewer", username="lead")
    accepted = make_answer(
        corpus=corpus,
        user=analyst,
        question="Who held Muscat?",
        parts=[("The Portuguese held Muscat.", [sentence(oman, "S2")])],
    )
    answer_accept(answer=accepted, reviewer=reviewer, base_version=0)
    flagged = make_answer(
        corpus=corpus,
        user=analyst,
        question="How many staff does the port employ?",
        parts=[("It handled 4.2 million containers.", [sentence(port, "S1")])],
    )
    answer_flag(answer=flagged, reviewer=reviewer, base_version=0, reason="wrong_citation")
    unreviewed = make_answer(corpus=corpus, user=analyst, question="What is Oman's GDP?", refused=True)
    return {"accepted": accepted, "flagged": flagged, "unreviewed": unreviewed, "lead": reviewer}


def test_a_task_over_the_flagged_questions_analysts_asked_ends_in_adjudicated_gold(
    corpus, asked, member_with_role
):
    lead = asked["lead"]
    ann, bob = member_with_role("annotator", username="ann"), member_with_role("annotator", username="bob")
    tasks_page = _browser(lead).get("/tasks/").content.decode()
    assert "Create a task over questions analysts asked" in tasks_page
    created = _browser(lead).post(
        "/tasks/from-questions/",
        {
            "corpus": corpus.pk,
            "questions": "flagged",
            "benchmark": "asked-gold",
            "name": "flagged answers",
            "overlap": 2,
            "annotators": "ann bob",
            "prefill": "on",
        },
        follow=True,
    )
    assert created.status_code == 200
    page = created.content.decode()
    assert "Task flagged answers created over 1 asked question (benchmark asked-gold)." in page
    case = GoldCase.objects.get(benchmark__name="asked-gold")
    flagged = asked["flagged"]
    assert case.question == flagged.question.text and case.source_answer == flagged
    assert case.provenance == "asked" and case.metadata["review_state"] == "flag"
    # The flagged answer is not gold: the case starts with no evidence, waiting for the annotators.
    assert case.gold_evidence == []

    port = corpus.documents.get(external_id="port")
    ann_item = Assignment.objects.get(task__name="flagged answers", annotator=ann)
    item_page = _browser(ann).get(f"/tasks/assignments/{ann_item.pk}/").content.decode()
    assert escape(flagged.question.text) in item_page
    assert "GroundedQA&#x27;s suggestion" in item_page or "GroundedQA's suggestion" in item_page
    for user, label, cited in ((ann, "answerable", "S2"), (bob, "partial", "S1")):
        annotation_submit(
            assignment=Assignment.objects.get(task__name="flagged answers", annotator=user),
            answerability=label,
            evidence_sentence_ids=[sentence(port, cited).pk],
        )
    task = ann_item.task
    adjudicate(
        task=task,
        gold_case=case,
        adjudicator=lead,
        answerability="answerable",
        evidence_sentence_ids=[sentence(port, "S2").pk],
        reference_answer="1,850 staff.",
    )
    case.refresh_from_db()
    assert case.provenance == "adjudicated" and case.gold_evidence == ["port#S2"]
    assert case.metadata["annotation"]["annotators"] == ["ann", "bob"]
    benchmark_page = _browser(ann).get(f"/benchmarks/{case.benchmark_id}/").content.decode()
    assert escape(flagged.question.text) in benchmark_page


def test_asked_questions_by_review_state_through_the_api(corpus, asked, member_with_role):
    lead = asked["lead"]
    member_with_role("annotator", username="ann")
    body = {
        "corpus": corpus.name,
        "questions": "reviewed",
        "benchmark": "asked-api",
        "name": "reviewed",
        "overlap": 1,
        "annotators": ["ann"],
    }
    created = client_for(lead).post("/api/annotation-tasks/from-questions/", body, format="json")
    assert created.status_code == 201, created.content
    cases = {c.source_answer_id: c for c in GoldCase.objects.filter(benchmark__name="asked-api")}
    assert set(cases) == {asked["accepted"].pk, asked["flagged"].pk}
    # The accepted answer starts as the case's gold; the flagged one does not.
    assert cases[asked["accepted"].pk].gold_evidence == ["oman#S2"]
    assert cases[asked["flagged"].pk].gold_evidence == []

    # Asking again into the same benchmark reuses its cases.
    again = client_for(lead).post(
        "/api/annotation-tasks/from-questions/", {**body, "questions": "all", "name": "all"}, format="json"
    )
    assert again.status_code == 201
    assert GoldCase.objects.filter(benchmark__name="asked-api").count() == 3
    assert AnnotationTask.objects.get(name="all").cases.count() == 3

    annotator = member_with_role("annotator")
    refused = client_for(annotator).post("/api/annotation-tasks/from-questions/", body, format="json")
    assert refused.status_code == 403
    none_match = client_for(lead).post(
        "/api/annotation-tasks/from-questions/",
        {**body, "benchmark": "other", "questions": "unreviewed", "annotators": ["nobody"]},
        format="json",
    )
    assert none_match.status_code == 400 and "nobody" in none_match.content.decode()


@pytest.fixture
def to_review(corpus, member_with_role):
    """Four unreviewed answers of differing confidence."""
    make_document(corpus, "oman", OMAN)
    oman = corpus.documents.get(external_id="oman")
    analyst = member_with_role("viewer")
    return [
        make_answer(
            corpus=corpus,
            user=analyst,
            question=f"Question {i} about Muscat?",
            parts=[("The Portuguese held Muscat.", [sentence(oman, "S2")])],
            confidence=c,
        )
        for i, c in enumerate([0.9, 0.2, 0.6, 0.4])
    ]


def test_the_review_queue_is_split_in_the_page_and_each_sees_their_share_least_confident_first(
    corpus, to_review, member_with_role
):
    lead = member_with_role("reviewer", username="lead")
    ann = member_with_role("annotator", username="ann")
    member_with_role("annotator", username="bob")
    assert "Split the unreviewed answers among reviewers" in _browser(lead).get("/review/").content.decode()
    assert "Split the unreviewed answers" not in _browser(ann).get("/review/").content.decode()

    split = _browser(lead).post("/review/split/", {"corpus": corpus.pk, "reviewers": "ann, bob"}, follow=True)
    assert "Handed 4 answers of" in split.content.decode()
    shares = dict(ReviewAssignment.objects.values_list("answer_id", "reviewer__username"))
    assert sorted(shares.values()) == ["ann", "ann", "bob", "bob"]

    mine = _browser(ann).get("/review/", {"status": "unreviewed", "mine": "on", "order": "confidence"})
    # Each row names its question twice (the cell, and the Review link's label).
    listed = list(dict.fromkeys(re.findall(r"Question (\d) about Muscat", mine.content.decode())))
    expected = sorted((a for a in to_review if shares[a.pk] == "ann"), key=lambda a: a.confidence)
    assert listed == [a.question.text.split()[1] for a in expected]

    answer_accept(answer=expected[0], reviewer=ann, base_version=0)
    progress = _browser(lead).get("/review/").content.decode()
    rows = re.findall(
        r"<tr><td>[^<]*</td><td>(\w+)</td><td class=\"num\">(\d+)</td>"
        r"<td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td></tr>",
        progress,
    )
    assert rows == [("ann", "2", "1", "1"), ("bob", "2", "0", "2")]


def test_splitting_to_a_viewer_is_refused_on_the_page(corpus, to_review, member_with_role):
    lead = member_with_role("reviewer")
    viewer = member_with_role("viewer", username="vic")
    refused = _browser(lead).post("/review/split/", {"corpus": corpus.pk, "reviewers": "vic"})
    assert refused.status_code == 400
    assert "vic: not annotators of team" in refused.content.decode()
    assert not ReviewAssignment.objects.exists()
    assert viewer.pk
