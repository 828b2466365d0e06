"""Fixtures of the UI tests: a small ingested corpus, answers, and a headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.browser import CHROMIUM_ARGS
from documents import services as document_services
from documents.models import Document
from tests.conftest import wait_for

DEMO_CORPUS = Path(__file__).resolve().parents[2] / "documents" / "demo_corpus"
PASSWORD = "correct horse battery"  # tests.factories.UserFactory's
# A preset that needs neither an LLM nor reranker weights, whose trace has BM25, dense and fused scores.
PRESET = "hybrid"


def ingest_in_process(corpus, embedder, paths) -> list[Document]:
    """Parse and embed files here; a worker that claims a document first finishes it instead."""
    documents = []
    for path in paths:
        for submitted in document_services.documents_submit(
            corpus=corpus, filename=path.name, data=path.read_bytes()
        ):
            document = submitted.document
            document_services.document_embed(
                document_id=document.pk, expected_hash=document.pending_hash, embedder=embedder
            )
            documents.append(document)
    wait_for(
        lambda: (
            Document.objects.filter(pk__in=[d.pk for d in documents], status=Document.Status.READY).count()
            == len(documents)
        ),
        timeout=120,
        message="the demo documents to be ready",
    )
    return list(Document.objects.filter(pk__in=[d.pk for d in documents]).order_by("external_id"))


@pytest.fixture
def demo_documents(corpus, embedder):
    return ingest_in_process(corpus, embedder, sorted(DEMO_CORPUS.glob("*.txt")))


@pytest.fixture
def answered(demo_documents, corpus, analyst):
    """A question of the analyst's, answered in-process."""
    from qa.services import answer_now

    return answer_now(
        corpus=corpus, text="How many containers did the port handle in 2024?", preset=PRESET, user=analyst
    )


@pytest.fixture(scope="session")
def chromium_path():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.skip("chromium is not installed (apt-get install chromium); browser tests need it")
    return path


@pytest.fixture
def page(chromium_path, tmp_path, monkeypatch):
    """A fresh Chromium profile per test (a new --user-data-dir, so no cookies carry over)."""
    # Playwright's sync API keeps an event loop running in this thread; the ORM calls the test
    # makes meanwhile are still plain synchronous code, so Django's async guard does not apply.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=chromium_path,
            args=CHROMIUM_ARGS,
            viewport={"width": 1366, "height": 900},
        )
        context.set_default_timeout(30_000)
        page = context.pages[0] if context.pages else context.new_page()
        yield page
        context.close()


def sign_in(page, live_server, user, *, next_path: str = "/"):
    page.goto(f"{live_server.url}/login/?next={next_path}")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}{next_path}**")
