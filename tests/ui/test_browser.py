"""The analyst's main journeys in headless Chromium, against the live server, the real database
and a real Celery worker process.

Set GROUNDEDQA_SCREENSHOTS=DIR to also save a screenshot of each page visited.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from documents.models import Document
from review.models import GoldCase, Review
from tests.ui.conftest import PRESET, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANSWER_TIMEOUT_MS = 180_000


def snap(page, name: str) -> None:
    folder = os.environ.get("GROUNDEDQA_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def expect():
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def ask(page, text: str) -> None:
    page.get_by_label("Question", exact=True).fill(text)
    page.get_by_label("Preset").select_option(PRESET)
    page.get_by_role("button", name=re.compile(r"^Ask")).click()


@pytest.mark.worker
def test_ask_see_the_answer_and_open_a_citation(
    page, live_server, celery_worker_process, analyst, demo_documents
):
    sign_in(page, live_server, analyst)
    snap(page, "01-ask-empty")
    ask(page, "How many containers did the port handle in 2024?")

    # The job is followed stage by stage, then the answer replaces the indicator.
    turn = page.locator("article.turn").last
    expect()(turn.locator(".answer-sentence").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect()(turn.locator(".progress-steps")).to_have_count(0)
    first = turn.locator(".answer-sentence").first
    expect()(first.locator(".badge:not(.relation)")).to_have_text(
        re.compile("^(quote|supported|partial|unsupported)$")
    )
    # and how it bears on the question, in words
    expect()(first.locator(".badge.relation")).to_have_text(
        re.compile("^(answers the question|background|off the question)$")
    )
    expect()(turn).to_contain_text("4.2 million containers")
    snap(page, "02-answer")

    marker = first.locator("a.cite").first
    cited_label = re.search(r"sentence (\S+)$", marker.get_attribute("aria-label")).group(1)
    marker.click()
    page.wait_for_url(re.compile(r"/documents/\d+/\?highlight="))
    highlighted = page.locator(".sentences li.highlighted")
    expect()(highlighted.first).to_be_visible()
    expect()(highlighted.first).to_be_in_viewport()
    expect()(highlighted.first.locator(".label")).to_have_text(cited_label)
    snap(page, "03-viewer-highlighted")

    # A follow-up continues the same conversation.
    page.go_back()
    ask(page, "And how many staff did it employ?")
    expect()(page.locator("article.turn")).to_have_count(2)
    expect()(page.locator("article.turn").last.locator(".answer-sentence").first).to_be_visible(
        timeout=ANSWER_TIMEOUT_MS
    )
    expect()(page.locator("article.turn").last).to_contain_text("1,850")

    page.locator("article.turn").last.get_by_role("link", name=re.compile("^Trace")).click()
    expect()(page.get_by_role("heading", name="Retrieval candidates")).to_be_visible()
    candidates = page.get_by_role("region", name="Retrieval candidates").locator("table")
    expect()(candidates).to_contain_text("harbor-authority-report")
    snap(page, "04-trace")

    page.get_by_role("link", name="History").click()
    page.get_by_label("Search questions and answers").fill("staff")
    page.get_by_role("button", name="Search").click()
    expect()(page.locator("table tbody tr")).to_have_count(1)
    expect()(page.locator("table tbody")).to_contain_text("And how many staff")
    snap(page, "10-history")


def test_accept_and_correct_an_answer_and_see_the_history(
    page, live_server, analyst, answered, demo_documents
):
    answer = answered.answer
    sign_in(page, live_server, analyst, next_path="/review/")
    snap(page, "11-review-queue")
    page.get_by_role("link", name=re.compile("^Review the answer to")).first.click()
    page.wait_for_url(f"**/review/answers/{answer.pk}/")
    page.locator("#accept-form").get_by_label("Comment").fill("Matches the annual report.")
    page.get_by_role("button", name="Accept the answer").click()
    history = page.locator("#history")
    expect()(history).to_contain_text("accept")
    expect()(history).to_contain_text("Matches the annual report.")

    # Correct: new text for the first sentence, and its citation picked by clicking the viewer.
    editor = page.locator("#correct-form")
    editor.locator("textarea[name=sentence_text]").first.fill(
        "The port handled 4.2 million containers in 2024."
    )
    editor.locator("input.cites").first.fill("")
    editor.get_by_role("button", name="Cite from the viewer").first.click()
    target = page.locator("#pick-panel .pick", has_text="4.2 million containers")
    target.click()
    expect()(target).to_have_attribute("aria-pressed", "true")
    expect()(editor.locator(".chips").first).to_contain_text("harbor-authority-report")
    snap(page, "05-review-correcting")
    page.get_by_role("button", name="Save the correction").click()

    expect()(page.get_by_role("heading", name=re.compile("Answer as corrected"))).to_be_visible()
    expect()(history.locator("li.decision")).to_have_count(2)
    expect()(history.locator("li.decision").last).to_contain_text("correct")
    correction = Review.objects.get(answer=answer, action="correct")
    first = correction.sentences.order_by("ordinal").first()
    assert first.text == "The port handled 4.2 million containers in 2024."
    reference = target.locator(".ref").inner_text()
    assert reference.startswith("harbor-authority-report:")  # the name the viewer shows
    assert editor.locator("input.cites").first.input_value() == reference
    assert [c.text for c in first.citations.all()] == [target.inner_text().split(reference)[0].strip()]

    page.get_by_label("…or a new one named").fill("port-facts")
    page.get_by_role("button", name="Add to benchmark").click()
    expect()(page.locator(".messages")).to_contain_text("Added to benchmark port-facts")
    assert GoldCase.objects.get().reference_answer.startswith("The port handled 4.2 million")
    snap(page, "06-review-done")


@pytest.mark.worker
def test_upload_files_and_watch_them_become_ready(
    page, live_server, celery_worker_process, staff, corpus, tmp_path
):
    good = [tmp_path / "lighthouse.txt", tmp_path / "ferry.md"]
    good[0].write_text("Lighthouse Report\n\nThe Arlen lighthouse was built in 1871. It is 34 meters tall.\n")
    good[1].write_text(
        "# Ferry timetable\n\nThe ferry to Sel island leaves every two hours. It takes forty minutes.\n"
    )
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    sign_in(page, live_server, staff, next_path=f"/corpora/{corpus.pk}/")
    page.get_by_label(re.compile("^Files")).set_input_files([*good, empty])
    page.get_by_role("button", name="Upload").click()

    rows = page.locator("#upload-rows tr")
    expect()(rows).to_have_count(3)
    expect()(page.locator("#upload-rows tr[data-state=ready]")).to_have_count(2, timeout=ANSWER_TIMEOUT_MS)
    refused = page.locator("#upload-rows tr[data-state=refused]")
    expect()(refused).to_have_count(1)
    expect()(refused).to_contain_text("empty.txt")
    expect()(page.locator("#upload-summary")).to_contain_text("Finished: 2 ready, 1 refused")
    for bar in page.locator("#upload-rows tr[data-state=ready] progress").all():
        assert bar.evaluate("b => b.value") == 100
    snap(page, "07-upload")
    page.reload()
    expect()(page.locator("#documents-table")).to_contain_text("lighthouse")
    expect()(page.locator("#documents-table .badge.ready")).to_have_count(2)

    # Re-ingest: a new version of one document, uploaded under the same id, replaces its sentences.
    newer = tmp_path / "lighthouse-2.txt"
    newer.write_text("Lighthouse Report\n\nThe Arlen lighthouse was built in 1871 and restored in 1990.\n")
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Re-ingest lighthouse from a new file").click()
    chooser.value.set_files(newer)
    expect()(page.locator("#upload-rows tr[data-state=ready]")).to_have_count(1, timeout=ANSWER_TIMEOUT_MS)
    lighthouse = Document.objects.get(corpus=corpus, external_id="lighthouse")
    assert "restored in 1990" in lighthouse.text
    assert Document.objects.filter(corpus=corpus).count() == 2

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Corpora").click()
    snap(page, "12-corpora")


@pytest.mark.worker
def test_an_evaluation_run_reaches_100_percent(
    page, live_server, celery_worker_process, analyst, corpus, demo_documents
):
    from review.services.benchmarks import benchmark_create
    from review.services.gold import gold_case_annotate

    benchmark = benchmark_create(name="westmere-facts", corpus=corpus, user=analyst)
    report, profile = demo_documents[0], demo_documents[1]
    for question, document, ordinal, answer in [
        ("How many containers did the port handle in 2024?", report, 1, "4.2 million"),
        ("What is the capital of Westmere?", profile, 2, "Arlen"),
    ]:
        gold_case_annotate(
            benchmark=benchmark,
            document=document,
            question=question,
            evidence_sentence_ids=[document.sentences.get(ordinal=ordinal).pk],
            reference_answer=answer,
            answerable=True,
            split="dev",
            user=analyst,
        )

    sign_in(page, live_server, analyst, next_path="/evaluate/")
    form = page.locator("#run-form")
    form.get_by_label("Benchmark").select_option(str(benchmark.pk))
    form.get_by_label("Preset").select_option(PRESET)
    form.get_by_label("Split").select_option("dev")
    form.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/evaluate/runs/\d+/$"))
    expect()(page.locator("#run-percent")).to_have_text("100%", timeout=ANSWER_TIMEOUT_MS)
    expect()(page.locator("#metrics-table")).to_be_visible()
    expect()(page.locator("#metrics-table")).to_contain_text("Recall@1")
    expect()(page.locator("#cases-table tbody tr")).to_have_count(2)
    snap(page, "08-evaluation-run")
    page.locator("#cases-table").get_by_role("link", name="Trace").first.click()
    expect()(page.get_by_role("heading", name="Stage timings")).to_be_visible()

    page.goto(f"{live_server.url}/evaluate/")
    expect()(page.locator("svg.chart")).to_have_count(2)
    snap(page, "09-evaluate")
    page.get_by_role("link", name="westmere-facts").click()
    page.get_by_role("link", name="dev/n001").click()
    expect()(page.locator("main")).to_contain_text("4.2 million")
    snap(page, "13-gold-case")
    page.goto(f"{live_server.url}/annotate/?document={report.pk}")
    page.get_by_label("Question", exact=True).fill("How deep is the main channel?")
    page.locator("#evidence-list li", has_text="16 meters").click()
    expect()(page.locator("#evidence-count")).to_have_text("1 evidence sentence selected.")
    page.get_by_label("Reference answer").fill("16 meters.")
    page.get_by_label("Benchmark", exact=True).select_option("westmere-facts")
    snap(page, "14-annotate")
    page.get_by_role("button", name="Save the case").click()
    expect()(page.locator(".messages")).to_contain_text("to westmere-facts")
    assert GoldCase.objects.filter(question="How deep is the main channel?").exists()


def test_the_keyboard_reaches_the_skip_link_first(page, live_server, analyst, corpus):
    page.goto(f"{live_server.url}/login/")
    snap(page, "00-sign-in")
    sign_in(page, live_server, analyst)
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to main content")
    expect()(skip).to_be_focused()
    expect()(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    # The next stop after skipping is inside <main>, not the navigation.
    assert page.evaluate("document.activeElement.closest('main') !== null")
