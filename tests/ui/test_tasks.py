"""Annotation tasks in the browser pages (Django's test client): create, annotate, agreement, adjudicate."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from django.test import Client
from django.utils.html import escape

from review.benchmark_files import ImportPlan
from review.models import Assignment, EvaluationCaseResult, EvaluationRun, GoldCase
from review.services.benchmarks import benchmark_import
from tests.review.conftest import case
from tests.review.helpers import GDP, MUSCAT, OMAN, PORT, STAFF, make_document, sentence
from ui.evaluation import gold_agreement


def _browser(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


@pytest.fixture
def tiny(corpus):
    """tests/review/conftest.py's three cases: Muscat (oman S2), staff (port S2), GDP (unanswerable)."""
    make_document(corpus, "oman", OMAN)
    make_document(corpus, "port", PORT)
    plan = ImportPlan(
        documents=(),
        cases=(
            case("c1", MUSCAT, "oman", ["S2"], [OMAN[1]], reference="The Portuguese, 1507-1650."),
            case("c2", STAFF, "port", ["S2"], [PORT[1]], reference="1,850 staff."),
            case("c3", GDP, "oman", [], [], answerable=False),
        ),
    )
    return benchmark_import(name="tiny", plan=plan, corpus_name=corpus.name, source_format="jsonl").benchmark


@pytest.fixture
def people(member_with_role):
    return {
        "lead": member_with_role("reviewer"),
        "ann": member_with_role("annotator"),
        "bob": member_with_role("annotator"),
    }


def _annotate_all(user, task_pk, corpus, answers):
    """Answer every question of the user's queue through the annotate page, opening documents first."""
    browser = _browser(user)
    page = browser.get(f"/tasks/{task_pk}/").content.decode()
    links = re.findall(r'href="/tasks/assignments/(\d+)/"', page)
    assert links, page
    for assignment_pk in links:
        assignment = Assignment.objects.get(pk=assignment_pk)
        label, document_id, labels = answers[assignment.gold_case.case_id]
        form = browser.get(f"/tasks/assignments/{assignment_pk}/")
        assert form.status_code == 200
        assert escape(assignment.gold_case.question) in form.content.decode()
        opened = []
        if document_id:
            document = corpus.documents.get(external_id=document_id)
            # Opening a document keeps what was chosen and shows its sentences to click.
            shown = browser.post(
                f"/tasks/assignments/{assignment_pk}/",
                {"action": "open", "open_document": document.pk, "answerability": label},
            )
            assert shown.status_code == 200
            for s in document.sentences.all():
                assert escape(s.text) in shown.content.decode()
            opened = [document.pk]
        evidence = [sentence(corpus.documents.get(external_id=document_id), x).pk for x in labels]
        saved = browser.post(
            f"/tasks/assignments/{assignment_pk}/",
            {
                "action": "save",
                "answerability": label,
                "evidence": evidence,
                "opened": opened,
                "reference_answer": "r",
            },
        )
        assert saved.status_code == 302, saved.content.decode()[:2000]


