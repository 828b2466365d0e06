"""axe-core (bundled with axe-playwright-python, nothing downloaded) over the site's pages in
headless Chromium: no page may have a violation. Folded parts that matter (the presets guide, the
folded metrics) are opened first, since axe skips what is hidden."""

from __future__ import annotations

import pytest

from tests.ui.conftest import sign_in
from tests.ui.test_metric_glossary import finished_run  # noqa: F401 - a fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(n['target'][0] for n in v['nodes'][:3])}"
        for v in results.response["violations"]
    ]


def test_no_page_has_an_accessibility_violation(
    page,
    live_server,
    staff,
    corpus,
    demo_documents,
    finished_run,  # noqa: F811
):
    pytest.importorskip("axe_playwright_python", reason="axe-playwright-python is not installed")
    from qa.services import answer_now
    from qa.services.team_presets import team_preset_create
    from review.services.reviews import answer_accept

    asked = answer_now(
        corpus=corpus, text="How many containers did the port handle in 2024?", preset="default", user=staff
    )
    answer_accept(answer=asked.answer, reviewer=staff, base_version=0, comment="Checked.")
    # The same question under a team preset that shows no answer as an answer: the low-confidence
    # card (it was dimmed, and its text failed the contrast check).
    team_preset_create(
        user=staff, team=corpus.team, name="wary", base="default", parameters={"answer_confidence": 1.0}
    )
    wary = answer_now(
        corpus=corpus, text="How many containers did the port handle in 2024?", preset="wary", user=staff
    )
    document = demo_documents[0]
    pages = {
        "ask": ("/", "What the presets do"),
        "conversation": (f"/questions/{asked.pk}/", None),
        "trace": (f"/questions/{asked.pk}/trace/", None),
        "history": ("/history/", None),
        "corpora": ("/corpora/", None),
        "corpus": (f"/corpora/{corpus.pk}/", None),
        "document": (f"/documents/{document.pk}/?highlight={document.sentences.first().pk}", None),
        "review queue": ("/review/", None),
        "review": (f"/review/answers/{asked.answer.pk}/", None),
        "conversation, low confidence": (f"/questions/{wary.pk}/", None),
        "review, low confidence": (f"/review/answers/{wary.answer.pk}/", None),
        "annotate": ("/annotate/", None),
        "tasks": ("/tasks/", None),
        "evaluate": ("/evaluate/", None),
        "evaluation run": (f"/evaluate/runs/{finished_run.pk}/", "Every other metric"),
        "metric glossary": ("/evaluate/glossary/", None),
        "presets": ("/presets/", None),
        "teams": ("/teams/", None),
        "audit": ("/audit/", None),
        "operations": ("/operations/", None),
    }
    page.goto(f"{live_server.url}/login/")
    found = {"sign in": _violations(page)}
    sign_in(page, live_server, staff)
    for name, (path, fold) in pages.items():
        page.goto(f"{live_server.url}{path}")
        page.locator("main").wait_for()
        if fold:
            page.locator("summary", has_text=fold).first.click()
        found[name] = _violations(page)
    assert {name: problems for name, problems in found.items() if problems} == {}
