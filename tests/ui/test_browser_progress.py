"""An answer's progress steps only move forward, even when the job goes back to the queue (a worker
stopped mid-stage and its stage was re-queued) and through every stage the page draws.

The question's status endpoint is replayed from a script of job states (a re-queue cannot be made
to happen at a chosen moment); the page and its script are the real ones.
"""

from __future__ import annotations

import json

import pytest

from qa.models import Conversation, Question
from tests.ui.conftest import sign_in
from tests.ui.test_browser import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RECORD_CURRENT_STEPS = """
window.__currentSteps = [];
new MutationObserver(() => {
  const current = document.querySelector(".progress-steps li.current");
  const step = current && current.dataset.step;
  const seen = window.__currentSteps;
  if (step && seen[seen.length - 1] !== step) seen.push(step);
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["class"], childList: true});
"""


def test_progress_steps_never_go_back_when_a_stage_is_requeued(page, live_server, analyst, corpus):
    conversation = Conversation.objects.create(user=analyst, corpus=corpus)
    question = Question.objects.create(
        user=analyst, corpus=corpus, conversation=conversation, text="How deep is it?", preset="default"
    )
    script = [
        {"status": "running", "stage": "retrieval"},
        {"status": "running", "stage": "generation"},
        {"status": "queued", "stage": ""},  # its worker stopped; the stage waits for another
        {"status": "running", "stage": "generation"},
        {"status": "running", "stage": "citation"},
        {"status": "running", "stage": "verification"},
    ]
    served = []

    def replay(route):
        state = script[min(len(served), len(script) - 1)]
        served.append(state)
        route.fulfill(
            status=200, content_type="application/json", body=json.dumps({"id": question.pk, **state})
        )

    page.add_init_script(RECORD_CURRENT_STEPS)
    page.route(f"**/api/questions/{question.pk}/**", replay)
    sign_in(page, live_server, analyst, next_path=f"/questions/{question.pk}/")
    steps = page.locator("article.turn .progress-steps li")
    expect()(steps).to_have_count(6)
    last = page.locator(".progress-steps li[data-step=verification]")
    expect()(last).to_have_class("current", timeout=60_000)
    forward = ["queued", "retrieval", "generation", "citation", "verification"]
    assert page.evaluate("window.__currentSteps") == forward
    classes = [steps.nth(i).get_attribute("class") for i in range(6)]
    assert classes == ["complete"] * 4 + ["current", "pending"]
    expect()(page.locator("article.turn .job-status")).to_contain_text("Verifying each sentence")


def test_finding_citations_shows_what_runs_from_the_moment_it_is_sent(
    page, live_server, analyst, demo_documents, corpus
):
    """The check page's forms run for seconds on a large corpus: once sent, the page says what is
    running and for how long, and the button cannot send it twice. The test keeps the page from
    leaving (a listener added after the page's own cancels the navigation) to read it meanwhile."""
    sign_in(page, live_server, analyst, next_path=f"/corpora/{corpus.pk}/intrinsics/")
    page.evaluate(
        """() => document.querySelectorAll("form[data-busy]").forEach(
             (form) => form.addEventListener("submit", (event) => event.preventDefault()))"""
    )
    page.get_by_label("Text to cite").fill("The port handled 1.2 million containers in 2024.")
    page.get_by_role("button", name="Find citations").click()
    status = page.get_by_role("status").filter(has_text="Finding citations in the corpus")
    expect()(status).to_be_visible()
    expect()(status).to_contain_text(" s")
    expect()(page.get_by_role("button", name="Find citations")).to_be_disabled()
    expect()(status).to_contain_text("1 s", timeout=10_000)  # the seconds count on


def test_the_corpora_list_counts_documents_ready_without_a_reload(page, live_server, analyst, corpus):
    """A bulk import finishes while the Corpora page is open: its Ready column catches up by itself."""
    from documents.models import Document

    documents = [
        Document.objects.create(
            corpus=corpus,
            external_id=f"bulletin-{n}",
            title=f"Bulletin {n}",
            status=Document.Status.EMBEDDING,
        )
        for n in range(2)
    ]
    sign_in(page, live_server, analyst, next_path="/corpora/")
    row = page.locator("#corpora-table tr", has_text=corpus.name)
    expect()(row.locator("td.num")).to_have_text(["2", "0"])
    Document.objects.filter(pk=documents[0].pk).update(status=Document.Status.READY)
    expect()(row.locator("td.num")).to_have_text(["2", "1"], timeout=15_000)
    Document.objects.filter(pk=documents[1].pk).update(status=Document.Status.READY)
    expect()(page.locator("#corpora-table tr", has_text=corpus.name).locator("td.num")).to_have_text(
        ["2", "2"], timeout=15_000
    )
    # Nothing is left being read: the page stops asking.
    expect()(page.locator("#corpora-table")).to_have_attribute("data-pending", "false")
