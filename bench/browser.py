"""What the browser tests (tests/ui) and bench/annotation_time.py share: how Chromium is started
and an annotator's step on the annotate page.

The bench times the very step the browser test checks, so a change to the annotate page that the
test follows is followed by the bench too. Playwright is imported on use: nothing here loads it
for a caller that never opens a browser.
"""

from __future__ import annotations

import re

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def annotate_item(page, label: str, document: str, sentences: list[str], reference: str) -> None:
    """Answer the open item as an annotator would: open its document, click the evidence, label, save."""
    from playwright.sync_api import expect

    page.wait_for_url(re.compile(r"/tasks/assignments/\d+/$"))
    if document:
        chooser = page.get_by_label(re.compile("^Open a document of"))
        # Options read "<external id>: <title>" where the title differs from the id.
        option = chooser.locator("option", has_text=re.compile(rf"^{re.escape(document)}(:|$)")).first
        chooser.select_option(option.get_attribute("value"))
        page.get_by_role("button", name="Open", exact=True).click()
        expect(page.locator("#evidence-list h3", has_text=document)).to_be_visible()
        for text in sentences:
            row = page.locator("#evidence-list li", has_text=text).first
            row.click()
            expect(row).to_have_class(re.compile(r"\bselected\b"))
    n = len(sentences)
    expect(page.locator("#evidence-count")).to_have_text(
        f"{n} evidence sentence{'' if n == 1 else 's'} selected."
    )
    page.get_by_label(label, exact=True).check()
    page.get_by_label("Reference answer").fill(reference)
    page.get_by_role("button", name="Save and go to the next").click()
    expect(page.locator(".messages")).to_contain_text("Saved your answer to ")
