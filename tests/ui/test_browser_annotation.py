"""The whole annotation loop in headless Chromium, against the live server and the real database.

An admin creates a task with overlap 2 over five questions; two annotators, each in their own
browser session, annotate every question by opening documents and clicking evidence sentences;
a reviewer sees the agreement, adjudicates the one disagreement and writes the agreed questions
into gold; an evaluation run's page then states how far the annotators agreed on that gold.

Set GROUNDEDQA_SCREENSHOTS=DIR to also save a screenshot of each step.
"""

from __future__ import annotations

import re

import pytest

from bench.browser import CHROMIUM_ARGS, annotate_item
from review.benchmark_files import ImportPlan
from review.models import Assignment, GoldCase
from review.services.benchmarks import benchmark_import
from tests.review.conftest import case
from tests.review.helpers import GDP, MUSCAT, OMAN, PORT, STAFF, ScriptedAnswers, make_document
from tests.ui.conftest import PASSWORD
from tests.ui.test_browser import expect, snap

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QABOOS = "When did Sultan Qaboos come to power?"
CONTAINERS = "How many containers did the port handle in 2024?"

# question -> (label, document to open, sentence texts to click), per annotator. They differ on STAFF only.
ANN = {
    MUSCAT: ("Answerable", "oman", [OMAN[1]]),
    STAFF: ("Answerable", "port", [PORT[1]]),
    GDP: ("Unanswerable", "", []),
    QABOOS: ("Answerable", "oman", [OMAN[2]]),
    CONTAINERS: ("Answerable", "port", [PORT[0]]),
}
BOB = {**ANN, STAFF: ("Partial", "port", [PORT[0]])}

# What the evaluated system answers (tests/review/helpers.ScriptedAnswers' format).
SYSTEM = {
    MUSCAT: (["oman"], [("The Portuguese held Muscat.", [("oman", "S2")])], False),
    STAFF: (["port"], [("It employed 1,850 staff.", [("port", "S2")])], False),
    GDP: (["oman"], [], True),
    QABOOS: (["oman"], [("In 1970.", [("oman", "S3")])], False),
    CONTAINERS: (["port"], [("4.2 million.", [("port", "S1")])], False),
}


@pytest.fixture
def five(corpus):
    make_document(corpus, "oman", OMAN)
    make_document(corpus, "port", PORT)
    plan = ImportPlan(
        documents=(),
        cases=(
            case("c1", MUSCAT, "oman", ["S2"], [OMAN[1]], reference="The Portuguese."),
            case("c2", STAFF, "port", ["S2"], [PORT[1]], reference="1,850 staff."),
            case("c3", GDP, "oman", [], [], answerable=False),
            case("c4", QABOOS, "oman", ["S3"], [OMAN[2]], reference="In 1970."),
            case("c5", CONTAINERS, "port", ["S1"], [PORT[0]], reference="4.2 million."),
        ),
    )
    return benchmark_import(name="five", plan=plan, corpus_name=corpus.name, source_format="jsonl").benchmark


@pytest.fixture
def chromium(chromium_path, monkeypatch):
    """One browser; each user signs in in a context of their own, so their sessions never mix."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def session_of(chromium, live_server, user):
    context = chromium.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.goto(f"{live_server.url}/login/?next=/tasks/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/tasks/")
    return page


def annotate_queue(page, answers: dict, who: str) -> None:
    """Answer every question of the task's queue on the annotate page, the way an annotator would."""
    page.locator("a[href*='/tasks/assignments/']").first.click()
    for step in range(len(answers)):
        page.wait_for_url(re.compile(r"/tasks/assignments/\d+/$"))
        snap(page, f"annotate-{who}-{step}")
        label, document, sentences = answers[page.locator("h1").inner_text()]
        annotate_item(page, label, document, sentences, f"{who}'s answer")
    page.wait_for_url(re.compile(r"/tasks/\d+/$"))
    expect()(page.locator("#queue-progress")).to_have_text("5 done, 0 skipped, 0 to do, of 5.")


