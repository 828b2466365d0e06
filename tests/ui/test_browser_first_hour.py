"""The README's "Your first hour", step by step, in headless Chromium against the live server,
the real database and a real Celery worker process: sign in, see the demo corpus, upload a
document and watch it become ready, ask about it with the preset the README recommends, follow
the citation to its sentence, and accept the answer.

Every wait is on something the user sees (a selector, a URL, a text), never a fixed sleep, so a
slow, loaded machine only makes the test slower.
"""

from __future__ import annotations

import re

import pytest

from review.models import Review
from tests.factories import CorpusFactory
from tests.ui.conftest import DEMO_CORPUS, ingest_in_process, sign_in
from tests.ui.test_browser import ANSWER_TIMEOUT_MS, expect, snap

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

UPLOADED = """# Arlen lighthouse

The Arlen lighthouse stands on the northern cape of Westmere.

It was built in 1871 by the harbour engineer Tomas Reil. The tower is 34 meters tall, and its
lamp can be seen 22 nautical miles out to sea. Since 1990 the lighthouse has been a museum.
"""
QUESTION = "When was the Arlen lighthouse built?"


def test_the_readme_first_hour(page, live_server, celery_worker_process, staff, team, embedder, tmp_path):
    # What `make run` loads: the demo corpus, owned by the admin's team.
    demo = CorpusFactory(team=team, name="demo")
    demo_documents = ingest_in_process(demo, embedder, sorted(DEMO_CORPUS.glob("*.txt")))

    # 1. Sign in: the ask page greets the user.
    sign_in(page, live_server, staff)
    expect()(page.get_by_role("heading", name="Ask a question")).to_be_visible()

    # Corpora lists the demo corpus with its documents, all ready.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Corpora").click()
    demo_link = page.get_by_role("link", name="demo", exact=True)
    demo_row = page.locator("tbody tr", has=demo_link)
    expect()(demo_row.locator("td.num")).to_have_text([str(len(demo_documents))] * 2)
    demo_link.click()
    expect()(page.get_by_role("heading", name="demo", level=1)).to_be_visible()
    expect()(page.locator("#documents-table .badge.ready")).to_have_count(len(demo_documents))
    expect()(page.locator("#documents-table")).to_contain_text("harbor-authority-report")
    snap(page, "fh-01-demo-corpus")

    # 2. Upload a document: its row shows a progress bar and ends ready.
    upload = tmp_path / "arlen-lighthouse.md"
    upload.write_text(UPLOADED)
    page.get_by_label(re.compile("^Files")).set_input_files(upload)
    page.get_by_role("button", name="Upload").click()
    row = page.locator("#upload-rows tr")
    expect()(row).to_have_count(1)
    expect()(row).to_contain_text("arlen-lighthouse")
    expect()(row.locator("progress")).to_be_visible()
    expect()(page.locator("#upload-rows tr[data-state=ready]")).to_have_count(1, timeout=ANSWER_TIMEOUT_MS)
    assert row.locator("progress").evaluate("bar => bar.value") == 100
    expect()(page.locator("#upload-summary")).to_contain_text("Finished: 1 ready")
    # The counts and the document list catch up without a reload.
    expect()(page.locator("#documents-table .badge.ready")).to_have_count(len(demo_documents) + 1)
    expect()(page.locator("#documents-table")).to_contain_text("arlen-lighthouse")
    expect()(page.locator("#document-counts")).to_contain_text(f"{len(demo_documents) + 1} ready")
    snap(page, "fh-02-uploaded")

    # 3. Ask, leaving the preset on the README's recommendation.
    page.get_by_role("link", name="Ask this corpus").click()
    expect()(page.get_by_label("Corpus")).to_have_value(str(demo.pk))
    expect()(page.get_by_label("Preset")).to_have_value("default")
    page.get_by_label("Question", exact=True).fill(QUESTION)
    page.get_by_role("button", name="Ask", exact=True).click()
    turn = page.locator("article.turn").last
    expect()(turn.locator(".answer-sentence").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect()(turn.locator(".progress-steps")).to_have_count(0)
    cited = turn.locator(".answer-sentence", has_text="1871")
    expect()(cited).to_have_count(1)
    expect()(cited.locator(".badge:not(.relation)")).to_have_text("quote")
    expect()(turn.locator(".sources")).to_contain_text("Arlen lighthouse")
    snap(page, "fh-03-answer")

    # 4. Follow a citation: the marker names the sentence; the viewer opens on it, highlighted.
    marker = cited.locator("a.cite").first
    expect()(marker).to_have_attribute("title", re.compile("Arlen lighthouse"))
    label = re.search(r"sentence (\S+)$", marker.get_attribute("aria-label")).group(1)
    marker.click()
    page.wait_for_url(re.compile(r"/documents/\d+/\?highlight="))
    highlighted = page.locator(".sentences li.highlighted").first
    expect()(highlighted).to_be_in_viewport()
    expect()(highlighted.locator(".label")).to_have_text(label)
    expect()(highlighted).to_contain_text("1871")
    snap(page, "fh-04-source")

    # 5. Review: accept the answer; the decision shows in its history.
    page.go_back()
    page.locator("article.turn").last.get_by_role("link", name="Review", exact=True).click()
    page.wait_for_url(re.compile(r"/review/answers/\d+/$"))
    page.get_by_role("button", name="Accept the answer").click()
    history = page.locator("#history")
    expect()(history.locator("li.decision")).to_have_count(1)
    expect()(history.locator("li.decision")).to_contain_text("accept")
    snap(page, "fh-05-reviewed")
    assert Review.objects.get(reviewer=staff).action == "accept"
