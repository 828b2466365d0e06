"""Annotation tasks through the API, real database: assignment, queues, skips, agreement, adjudication."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from django.core.management import call_command

from review.models import Assignment, GoldCase
from review.services.annotation import assignments_ensure, balanced_assignment
from tests.review.helpers import OMAN, PORT, client_for, make_answer, make_document, sentence

# ---- balanced assignment (pure) ---------------------------------------------------------------

BALANCE_CASES = [
    # (items, annotators, overlap, existing, expected loads)
    (5, ["a", "b", "c"], 2, [], {"a": 4, "b": 3, "c": 3}),
    (4, ["a", "b"], 2, [], {"a": 4, "b": 4}),
    (6, ["a", "b", "c"], 1, [], {"a": 2, "b": 2, "c": 2}),
    (3, ["a", "b", "c", "d"], 3, [], {"a": 3, "b": 2, "c": 2, "d": 2}),
    # Item 0 held by "a" already: it needs one more, and "a" is not given it twice.
    (2, ["a", "b"], 2, [(0, "a", True)], {"a": 2, "b": 2}),
]


@pytest.mark.parametrize(("items", "annotators", "overlap", "existing", "loads"), BALANCE_CASES)
def test_balanced_assignment(items, annotators, overlap, existing, loads):
    new = balanced_assignment(list(range(items)), annotators, overlap, existing)
    every = [(i, a) for i, a, _ in existing] + new
    assert len(every) == len(set(every)), "an item went twice to one person"
    per_item = Counter(i for i, _ in every)
    assert all(per_item[i] == overlap for i in range(items))
    assert Counter(a for _, a in every) == Counter(loads)
    # Again over the result: nothing is missing, nothing is added.
    assert (
        balanced_assignment(list(range(items)), annotators, overlap, [(i, a, True) for i, a in every]) == []
    )


def test_a_skipped_item_goes_to_someone_else_never_back_to_the_skipper():
    new = balanced_assignment([0], ["a", "b", "c"], 2, [(0, "a", False), (0, "b", True)])
    assert new == [(0, "c")]
    # Nobody left: the item stays one annotator short rather than return to "a".
    assert balanced_assignment([0], ["a", "b"], 2, [(0, "a", False), (0, "b", True)]) == []


# ---- the API, end to end ------------------------------------------------------------------------


@pytest.fixture
def people(member_with_role):
    return {
        "lead": member_with_role("reviewer"),
        "ann": member_with_role("annotator"),
        "bob": member_with_role("annotator"),
        "cy": member_with_role("annotator"),
        "viewer": member_with_role("viewer"),
    }


def _create(client, tiny, annotators, **extra):
    return client.post(
        "/api/annotation-tasks/",
        {
            "benchmark": tiny.name,
            "name": "double-check",
            "guidelines": "Cite every sentence you need.",
            "annotators": [u.username for u in annotators],
            **extra,
        },
        format="json",
    )


def _queue(user, task_id):
    return client_for(user).get(f"/api/annotation-tasks/{task_id}/queue/").json()


def _submit(user, assignment_id, answerability, sentences=(), opened=(), reference=""):
    return client_for(user).post(
        f"/api/assignments/{assignment_id}/annotation/",
        {
            "answerability": answerability,
            "evidence_sentence_ids": [s.pk for s in sentences],
            "opened_document_ids": [d.pk for d in opened],
            "reference_answer": reference,
        },
        format="json",
    )


@pytest.mark.django_db
def test_two_annotators_agreement_and_adjudication_into_gold(tiny, corpus, people):
    lead, ann, bob = people["lead"], people["ann"], people["bob"]
    created = _create(client_for(lead), tiny, [ann, bob], overlap=2)
    assert created.status_code == 201, created.content
    task_id = created.json()["id"]
    assert created.json()["assignment_count"] == 6  # 3 cases x overlap 2

    oman = corpus.documents.get(external_id="oman")
    port = corpus.documents.get(external_id="port")
    answers = {
        # case id -> (ann's, bob's) answers
        "c1": (("answerable", [sentence(oman, "S2")]), ("answerable", [sentence(oman, "S2")])),
        "c2": (("answerable", [sentence(port, "S2")]), ("partial", [sentence(port, "S1")])),
        "c3": (("unanswerable", []), ("unanswerable", [])),
    }
    for who, index in ((ann, 0), (bob, 1)):
        queue = _queue(who, task_id)
        assert queue["progress"] == {"total": 3, "done": 0, "skipped": 0, "pending": 3}
        for item in queue["assignments"]:
            label, chosen = answers[item["case_id"]][index]
            submitted = _submit(who, item["id"], label, chosen, opened=[oman, port] if chosen else [])
            assert submitted.status_code == 201, submitted.content
            assert submitted.json()["status"] == "done"
        assert _queue(who, task_id)["progress"]["done"] == 3

    agreement = client_for(ann).get(f"/api/annotation-tasks/{task_id}/agreement/").json()
    assert "opened or cited" in agreement["candidate_set"]
    (pair,) = agreement["pairs"]
    # Labels ann (ans, ans, un), bob (ans, partial, un): p_o = 2/3; p_e = (2*1 + 0*1 + 1*1) / 9 = 1/3;
    # kappa = (2/3 - 1/3) / (1 - 1/3) = 0.5
    assert pair["answerability_kappa"] == pytest.approx(0.5)
    # Candidate units: c1 and c2 opened both documents (4 + 2 sentences each); c3 opened none.
    assert pair["evidence_units"] == 12
    by_case = {item["case_id"]: item for item in agreement["per_item"]}
    assert by_case["c1"]["disagreement"] is False and by_case["c1"]["evidence_f1"] == 1.0
    assert by_case["c2"]["disagreement"] is True and by_case["c2"]["labels"] == ["answerable", "partial"]
    assert by_case["c3"]["disagreement"] is False

    as_csv = client_for(ann).get(f"/api/annotation-tasks/{task_id}/agreement.csv")
    assert as_csv.status_code == 200 and as_csv["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(as_csv.content.decode())))
    assert [r["level"] for r in rows] == ["task", "pair", "question", "question", "question"]
    assert float(rows[1]["answerability_kappa"]) == pytest.approx(0.5)
    assert all("opened or cited" in r["candidate_set"] for r in rows)

    # Annotators do not adjudicate; the reviewer sees only the disagreement, both answers side by side.
    assert client_for(ann).get(f"/api/annotation-tasks/{task_id}/adjudication/").status_code == 403
    queue = client_for(lead).get(f"/api/annotation-tasks/{task_id}/adjudication/").json()
    assert [q["agreement"]["case_id"] for q in queue] == ["c2"]
    sides = {a["annotator"]: a for a in queue[0]["annotations"]}
    assert sides[ann.username]["evidence"] == ["port#S2"] and sides[bob.username]["evidence"] == ["port#S1"]

    case = GoldCase.objects.get(benchmark=tiny, case_id="c2")
    decided = client_for(lead).post(
        f"/api/annotation-tasks/{task_id}/adjudication/{case.pk}/",
        {
            "answerability": "answerable",
            "evidence_sentence_ids": [sentence(port, "S2").pk],
            "reference_answer": "1,850 staff.",
        },
        format="json",
    )
    assert decided.status_code == 201, decided.content
    case.refresh_from_db()
    assert case.provenance == "adjudicated"
    assert case.gold_evidence == ["port#S2"] and case.answerable
    provenance = case.metadata["annotation"]
    assert provenance["annotators"] == sorted([ann.username, bob.username])
    assert provenance["adjudicator"] == lead.username
    assert provenance["agreement"]["labels_agree"] is False
    assert "opened or cited" in provenance["agreement"]["candidate_set"]
    latest = case.revisions.order_by("-revision").first()
    assert latest.revision == case.revision and "adjudicated in task" in latest.note
    assert lead.username in latest.note and latest.changed_by == lead

    after = client_for(lead).get(f"/api/annotation-tasks/{task_id}/agreement/").json()
    assert {i["case_id"]: i["adjudicated"] for i in after["per_item"]} == {
        "c1": False,
        "c2": True,
        "c3": False,
    }
    detail = client_for(lead).get(f"/api/benchmarks/{tiny.pk}/cases/{case.pk}/").json()
    assert "adjudicated in task" in detail["revisions"][-1]["note"]

    # The questions they agreed on go into gold as "agreed"; a second call writes nothing new.
    assert client_for(ann).post(f"/api/annotation-tasks/{task_id}/agreed/").status_code == 403
    written = client_for(lead).post(f"/api/annotation-tasks/{task_id}/agreed/")
    assert written.status_code == 200 and written.json() == {"written": 2}
    c1, c3 = (
        GoldCase.objects.get(benchmark=tiny, case_id="c1"),
        GoldCase.objects.get(benchmark=tiny, case_id="c3"),
    )
    assert c1.provenance == c3.provenance == "agreed"
    assert c1.gold_evidence == ["oman#S2"] and c1.metadata["annotation"]["accepted_by"] == lead.username
    assert not c3.answerable and c3.gold_evidence == []
    assert client_for(lead).post(f"/api/annotation-tasks/{task_id}/agreed/").json() == {"written": 0}
    case.refresh_from_db()
    assert case.provenance == "adjudicated"  # the adjudicated question is left as decided


@pytest.mark.django_db
def test_assignment_is_balanced_never_twice_and_idempotent(tiny, people):
    lead, annotators = people["lead"], [people["ann"], people["bob"], people["cy"]]
    task_id = _create(client_for(lead), tiny, annotators, overlap=2).json()["id"]
    rows = list(Assignment.objects.filter(task_id=task_id).values_list("gold_case_id", "annotator__username"))
    assert len(rows) == len(set(rows)) == 6
    assert sorted(Counter(name for _, name in rows).values()) == [2, 2, 2]
    from review.models import AnnotationTask

    assert assignments_ensure(task=AnnotationTask.objects.get(pk=task_id)) == 0
    assert Assignment.objects.filter(task_id=task_id).count() == 6


@pytest.mark.django_db
def test_skipping_needs_a_reason_and_hands_the_question_on(tiny, people, corpus):
    lead, ann, bob, cy = people["lead"], people["ann"], people["bob"], people["cy"]
    task_id = _create(client_for(lead), tiny, [ann, bob, cy], overlap=1, case_ids=["c1"]).json()["id"]
    [holder] = [u for u in (ann, bob, cy) if _queue(u, task_id)["assignments"]]
    [item] = _queue(holder, task_id)["assignments"]
    url = f"/api/assignments/{item['id']}/skip/"
    assert client_for(holder).post(url, {"reason": "  "}, format="json").status_code == 400
    skipped = client_for(holder).post(url, {"reason": "I wrote this question."}, format="json")
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    assert skipped.json()["skip_reason"] == "I wrote this question."
    others = [u for u in (ann, bob, cy) if u != holder]
    assert sum(len(_queue(u, task_id)["assignments"]) for u in others) == 1  # handed on to one of them

    # A done item cannot be skipped.
    [taker] = [u for u in others if _queue(u, task_id)["assignments"]]
    [taken] = _queue(taker, task_id)["assignments"]
    oman = corpus.documents.get(external_id="oman")
    assert _submit(taker, taken["id"], "answerable", [sentence(oman, "S2")]).status_code == 201
    refused = client_for(taker).post(f"/api/assignments/{taken['id']}/skip/", {"reason": "x"}, format="json")
    assert refused.status_code == 409


@pytest.mark.django_db
def test_who_may_create_annotate_and_see_what(tiny, people, corpus):
    lead, ann, bob, viewer = people["lead"], people["ann"], people["bob"], people["viewer"]
    # An annotator may not create a task; a viewer may not be named an annotator.
    denied = _create(client_for(ann), tiny, [ann, bob])
    assert denied.status_code == 403 and "reviewer" in denied.json()["detail"]
    refused = _create(client_for(lead), tiny, [ann, viewer])
    assert refused.status_code == 400 and viewer.username in refused.json()["detail"]
    too_many = _create(client_for(lead), tiny, [ann, bob], overlap=3)
    assert too_many.status_code == 400 and "Overlap 3" in too_many.json()["detail"]

    task_id = _create(client_for(lead), tiny, [ann, bob], overlap=1).json()["id"]
    theirs = _queue(ann, task_id)["assignments"][0]
    oman = corpus.documents.get(external_id="oman")
    # Someone else's assignment is not found, not refused.
    assert _submit(bob, theirs["id"], "answerable", [sentence(oman, "S2")]).status_code == 404
    # Evidence must suit the label and come from the benchmark's corpus.
    assert _submit(ann, theirs["id"], "answerable", []).status_code == 400
    assert _submit(ann, theirs["id"], "unanswerable", [sentence(oman, "S2")]).status_code == 400
    # The viewer reads the task but has no queue items.
    assert _queue(viewer, task_id)["progress"]["total"] == 0


@pytest.mark.django_db
def test_adjudicated_gold_round_trips_through_export_and_import(tiny, corpus, people, tmp_path):
    lead, ann, bob = people["lead"], people["ann"], people["bob"]
    task_id = _create(client_for(lead), tiny, [ann, bob], overlap=2, case_ids=["c2"]).json()["id"]
    port = corpus.documents.get(external_id="port")
    for who, label, chosen in ((ann, "answerable", "S2"), (bob, "partial", "S1")):
        [item] = _queue(who, task_id)["assignments"]
        assert _submit(who, item["id"], label, [sentence(port, chosen)], opened=[port]).status_code == 201
    case = GoldCase.objects.get(benchmark=tiny, case_id="c2")
    decided = client_for(lead).post(
        f"/api/annotation-tasks/{task_id}/adjudication/{case.pk}/",
        {
            "answerability": "partial",
            "evidence_sentence_ids": [sentence(port, "S1").pk],
            "reference_answer": "x",
        },
        format="json",
    )
    assert decided.status_code == 201

    out = tmp_path / "tiny.jsonl"
    call_command("export_benchmark", tiny.name, str(out), stdout=io.StringIO())
    call_command(
        "import_benchmark",
        str(out),
        "--name",
        "tiny-again",
        "--format",
        "jsonl",
        "--corpus",
        corpus.name,
        stdout=io.StringIO(),
    )
    again = GoldCase.objects.get(benchmark__name="tiny-again", case_id="c2")
    assert again.gold_evidence == ["port#S1"] and again.evidence_texts["port#S1"] == PORT[0]
    assert again.reference_answer == "x" and again.answerable
    provenance = again.metadata["annotation"]
    assert provenance["adjudicator"] == lead.username
    assert provenance["annotators"] == sorted([ann.username, bob.username])
    assert provenance["answerability"] == "partial"
    assert provenance["agreement"]["labels_agree"] is False


# ---- the review queue split among a team's annotators ----------------------------------------


@pytest.mark.django_db
def test_the_review_queue_is_split_least_confident_first_with_progress(corpus, people, member_with_role):
    lead, ann, bob = people["lead"], people["ann"], people["bob"]
    asker = member_with_role("viewer")
    oman = make_document(corpus, "oman-q", OMAN)
    answers = [
        make_answer(corpus=corpus, user=asker, question=f"Question {i}?", confidence=c, parts=[])
        for i, c in enumerate([0.9, 0.1, 0.5, 0.3, 0.7])
    ]
    assert oman.pk
    denied = client_for(ann).post(
        "/api/review-queue/split/", {"corpus": corpus.name, "reviewers": [ann.username]}, format="json"
    )
    assert denied.status_code == 403
    split = client_for(lead).post(
        "/api/review-queue/split/",
        {"corpus": corpus.name, "reviewers": [ann.username, bob.username], "limit": 4},
        format="json",
    )
    assert split.status_code == 200, split.content
    assert split.json()["assigned"] == 4
    progress = {row["reviewer"]: row for row in split.json()["progress"]}
    assert progress[ann.username]["assigned"] == progress[bob.username]["assigned"] == 2

    # The four least confident went out (0.1, 0.3, 0.5, 0.7), alternating; 0.9 waits.
    queues = {
        who: client_for(who)
        .get(f"/api/review-queue/?assigned_to={who.username}&order=confidence")
        .json()["results"]
        for who in (ann, bob)
    }
    held = {who: [a["confidence"] for a in queue] for who, queue in queues.items()}
    assert sorted(held.values()) == [[0.1, 0.5], [0.3, 0.7]]
    assert all(a["assigned_to"] == who.username for who, queue in queues.items() for a in queue)
    first, second = (ann, bob) if held[ann][0] == 0.1 else (bob, ann)

    # A review counts in the reviewer's progress; splitting again hands out only the one left,
    # to the reviewer with fewer answers waiting.
    reviewed = queues[first][0]["answer"]
    accepted = client_for(first).post(
        f"/api/answers/{reviewed}/reviews/", {"action": "accept", "base_version": 0}, format="json"
    )
    assert accepted.status_code == 201
    again = client_for(lead).post(
        "/api/review-queue/split/",
        {"corpus": corpus.name, "reviewers": [ann.username, bob.username]},
        format="json",
    )
    assert again.json()["assigned"] == 1
    progress = {row["reviewer"]: row for row in again.json()["progress"]}
    assert progress[first.username] == {
        "reviewer": first.username,
        "assigned": 3,
        "reviewed": 1,
        "waiting": 2,
    }
    assert progress[second.username]["waiting"] == 2
    answers[0].refresh_from_db()
    assert answers[0].review_assignment.reviewer == first

    page = _browser_for(first).get("/review/?status=unreviewed&mine=on").content.decode()
    assert "2 answers." in page and f"for {first.username}" in page


def _browser_for(user):
    from django.test import Client

    browser = Client()
    browser.force_login(user)
    return browser


@pytest.mark.django_db
def test_a_skipped_question_does_not_go_to_someone_no_longer_an_annotator(tiny, people):
    from documents.models import Membership

    lead, ann, bob = people["lead"], people["ann"], people["bob"]
    task_id = _create(client_for(lead), tiny, [ann, bob], overlap=1, case_ids=["c1"]).json()["id"]
    holder, other = (ann, bob) if _queue(ann, task_id)["assignments"] else (bob, ann)
    Membership.objects.filter(user=other).update(role="viewer")
    [item] = _queue(holder, task_id)["assignments"]
    skipped = client_for(holder).post(
        f"/api/assignments/{item['id']}/skip/", {"reason": "conflict"}, format="json"
    )
    assert skipped.status_code == 200
    assert _queue(other, task_id)["assignments"] == []  # a viewer now: nothing handed to them
