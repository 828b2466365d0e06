"""Team presets and the ask form's advanced settings in headless Chromium, against the live server."""

from __future__ import annotations

import re

import pytest

from qa.models import Question, TeamPreset
from tests.ui.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def analyst(member_with_role):
    """A team admin: saving a team's presets is its admins' (documents.permissions)."""
    return member_with_role("admin")


def expect():
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def test_a_preset_saved_in_the_browser_is_asked_with_from_the_ask_form(
    page, live_server, analyst, demo_documents, corpus
):
    sign_in(page, live_server, analyst)
    page.get_by_role("link", name="Presets").click()
    form = page.locator("#team-preset-form")
    form.get_by_label("Name", exact=True).fill("lexical-3")
    form.get_by_label("Starts from preset").select_option("default")
    form.get_by_label("Retriever", exact=True).select_option("bm25")
    form.get_by_label("Top-k passages").fill("3")
    form.get_by_role("button", name="Save preset").click()
    expect()(page.locator("#team-presets tr[data-preset='lexical-3']")).to_contain_text(
        "retriever=bm25, top_k=3"
    )
    assert TeamPreset.objects.get(name="lexical-3").parameters == {"retriever": "bm25", "top_k": 3}

    page.locator("#team-presets tr[data-preset='lexical-3']").get_by_role("link", name="Ask with it").click()
    expect()(page.get_by_label("Preset")).to_have_value("lexical-3")

    # The advanced settings: moving the alpha slider shows its value and ticks "Set alpha".
    page.locator("#ask-advanced summary").click()
    slider = page.locator("#id_alpha")
    expect()(slider).to_be_visible()
    expect()(page.get_by_label("Set alpha")).not_to_be_checked()
    slider.fill("0.8")
    expect()(page.locator("#alpha-value")).to_have_text("0.8")
    expect()(page.get_by_label("Set alpha")).to_be_checked()
    page.get_by_label("Set alpha").uncheck()  # alpha needs a hybrid; this preset retrieves with BM25

    page.get_by_label("Top-k passages").fill("2")
    page.get_by_label("Question", exact=True).fill("How many staff did the port authority employ?")
    page.get_by_role("button", name=re.compile(r"^Ask")).click()
    page.wait_for_url(re.compile(r"/questions/\d+/"))
    question = Question.objects.get(user=analyst)
    assert question.preset == "lexical-3"
    assert question.config["retrieval"]["method"] == "bm25" and question.config["retrieval"]["top_k"] == 2
    assert question.config["parameters"] == {"retriever": "bm25", "top_k": 2}
