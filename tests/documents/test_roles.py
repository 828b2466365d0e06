"""Team roles: every API endpoint and page that changes data, for every role (role x endpoint -> status).

Each row names the least role that may do it and the status that role gets; every lower role gets
403 (it may see the object, not change it), a non-member 404 (the object is not disclosed), and the
staff flag without a team role grants nothing here (only the audit and operations pages).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from documents.models import ROLE_ORDER, Corpus, Document, Membership
from qa.models import TeamPreset
from qa.services import team_preset_create
from review.models import Adjudication, AnnotationTask, Assignment, Benchmark, EvaluationRun, GoldCase, Review
from review.services.annotation import annotation_submit, annotation_task_create
from review.services.benchmarks import benchmark_create
from review.services.gold import gold_case_annotate
from review.services.reviews import answer_accept
from tests.factories import UserFactory
from tests.review.helpers import OMAN, client_for, make_answer, make_document, sentence


@dataclass
class World:
    corpus: Corpus
    document: Document
    answer: object
    benchmark: Benchmark
    preset: TeamPreset
    task: AnnotationTask
    annotators: tuple


@pytest.fixture
def world(team, corpus, member_with_role):
    owner = member_with_role("admin")
    document = make_document(corpus, "oman", OMAN)
    answer = make_answer(
        corpus=corpus, user=owner, parts=[("The Portuguese held Muscat.", [sentence(document, "S2")])]
    )
    # Accepted, so it may become gold; the benchmark has a case, so it may be evaluated.
    answer_accept(answer=answer, reviewer=owner, base_version=0)
    benchmark = benchmark_create(name="roles-bench", corpus=corpus, user=owner)
    case = gold_case_annotate(
        benchmark=benchmark,
        document=document,
        question="When did Sultan Qaboos come to power?",
        evidence_sentence_ids=[sentence(document, "S3").pk],
        reference_answer="In 1970.",
        answerable=True,
        split="dev",
        user=owner,
    )
    preset = team_preset_create(user=owner, team=team, name="team-wide", base="default", parameters={})
    # Two annotators who disagree on the one case: something to adjudicate.
    annotators = (member_with_role("annotator"), member_with_role("annotator"))
    task = annotation_task_create(benchmark=benchmark, name="t", annotators=annotators, overlap=2, user=owner)
    for assignment, label, evidence in zip(
        Assignment.objects.filter(task=task).order_by("annotator__username"),
        ("answerable", "unanswerable"),
        ([sentence(document, "S3").pk], []),
        strict=True,
    ):
        annotation_submit(assignment=assignment, answerability=label, evidence_sentence_ids=evidence)
    assert case.pk
    return World(corpus, document, answer, benchmark, preset, task, annotators)


def _api(user):
    return client_for(user)


def _browser(user):
    browser = Client()
    browser.force_login(user)
    return browser


# name -> (least role, status that role gets, the request, what the change left behind)
ENDPOINTS = {
    "api: create a corpus": (
        "admin",
        201,
        lambda u, w: _api(u).post(
            "/api/corpora/", {"name": "new-c", "team": w.corpus.team.name}, format="json"
        ),
        lambda w: Corpus.objects.filter(name="new-c").exists(),
    ),
    "api: delete a corpus": (
        "admin",
        204,
        lambda u, w: _api(u).delete(f"/api/corpora/{w.corpus.pk}/"),
        lambda w: not Corpus.objects.filter(pk=w.corpus.pk).exists(),
    ),
    "api: upload a file": (
        "admin",
        202,
        lambda u, w: _api(u).post(
            f"/api/corpora/{w.corpus.pk}/documents/",
            {"files": [SimpleUploadedFile("note.txt", b"A new note. It has two sentences.")]},
            format="multipart",
        ),
        lambda w: Document.objects.filter(corpus=w.corpus, external_id="note").exists(),
    ),
    "api: re-embed a corpus (no model named: 400 once allowed)": (
        "admin",
        400,
        lambda u, w: _api(u).post(f"/api/corpora/{w.corpus.pk}/embedding/", {}, format="json"),
        None,
    ),
    "api: delete a document": (
        "admin",
        204,
        lambda u, w: _api(u).delete(f"/api/documents/{w.document.pk}/"),
        lambda w: not Document.objects.filter(pk=w.document.pk).exists(),
    ),
    "api: save a team preset": (
        "admin",
        201,
        lambda u, w: _api(u).post(
            "/api/team-presets/",
            {"team": w.corpus.team.name, "name": "mine", "base": "default", "parameters": {}},
            format="json",
        ),
        lambda w: TeamPreset.objects.filter(name="mine").exists(),
    ),
    "api: delete a team preset": (
        "admin",
        204,
        lambda u, w: _api(u).delete(f"/api/team-presets/{w.preset.pk}/"),
        lambda w: not TeamPreset.objects.filter(pk=w.preset.pk).exists(),
    ),
    "api: ask a question": (
        "viewer",
        202,
        lambda u, w: _api(u).post(
            "/api/questions/", {"corpus": w.corpus.name, "question": "Who held Muscat?"}, format="json"
        ),
        None,
    ),
    "api: review an answer": (
        "annotator",
        201,
        lambda u, w: _api(u).post(
            f"/api/answers/{w.answer.pk}/reviews/", {"action": "accept", "base_version": 1}, format="json"
        ),
        lambda w: Review.objects.filter(answer=w.answer).count() == 2,
    ),
    "api: start an evaluation run": (
        "annotator",
        202,
        lambda u, w: _api(u).post(
            "/api/evaluations/", {"benchmark": w.benchmark.pk, "preset": "default"}, format="json"
        ),
        lambda w: EvaluationRun.objects.filter(benchmark=w.benchmark).exists(),
    ),
    "api: make an answer gold": (
        "reviewer",
        201,
        lambda u, w: _api(u).post(
            f"/api/answers/{w.answer.pk}/gold/",
            {"benchmark": w.benchmark.name, "split": "dev"},
            format="json",
        ),
        lambda w: GoldCase.objects.filter(benchmark=w.benchmark).count() == 2,
    ),
    "api: create a benchmark": (
        "reviewer",
        201,
        lambda u, w: _api(u).post(
            "/api/benchmarks/", {"name": "another", "corpus_id": w.corpus.pk}, format="json"
        ),
        lambda w: Benchmark.objects.filter(name="another").exists(),
    ),
    "api: annotate a gold case": (
        "reviewer",
        201,
        lambda u, w: _api(u).post(
            f"/api/benchmarks/{w.benchmark.pk}/cases/",
            {
                "document": w.document.pk,
                "question": "Who held Muscat?",
                "evidence_sentence_ids": [sentence(w.document, "S2").pk],
                "split": "dev",
            },
            format="json",
        ),
        lambda w: GoldCase.objects.filter(benchmark=w.benchmark).count() == 2,
    ),
    "api: create an annotation task": (
        "reviewer",
        201,
        lambda u, w: _api(u).post(
            "/api/annotation-tasks/",
            {"benchmark": w.benchmark.name, "name": "more", "annotators": [a.username for a in w.annotators]},
            format="json",
        ),
        lambda w: AnnotationTask.objects.filter(name="more").exists(),
    ),
    "api: list disagreements to adjudicate": (
        "reviewer",
        200,
        lambda u, w: _api(u).get(f"/api/annotation-tasks/{w.task.pk}/adjudication/"),
        None,
    ),
    "api: adjudicate a question": (
        "reviewer",
        201,
        lambda u, w: _api(u).post(
            f"/api/annotation-tasks/{w.task.pk}/adjudication/{w.task.cases.get().pk}/",
            {"answerability": "unanswerable"},
            format="json",
        ),
        lambda w: Adjudication.objects.filter(task=w.task).exists(),
    ),
    "api: split the review queue": (
        "reviewer",
        200,
        lambda u, w: _api(u).post(
            "/api/review-queue/split/",
            {"corpus": w.corpus.name, "reviewers": [a.username for a in w.annotators]},
            format="json",
        ),
        None,
    ),
    "page: create a task over the questions analysts asked": (
        "reviewer",
        302,
        lambda u, w: _browser(u).post(
            "/tasks/from-questions/",
            {
                "corpus": w.corpus.pk,
                "questions": "reviewed",
                "benchmark": "asked-roles",
                "name": "asked",
                "overlap": 1,
                "annotators": " ".join(a.username for a in w.annotators),
            },
        ),
        lambda w: AnnotationTask.objects.filter(name="asked", benchmark__name="asked-roles").exists(),
    ),
    "page: split the review queue": (
        "reviewer",
        302,
        lambda u, w: _browser(u).post(
            "/review/split/",
            {"corpus": w.corpus.pk, "reviewers": " ".join(a.username for a in w.annotators)},
        ),
        None,
    ),
    "page: create a corpus": (
        "admin",
        302,
        lambda u, w: _browser(u).post("/corpora/", {"name": "page-c", "team": w.corpus.team.pk}),
        lambda w: Corpus.objects.filter(name="page-c").exists(),
    ),
    "page: delete a corpus": (
        "admin",
        302,
        lambda u, w: _browser(u).post(f"/corpora/{w.corpus.pk}/delete/"),
        lambda w: not Corpus.objects.filter(pk=w.corpus.pk).exists(),
    ),
    "page: delete a document": (
        "admin",
        302,
        lambda u, w: _browser(u).post(f"/documents/{w.document.pk}/delete/"),
        lambda w: not Document.objects.filter(pk=w.document.pk).exists(),
    ),
    "page: re-embed a corpus": (
        "admin",
        302,
        lambda u, w: _browser(u).post(f"/corpora/{w.corpus.pk}/reembed/", {"model": ""}),
        None,
    ),
    "page: save a team preset": (
        "admin",
        302,
        lambda u, w: _browser(u).post(
            "/presets/", {"team": w.corpus.team.pk, "name": "paged", "base": "default"}
        ),
        lambda w: TeamPreset.objects.filter(name="paged").exists(),
    ),
    "page: delete a team preset": (
        "admin",
        302,
        lambda u, w: _browser(u).post(f"/presets/{w.preset.pk}/delete/"),
        lambda w: not TeamPreset.objects.filter(pk=w.preset.pk).exists(),
    ),
    "page: review an answer": (
        "annotator",
        302,
        lambda u, w: _browser(u).post(
            f"/review/answers/{w.answer.pk}/", {"action": "accept", "base_version": 1}
        ),
        lambda w: Review.objects.filter(answer=w.answer).count() == 2,
    ),
    "page: add an answer to a benchmark": (
        "reviewer",
        302,
        lambda u, w: _browser(u).post(
            f"/review/answers/{w.answer.pk}/",
            {"action": "gold", "benchmark": w.benchmark.name, "split": "dev"},
        ),
        lambda w: GoldCase.objects.filter(benchmark=w.benchmark).count() == 2,
    ),
    "page: annotate a gold case": (
        "reviewer",
        302,
        lambda u, w: _browser(u).post(
            f"/annotate/?document={w.document.pk}",
            {
                "question": "Who held Muscat?",
                "reference_answer": "The Portuguese.",
                "evidence": [sentence(w.document, "S2").pk],
                "benchmark": w.benchmark.name,
                "split": "dev",
            },
        ),
        lambda w: GoldCase.objects.filter(benchmark=w.benchmark).count() == 2,
    ),
    "page: start an evaluation run": (
        "annotator",
        302,
        lambda u, w: _browser(u).post(
            "/evaluate/", {"benchmark": w.benchmark.pk, "preset": "default", "split": ""}
        ),
        lambda w: EvaluationRun.objects.filter(benchmark=w.benchmark).exists(),
    ),
}

# Who calls: each role, a staff user who is only a viewer, and a non-member.
CALLERS = [*ROLE_ORDER, "staff viewer", "outsider"]


def _expected(least: str, allowed_status: int, caller: str) -> int:
    if caller == "outsider":
        return 404
    role = "viewer" if caller == "staff viewer" else caller
    return allowed_status if ROLE_ORDER.index(role) >= ROLE_ORDER.index(least) else 403


def _caller(caller: str, member_with_role):
    if caller == "outsider":
        return UserFactory()
    if caller == "staff viewer":
        return member_with_role("viewer", is_staff=True)
    return member_with_role(caller)


@pytest.mark.django_db
@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_each_role_gets_what_it_should_and_nothing_more(endpoint, caller, world, member_with_role):
    least, allowed_status, request, changed = ENDPOINTS[endpoint]
    user = _caller(caller, member_with_role)
    expected = _expected(least, allowed_status, caller)
    if endpoint == "page: create a corpus" and caller == "outsider":
        expected = 403  # the page names no object of the team; a non-admin may not post the form at all
    if endpoint == "page: save a team preset" and caller == "outsider":
        expected = 403
    if endpoint == "api: save a team preset" and caller == "outsider":
        expected = 404  # the team is named in the body and not disclosed
    if endpoint == "page: start an evaluation run" and caller == "outsider":
        expected = 200  # the form comes back refusing a benchmark it does not offer them
    response = request(user, world)
    assert response.status_code == expected, (endpoint, caller, response.content[:300])
    if changed is not None:
        assert changed(world) is (expected == allowed_status), (endpoint, caller)
    if response.status_code == 403 and endpoint.startswith("api:"):
        assert "role" in response.json()["detail"]


@pytest.mark.django_db
def test_site_operations_are_for_staff_whatever_their_team_role(member_with_role):
    admin = member_with_role("admin")
    staff_viewer = member_with_role("viewer", is_staff=True)
    for url in ("/audit/", "/operations/"):
        assert _browser(admin).get(url).status_code == 403, url
        assert _browser(staff_viewer).get(url).status_code == 200, url


@pytest.mark.django_db
def test_a_superuser_is_every_teams_admin(world):
    root = UserFactory(is_superuser=True)
    assert _api(root).delete(f"/api/documents/{world.document.pk}/").status_code == 204


@pytest.mark.django_db
def test_a_member_added_without_a_role_is_an_annotator(team):
    user = UserFactory()
    team.members.add(user)
    assert Membership.objects.get(team=team, user=user).role == "annotator"


@pytest.mark.django_db
def test_the_corpus_page_shows_upload_and_delete_to_admins_only(world, member_with_role):
    admin_page = _browser(member_with_role("admin")).get(f"/corpora/{world.corpus.pk}/").content.decode()
    reviewer_page = (
        _browser(member_with_role("reviewer")).get(f"/corpora/{world.corpus.pk}/").content.decode()
    )
    assert "Delete corpus" in admin_page
    assert "Delete corpus" not in reviewer_page
