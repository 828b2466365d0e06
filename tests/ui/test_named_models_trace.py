"""The trace page shows what the models a user named did: the NLI model's verdict on each answer
sentence and the reader's answer span marked inside it."""

from __future__ import annotations

import html
import re

import pytest

from qa.pipeline.flow.run import load_run
from tests.qa.pipeline.tiny_models import save_tiny_nli, save_tiny_span_reader
from tests.ui.conftest import PASSWORD


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    return {
        "QA_NLI_MODEL": save_tiny_nli(tmp_path_factory.mktemp("nli")),
        "QA_SPAN_READER_MODEL": save_tiny_span_reader(tmp_path_factory.mktemp("squad2")),
    }


def test_the_trace_shows_the_nli_verdicts_and_the_answer_spans(
    settings, tiny_models, client, analyst, demo_documents, corpus
):
    from qa.services import answer_now

    for setting, path in tiny_models.items():
        setattr(settings, setting, path)
    question = answer_now(
        corpus=corpus, text="How many containers did the port handle in 2024?", preset="default", user=analyst
    )
    assert client.login(username=analyst.username, password=PASSWORD)
    page = html.unescape(client.get(f"/questions/{question.pk}/trace/").content.decode())
    assert f"verifier: lexical -> nli ({tiny_models['QA_NLI_MODEL']})" in page
    assert f"NLI model {tiny_models['QA_NLI_MODEL']}: P(entailed) = " in page
    marked = re.findall(r'<mark class="answer-span"[^>]*>([^<]+)</mark>', page)
    assert marked, "no answer span marked"
    question.refresh_from_db()
    run = load_run(question.trace, question=question.text)
    verdicts = [v for a in run.answering.attempts for v in a.verification.verdicts]
    assert all(v.entailment is not None for v in verdicts if v.reason.startswith("NLI"))
    sentences = [s.text for a in run.answering.attempts for s in a.sentences]
    assert all(any(span in sentence for sentence in sentences) for span in marked)