@pytest.mark.django_db
def test_the_whole_loop_in_the_pages(tiny, corpus, people):
    lead, ann, bob = people["lead"], people["ann"], people["bob"]
    created = _browser(lead).post(
        "/tasks/",
        {
            "benchmark": tiny.pk,
            "name": "pages",
            "overlap": 2,
            "annotators": f"{ann.username}, {bob.username}",
            "guidelines": "Cite what you need.",
        },
    )
    assert created.status_code == 302, created.content.decode()[:3000]
    task_pk = int(created["Location"].rstrip("/").split("/")[-1])

    _annotate_all(
        ann,
        task_pk,
        corpus,
        {
            "c1": ("answerable", "oman", ["S2"]),
            "c2": ("answerable", "port", ["S2"]),
            "c3": ("unanswerable", "", []),
        },
    )
    _annotate_all(
        bob,
        task_pk,
        corpus,
        {
            "c1": ("answerable", "oman", ["S2"]),
            "c2": ("partial", "port", ["S1"]),
            "c3": ("unanswerable", "", []),
        },
    )

    page = _browser(ann).get(f"/tasks/{task_pk}/").content.decode()
    assert "3 done, 0 skipped, 0 to do, of 3." in page
    assert "opened or cited" in page
    # Kappa on answerability for the pair: 0.5 (tests/review/test_annotation.py works it out).
    assert re.search(r"<td>\w+, \w+</td><td class=\"num\">3</td><td class=\"num\">0\.500</td>", page), page
    assert "Adjudicate" not in page  # annotators do not adjudicate
    assert _browser(ann).get(f"/tasks/{task_pk}/adjudicate/").status_code == 403

    adjudication = _browser(lead).get(f"/tasks/{task_pk}/adjudicate/").content.decode()
    assert "Who held Muscat" not in adjudication  # c1: they agreed
    assert "port#S1" in adjudication and "port#S2" in adjudication  # c2 side by side
    case = GoldCase.objects.get(benchmark=tiny, case_id="c2")
    port = corpus.documents.get(external_id="port")
    decided = _browser(lead).post(
        f"/tasks/{task_pk}/adjudicate/",
        {
            "case": case.pk,
            "answerability": "answerable",
            "evidence": [sentence(port, "S2").pk],
            "reference_answer": "1,850 staff.",
        },
    )
    assert decided.status_code == 302
    case.refresh_from_db()
    assert case.provenance == "adjudicated" and case.metadata["annotation"]["adjudicator"] == lead.username
    gold_page = _browser(ann).get(f"/benchmarks/{tiny.pk}/cases/{case.pk}/").content.decode()
    assert "adjudicated in task" in gold_page
    assert "adjudicated" in _browser(lead).get(f"/tasks/{task_pk}/").content.decode()


@pytest.mark.django_db
def test_an_annotation_that_contradicts_itself_is_refused_on_the_page(tiny, corpus, people):
    lead, ann = people["lead"], people["ann"]
    _browser(lead).post(
        "/tasks/", {"benchmark": tiny.pk, "name": "one", "overlap": 1, "annotators": ann.username}
    )
    assignment = Assignment.objects.filter(annotator=ann).first()
    refused = _browser(ann).post(
        f"/tasks/assignments/{assignment.pk}/", {"action": "save", "answerability": "answerable"}
    )
    assert refused.status_code == 400
    assert "needs at least one evidence sentence" in refused.content.decode()
    skipped = _browser(ann).post(
        f"/tasks/assignments/{assignment.pk}/", {"action": "skip", "skip_reason": ""}
    )
    assert skipped.status_code == 400 and "Say why" in skipped.content.decode()


@pytest.mark.django_db
def test_only_reviewers_see_the_create_form(tiny, people, member_with_role):
    assert 'id="task-form"' in _browser(people["lead"]).get("/tasks/").content.decode()
    assert 'id="task-form"' not in _browser(people["ann"]).get("/tasks/").content.decode()


# ---- the evaluation run shows the agreement on its gold ---------------------------------------


def _result(provenance, revision, scored_revision, annotation=None):
    gold = SimpleNamespace(
        provenance=provenance, revision=revision, metadata={"annotation": annotation} if annotation else {}
    )
    return SimpleNamespace(gold_case=gold, gold_revision=scored_revision)


ADJUDICATED = {
    "annotators": ["ann", "bob"],
    "agreement": {"labels_agree": False, "evidence_f1": 0.0, "candidate_set": "opened or cited"},
}


def test_gold_agreement_counts_task_gold_at_the_revision_the_run_scored():
    results = [
        _result("adjudicated", 3, 3, ADJUDICATED),
        _result("agreed", 3, 3, {"agreement": {"labels_agree": True, "evidence_f1": 0.4}}),
        _result("adjudicated", 4, 2, ADJUDICATED),  # the run scored a revision before the adjudication
        _result("imported", 1, 1),
    ]
    summary = gold_agreement(results)
    assert (summary["cases"], summary["annotated"], summary["adjudicated"], summary["agreed"]) == (4, 2, 1, 1)
    assert summary["labels_agree"] == 0.5
    assert summary["evidence_f1"] == pytest.approx(0.2)
    assert gold_agreement([_result("imported", 1, 1)]) == {"cases": 1, "annotated": 0}