def test_two_annotators_a_reviewer_and_the_gold_an_evaluation_scores(
    chromium, live_server, five, member_with_role
):
    admin = member_with_role("admin", username="ada")
    lead = member_with_role("reviewer", username="lead")
    ann = member_with_role("annotator", username="ann")
    bob = member_with_role("annotator", username="bob")

    # The admin creates the task.
    page = session_of(chromium, live_server, admin)
    form = page.locator("#task-form")
    form.get_by_label("Benchmark").select_option(label="five v1")
    form.get_by_label("Name").fill("five questions")
    form.get_by_label("Overlap").fill("2")
    form.get_by_label("Annotators").fill("ann, bob")
    form.get_by_label("Guidelines").fill("Cite every sentence the answer needs.")
    form.get_by_role("button", name="Create and assign").click()
    expect()(page.locator(".messages")).to_contain_text("Task five questions created and assigned.")
    expect()(page.locator(".lead")).to_contain_text("2 annotators per question · 0 of 10 assignments done")
    expect()(page.get_by_text("No question of this task is assigned to you.")).to_be_visible()
    task_url = page.url
    snap(page, "task-created")

    # Each annotator, in their own session, finds the task and works through their queue.
    for user, answers in [(ann, ANN), (bob, BOB)]:
        mine = session_of(chromium, live_server, user)
        mine.get_by_role("link", name="five questions").click()
        expect()(mine.locator("#queue-progress")).to_have_text("0 done, 0 skipped, 5 to do, of 5.")
        expect()(mine.get_by_text("Cite every sentence the answer needs.")).to_be_visible()
        annotate_queue(mine, answers, user.username)
        mine.context.close()
    assert Assignment.objects.filter(status="done").count() == 10

    # The reviewer sees the agreement: one pair over five questions, one disagreement.
    review = session_of(chromium, live_server, lead)
    review.goto(task_url)
    pair = review.locator("#agreement-pairs tbody tr")
    expect()(pair).to_have_count(1)
    expect()(pair.locator("td").nth(0)).to_have_text("ann, bob")
    expect()(pair.locator("td").nth(1)).to_have_text("5")
    disagreeing = review.locator("#agreement-items tbody tr", has=review.locator("td", has_text="c2"))
    expect()(disagreeing).to_contain_text("disagree")
    expect()(review.locator("#agreement-items .badge", has_text="disagree")).to_have_count(1)
    snap(review, "task-agreement")

    review.get_by_role("link", name="Adjudicate (1 open)").click()
    items = review.locator("section.card")
    expect()(items).to_have_count(1)
    item = items.first
    expect()(item.locator("h2")).to_have_text(f"c2: {STAFF}")
    side_by_side = item.locator("table tbody tr")
    expect()(side_by_side).to_have_count(2)
    rows = {
        r.locator("td").nth(0).inner_text(): r.locator("td").nth(1).inner_text() for r in side_by_side.all()
    }
    assert rows == {"ann": "answerable", "bob": "partial"}
    item.get_by_label("Answerable", exact=True).check()
    item.locator("label", has_text="port#S2").locator("input[type=checkbox]").check()
    item.get_by_label("Reference answer").fill("1,850 staff.")
    item.get_by_role("button", name="Write the gold case").click()
    expect()(review.locator(".messages")).to_contain_text("Gold case c2 now holds your decision.")
    expect()(review.locator("section.card .badge", has_text="decided by lead")).to_be_visible()
    snap(review, "adjudicated")

    review.goto(task_url)
    review.get_by_role("button", name="Write the agreed questions into gold").click()
    expect()(review.locator(".messages")).to_contain_text("Wrote 4 agreed questions into gold.")
    expect()(review.locator("#agreement-items .badge", has_text="agreed, in gold")).to_have_count(4)
    expect()(review.locator("#agreement-items .badge", has_text="adjudicated")).to_have_count(1)

    # The gold case carries its provenance, shown in its revision history.
    c2 = GoldCase.objects.get(benchmark=five, case_id="c2")
    assert c2.provenance == "adjudicated" and c2.gold_evidence == ["port#S2"]
    review.goto(f"{live_server.url}/benchmarks/{five.pk}/cases/{c2.pk}/")
    expect()(review.locator("body")).to_contain_text("adjudicated in task")
    expect()(review.locator("body")).to_contain_text("annotators ann, bob")

    # An evaluation on the benchmark (run here, as a worker would) states the gold's agreement.
    from review.services.evaluation import evaluation_run_create, evaluation_run_execute

    run = evaluation_run_create(benchmark=five, preset="default", user=lead, config={}, enqueue=False)
    evaluation_run_execute(run_id=run.pk, answer_fn=ScriptedAnswers(SYSTEM, lead), judge=None)
    review.goto(f"{live_server.url}/evaluate/runs/{run.pk}/")
    stated = review.locator("#gold-agreement")
    expect()(stated).to_contain_text(
        "5 of 5 cases' gold comes from an annotation task (4 agreed, 1 adjudicated; annotators ann, bob)"
    )
    expect()(stated).to_contain_text("labels agreed on 80.0% of them")
    snap(review, "evaluation-run")


