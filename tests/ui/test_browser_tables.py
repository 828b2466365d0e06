"""A question about one cell of an uploaded HTML table, answered in headless Chromium with the row
cited whole (its column headers beside its cells) and shown in place in the viewer."""

from __future__ import annotations

import re

import pytest

from tests.ui.conftest import ingest_in_process, sign_in
from tests.ui.test_browser import ANSWER_TIMEOUT_MS, ask, expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INDICATORS = b"""<html><head><title>Westmere port indicators</title></head><body>
<h1>Westmere port indicators</h1>
<p>The harbor authority publishes its operating indicators every year.</p>
<table>
  <thead><tr><th>Indicator</th><th>2022</th><th>2023</th></tr></thead>
  <tbody>
    <tr><td>Cruise ship calls</td><td>214</td><td>236</td></tr>
    <tr><td>Pilot boardings</td><td>5,120</td><td>5,480</td></tr>
  </tbody>
</table>
</body></html>"""


@pytest.mark.worker
def test_a_table_cell_question_is_answered_with_its_row_cited(
    page, live_server, celery_worker_process, analyst, corpus, embedder, tmp_path
):
    path = tmp_path / "port-indicators.html"
    path.write_bytes(INDICATORS)
    [document] = ingest_in_process(corpus, embedder, [path])
    sign_in(page, live_server, analyst)
    ask(page, "How many cruise ship calls were there in 2023?")

    turn = page.locator("article.turn").last
    expect()(turn.locator(".answer-sentence").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect()(turn).to_contain_text("Indicator: Cruise ship calls | 2022: 214 | 2023: 236")

    marker = turn.locator(".answer-sentence", has_text="Cruise ship calls").locator("a.cite").first
    marker.click()
    page.wait_for_url(re.compile(rf"/documents/{document.pk}/\?highlight="))
    row = page.locator(".sentences li.highlighted")
    expect()(row).to_have_class(re.compile(r"\brole-table_row\b"))
    expect()(row).to_contain_text("Indicator: Cruise ship calls | 2022: 214 | 2023: 236")