@pytest.mark.django_db
def test_the_run_page_states_the_gold_agreement(tiny, people):
    case = GoldCase.objects.get(benchmark=tiny, case_id="c2")
    case.provenance = "adjudicated"
    case.metadata = {"annotation": ADJUDICATED}
    case.save()
    run = EvaluationRun.objects.create(
        benchmark=tiny, benchmark_version=tiny.version, preset="default", status="done", metrics={}
    )
    for gold in GoldCase.objects.filter(benchmark=tiny):
        EvaluationCaseResult.objects.create(run=run, gold_case=gold, gold_revision=gold.revision, metrics={})
    page = _browser(people["ann"]).get(f"/evaluate/runs/{run.pk}/").content.decode()
    assert "Gold agreement: 1 of 3 cases' gold comes from an annotation task (0 agreed, 1 adjudicated" in page
    assert "labels agreed on 0.0% of them and their mean evidence F1 was 0.00" in page


@pytest.mark.django_db
def test_evidence_found_by_searching_the_corpus(tiny, corpus, people):
    from documents import lexical

    # The helper's documents have no lexical postings yet: index them as an upgrade would.
    corpus.documents.update(content_hash="indexed")
    assert lexical.index_existing_documents() == 2
    lead, ann = people["lead"], people["ann"]
    _browser(lead).post(
        "/tasks/",
        {"benchmark": tiny.pk, "name": "s", "overlap": 1, "annotators": ann.username, "case_ids": "c1"},
    )
    assignment = Assignment.objects.get(annotator=ann)
    url = f"/tasks/assignments/{assignment.pk}/"
    found = _browser(ann).post(
        url, {"action": "search", "query": "Portuguese Muscat", "answerability": "answerable"}
    )
    page = found.content.decode()
    assert found.status_code == 200 and "oman#S2" in page and escape(OMAN[1]) in page
    assert 'value="answerable" data-key="1" checked' in page  # what was chosen is kept

    oman = corpus.documents.get(external_id="oman")
    opened = _browser(ann).post(url, {"open_result": oman.pk, "query": "Portuguese Muscat"})
    assert opened.status_code == 200
    assert f'name="opened" value="{oman.pk}"' in opened.content.decode()

    # Evidence ticked in the results, its document never opened: it still counts, and is cited.
    saved = _browser(ann).post(
        url, {"action": "save", "answerability": "answerable", "evidence": [sentence(oman, "S2").pk]}
    )
    assert saved.status_code == 302
    assignment.refresh_from_db()
    assert assignment.annotation.evidence == ["oman#S2"]


# ---- time per item ------------------------------------------------------------------------------


class Clock:
    """The server's clock, moved by the test: timing is asserted exactly, with no sleep."""

    def __init__(self):
        from datetime import UTC, datetime

        self.now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def __call__(self):
        return self.now

    def advance(self, seconds: float):
        from datetime import timedelta

        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    from django.utils import timezone

    fake = Clock()
    monkeypatch.setattr(timezone, "now", fake)
    return fake


def _answer_on_page(browser, assignment, clock, seconds, *, label="unanswerable"):
    """Open the item's page, spend ``seconds`` on it, save: what the server times."""
    assert browser.get(f"/tasks/assignments/{assignment.pk}/").status_code == 200
    clock.advance(seconds)
    saved = browser.post(f"/tasks/assignments/{assignment.pk}/", {"action": "save", "answerability": label})
    assert saved.status_code == 302, saved.content.decode()[:2000]