def test_the_frequent_actions_of_the_annotate_page_have_keys(chromium, live_server, five, member_with_role):
    from review.services.annotation import annotation_task_create

    lead = member_with_role("reviewer", username="lead")
    ann = member_with_role("annotator", username="ann")
    task = annotation_task_create(
        benchmark=five, name="keys", annotators=[ann], overlap=1, case_ids=["c1", "c2"], user=lead
    )
    page = session_of(chromium, live_server, ann)
    page.goto(f"{live_server.url}/tasks/{task.pk}/")
    page.locator("a[href*='/tasks/assignments/']").first.click()
    page.wait_for_url(re.compile(r"/tasks/assignments/\d+/$"))
    expect()(page.locator("h1")).to_have_text(MUSCAT)
    # The keys are the deferred script's: press none before the page has loaded it.
    page.wait_for_load_state("load")
    page.locator("body").press("o")
    chooser = page.get_by_label(re.compile("^Open a document of"))
    expect()(chooser).to_be_focused()
    chooser.select_option(label="oman")
    page.get_by_role("button", name="Open", exact=True).click()
    expect()(page.locator("#evidence-list h3", has_text="oman")).to_be_visible()
    page.wait_for_load_state("load")

    boxes = page.locator("#evidence-list input[name='evidence']")
    page.locator("body").press("j")
    expect()(boxes.nth(0)).to_be_focused()
    page.keyboard.press("j")
    expect()(boxes.nth(1)).to_be_focused()
    page.keyboard.press(" ")
    expect()(page.locator("#evidence-count")).to_have_text("1 evidence sentence selected.")
    page.keyboard.press("k")
    expect()(boxes.nth(0)).to_be_focused()
    page.keyboard.press("1")
    expect()(page.get_by_label("Answerable", exact=True)).to_be_checked()
    page.keyboard.press("r")
    expect()(page.get_by_label("Reference answer")).to_be_focused()
    page.keyboard.type("The Portuguese.")
    page.keyboard.press("Control+Enter")
    expect()(page.locator(".messages")).to_contain_text("Saved your answer to c1.")

    # The next item: / goes to the search box, s to the skip reason, whose Enter skips.
    expect()(page.locator("h1")).to_have_text(STAFF)
    page.wait_for_load_state("load")
    page.locator("body").press("/")
    expect()(page.get_by_label(re.compile("^Search the corpus"))).to_be_focused()
    page.locator("h1").click()  # out of the search box: keys typed into a field are the field's
    page.keyboard.press("s")
    reason = page.locator("#skip_reason")
    expect()(reason).to_be_focused()
    page.keyboard.type("Not sure what staff means here.")
    page.keyboard.press("Enter")
    expect()(page.locator(".messages")).to_contain_text("Skipped c2.")

    saved = Assignment.objects.get(task=task, gold_case__case_id="c1")
    assert saved.status == "done" and saved.annotation.evidence == ["oman#S2"]
    assert saved.annotation.reference_answer == "The Portuguese."
    assert Assignment.objects.get(task=task, gold_case__case_id="c2").status == "skipped"