@pytest.mark.django_db
def test_the_time_per_item_runs_from_opening_to_the_first_save(tiny, people, clock):
    from tests.review.helpers import client_for

    lead, ann, bob = people["lead"], people["ann"], people["bob"]
    _browser(lead).post(
        "/tasks/",
        {"benchmark": tiny.pk, "name": "timed", "overlap": 2, "annotators": f"{ann.username} {bob.username}"},
    )
    task = Assignment.objects.get(annotator=ann, gold_case__case_id="c1").task
    mine = {a.gold_case.case_id: a for a in Assignment.objects.filter(annotator=ann)}
    theirs = {a.gold_case.case_id: a for a in Assignment.objects.filter(annotator=bob)}
    ann_browser, bob_browser = _browser(ann), _browser(bob)
    _answer_on_page(ann_browser, mine["c1"], clock, 30)
    _answer_on_page(ann_browser, mine["c2"], clock, 50)
    # Reopening the page and saving again changes neither time: the item took ann 70 s.
    ann_browser.get(f"/tasks/assignments/{mine['c3'].pk}/")
    clock.advance(70)
    _answer_on_page(ann_browser, mine["c3"], clock, 0)
    _answer_on_page(ann_browser, mine["c3"], clock, 500)
    _answer_on_page(bob_browser, theirs["c1"], clock, 10)
    # Answered through the API without opening the page: done, but not timed.
    sent = client_for(bob).post(
        f"/api/assignments/{theirs['c2'].pk}/annotation/", {"answerability": "unanswerable"}, format="json"
    )
    assert sent.status_code == 201, sent.content

    page = _browser(lead).get(f"/tasks/{task.pk}/").content.decode()
    # Timed: ann 30, 50, 70; bob 10. Median of the four: (30 + 50) / 2.
    assert "Median 40 s per item, over 4 timed items." in page
    assert re.search(rf'<td>{ann.username}</td><td class="num">3</td><td class="num">50</td>', page)
    assert re.search(rf'<td>{bob.username}</td><td class="num">1</td><td class="num">10</td>', page)

    body = client_for(lead).get(f"/api/annotation-tasks/{task.pk}/").json()
    assert (body["median_seconds_per_item"], body["timed_items"], body["done_count"]) == (40.0, 4, 5)
    queue = client_for(ann).get(f"/api/annotation-tasks/{task.pk}/queue/").json()
    assert {a["case_id"]: a["seconds_spent"] for a in queue["assignments"]} == {"c1": 30, "c2": 50, "c3": 70}
    bobs = client_for(bob).get(f"/api/annotation-tasks/{task.pk}/queue/").json()
    assert {a["case_id"]: a["seconds_spent"] for a in bobs["assignments"]} == {
        "c1": 10,
        "c2": None,
        "c3": None,
    }


@pytest.mark.django_db
def test_a_task_with_nothing_timed_says_so(tiny, people):
    from tests.review.helpers import client_for

    lead, ann = people["lead"], people["ann"]
    _browser(lead).post(
        "/tasks/", {"benchmark": tiny.pk, "name": "t", "overlap": 1, "annotators": ann.username}
    )
    task = Assignment.objects.filter(annotator=ann).first().task
    assert "No item is timed yet." in _browser(lead).get(f"/tasks/{task.pk}/").content.decode()
    assert client_for(lead).get(f"/api/annotation-tasks/{task.pk}/").json()["median_seconds_per_item"] is None


# ---- pre-filled with GroundedQA's answer --------------------------------------------------------


@pytest.mark.django_db
def test_an_item_prefilled_with_the_pipelines_answer_records_it_and_reports_agreement_apart(
    tiny, corpus, people
):
    from tests.review.helpers import STAFF, client_for, make_answer

    lead, ann = people["lead"], people["ann"]
    port = corpus.documents.get(external_id="port")
    wrong = sentence(port, "S1")
    # GroundedQA answered c2 in an evaluation run, citing the wrong sentence; c1 it never answered.
    answer = make_answer(
        corpus=corpus, user=lead, question=STAFF, parts=[("It employed 4.2 million.", [wrong])]
    )
    c2 = GoldCase.objects.get(benchmark=tiny, case_id="c2")
    run = EvaluationRun.objects.create(
        benchmark=tiny, benchmark_version=tiny.version, preset="default", status="done", metrics={}
    )
    EvaluationCaseResult.objects.create(run=run, gold_case=c2, gold_revision=c2.revision, answer=answer)
    created = _browser(lead).post(
        "/tasks/",
        {
            "benchmark": tiny.pk,
            "name": "suggested",
            "overlap": 1,
            "annotators": ann.username,
            "case_ids": "c1 c2",
            "prefill": "on",
        },
    )
    assert created.status_code == 302, created.content.decode()[:3000]
    mine = {a.gold_case.case_id: a for a in Assignment.objects.filter(annotator=ann)}
    browser = _browser(ann)

    page = browser.get(f"/tasks/assignments/{mine['c2'].pk}/").content.decode()
    assert "GroundedQA's suggestion" in page and f"evaluation run {run.pk}" in page
    assert page.count("suggested by GroundedQA") == 1
    assert f'name="evidence" value="{wrong.pk}" checked' in page  # its citation, pre-selected
    assert 'value="answerable" data-key="1" checked' in page
    assert "It employed 4.2 million." in page  # its text as the reference answer
    assert 'name="prefilled" value="1"' in page

    # The annotator corrects the label and the evidence.
    saved = browser.post(
        f"/tasks/assignments/{mine['c2'].pk}/",
        {
            "action": "save",
            "answerability": "partial",
            "evidence": [sentence(port, "S2").pk],
            "opened": [port.pk],
            "prefilled": "1",
        },
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    stored = mine["c2"].__class__.objects.get(pk=mine["c2"].pk).annotation
    assert stored.prefilled is True and stored.evidence == ["port#S2"]
    assert stored.suggestion == {"answer": answer.pk, "answerability": "answerable", "evidence": ["port#S1"]}

    # Nothing to suggest for c1: the page says so, and the answer is not marked as pre-filled.
    page = browser.get(f"/tasks/assignments/{mine['c1'].pk}/").content.decode()
    assert "GroundedQA has no answer to this question yet" in page
    assert 'name="prefilled"' not in page
    browser.post(f"/tasks/assignments/{mine['c1'].pk}/", {"action": "save", "answerability": "unanswerable"})
    assert Assignment.objects.get(pk=mine["c1"].pk).annotation.prefilled is False

    task_pk = mine["c1"].task_id
    figures = client_for(ann).get(f"/api/annotation-tasks/{task_pk}/agreement/").json()["with_suggestion"]
    assert figures == {"annotations": 1, "labels_kept": 0.0, "evidence_f1": 0.0, "unchanged": 0}
    task_page = browser.get(f"/tasks/{task_pk}/").content.decode()
    assert "1 annotation started from it: 0.0% kept its label, 0 kept it unchanged" in task_page
    assert client_for(ann).get(f"/api/annotation-tasks/{task_pk}/").json()["prefill"] is True


@pytest.mark.django_db
def test_prefilled_is_refused_where_the_task_suggests_nothing(tiny, people):
    from tests.review.helpers import client_for

    lead, ann = people["lead"], people["ann"]
    _browser(lead).post(
        "/tasks/", {"benchmark": tiny.pk, "name": "plain", "overlap": 1, "annotators": ann.username}
    )
    assignment = Assignment.objects.filter(annotator=ann).first()
    page = _browser(ann).get(f"/tasks/assignments/{assignment.pk}/").content.decode()
    assert "suggestion-note" not in page and "suggested by GroundedQA" not in page
    sent = client_for(ann).post(
        f"/api/assignments/{assignment.pk}/annotation/",
        {"answerability": "unanswerable", "prefilled": True},
        format="json",
    )
    assert sent.status_code == 400 and "does not pre-fill" in sent.content.decode()
