"""The intrinsics on request, over one corpus: reads only, nothing is stored.

The REST views (qa/api/intrinsics.py) and the `intrinsic` command call the
``*_data`` functions, which return plain JSON-ready data in the shapes the
OpenAPI schema documents. Each builds the preset's pipeline over the corpus's
current version and hands it to the pure functions in
``qa.pipeline.flow.intrinsics``, so a question or answer is judged here exactly as
the pipeline judges its own. ``preset`` names a built-in preset or a preset of
the corpus's team, resolved as a question asked with it would be. Bad input raises ``QuestionInvalid`` or
``UnknownPreset`` (HTTP 400); an empty corpus is not an error: nothing in it
supports anything, and the results say so.
"""

from __future__ import annotations

from dataclasses import asdict

from documents.models import Corpus
from qa import clients, presets
from qa.adapters import DjangoCorpusIndex
from qa.errors import QuestionInvalid, UnknownPreset
from qa.pipeline.checks.confidence import AnswerCheck
from qa.pipeline.flow.factory import Pipeline, build_pipeline
from qa.pipeline.flow.intrinsics import (
    QuestionAssessment,
    TextSupport,
    assess_answer,
    assess_question,
    cite_text,
)

MAX_QUESTION_CHARS = 2000
MAX_TEXT_CHARS = 20000


def _text(value: str, *, what: str, limit: int) -> str:
    value = (value or "").strip()
    if not value:
        raise QuestionInvalid(f"The {what} is empty.")
    if len(value) > limit:
        raise QuestionInvalid(f"The {what} is longer than {limit} characters.")
    return value


def _pipeline(corpus: Corpus, preset: str | None) -> Pipeline:
    """The pipeline of ``preset`` (a built-in preset or one the corpus's team saved) over the corpus;
    UnknownPreset for any other name, as the ask API answers it."""
    name = (preset or "").strip() or presets.default_preset()
    config = presets.resolve(name, team=corpus.team)
    if config.retrieval is None:
        raise UnknownPreset(f"The {name} preset does not retrieve, so it finds no passages to judge.")
    index = DjangoCorpusIndex(corpus)
    return build_pipeline(config, index=index, clients=clients.model_clients(index.space))


def _support(support: TextSupport) -> dict:
    return {"sentences": [asdict(s) for s in support.sentences], "counts": support.counts}


def _answerability(assessed: QuestionAssessment) -> dict:
    verdict = assessed.verdict
    return {
        "kind": verdict.kind,
        "probability": round(verdict.probability, 4),
        "reason": verdict.reason,
        "judge": verdict.judge,
        "missing": list(verdict.missing),
        "signals": asdict(verdict.signals) if verdict.signals else None,
    }


def _cite(text: str, index: DjangoCorpusIndex) -> TextSupport:
    searcher = clients.search_embedder(index.space)
    return cite_text(text, index, clients.get_embedder(), search_embedder=searcher)


def cite_data(*, corpus: Corpus, text: str) -> dict:
    """Citations for a text written elsewhere: per sentence, its support in the corpus."""
    text = _text(text, what="text", limit=MAX_TEXT_CHARS)
    return {
        "corpus": corpus.pk,
        **_support(_cite(text, DjangoCorpusIndex(corpus))),
    }


def answerability_data(*, corpus: Corpus, question: str, preset: str | None = None) -> dict:
    """Can the corpus answer the question: kind, calibrated probability and the signals behind it."""
    question = _text(question, what="question", limit=MAX_QUESTION_CHARS)
    assessed = assess_question(_pipeline(corpus, preset), question)
    return {
        "corpus": corpus.pk,
        "question": question,
        "answerability": _answerability(assessed),
        "substitutions": list(assessed.substitutions),
    }


def _passages(assessed: QuestionAssessment) -> list[dict]:
    return [
        {
            **asdict(judgement),
            "rank": rank,
            "document": hit.passage.document_id,
            "title": hit.passage.document_title,
            "score": hit.score,
            "text": hit.passage.text[:300],
        }
        for rank, (hit, judgement) in enumerate(zip(assessed.passages, assessed.context, strict=True), 1)
    ]


def context_data(*, corpus: Corpus, question: str, preset: str | None = None) -> dict:
    """The passages answering would read, each judged relevant / partial / irrelevant."""
    question = _text(question, what="question", limit=MAX_QUESTION_CHARS)
    assessed = assess_question(_pipeline(corpus, preset), question)
    return {
        "corpus": corpus.pk,
        "question": question,
        "passages": _passages(assessed),
        "substitutions": list(assessed.substitutions),
    }


def question_report(*, corpus: Corpus, question: str, preset: str | None = None, answer: str = "") -> dict:
    """Answerability and context relevance from one retrieval, and, given an answer, its check:
    what the browser's intrinsics page shows for a question (the three endpoints in one)."""
    question = _text(question, what="question", limit=MAX_QUESTION_CHARS)
    pipeline = _pipeline(corpus, preset)
    report: dict = {"corpus": corpus.pk, "question": question, "check": None, "support": None}
    if answer.strip():
        checked = assess_answer(pipeline, question, _text(answer, what="answer", limit=MAX_TEXT_CHARS))
        assessed = checked.question
        report["check"] = _check(checked.check)
        report["support"] = _support(checked.support)
    else:
        assessed = assess_question(pipeline, question)
    report["answerability"] = _answerability(assessed)
    report["passages"] = _passages(assessed)
    report["substitutions"] = list(assessed.substitutions)
    return report


def _check(check: AnswerCheck) -> dict:
    return {
        "probability": round(check.probability, 4),
        "threshold": round(check.threshold, 4),
        "addresses_question": check.addresses_question,
        "reason": check.reason,
        "relevance": asdict(check.relevance),
    }


def answer_check_data(*, corpus: Corpus, question: str, answer: str, preset: str | None = None) -> dict:
    """Each sentence of an answer checked against the corpus, and the whole answer against the question."""
    question = _text(question, what="question", limit=MAX_QUESTION_CHARS)
    answer = _text(answer, what="answer", limit=MAX_TEXT_CHARS)
    assessed = assess_answer(_pipeline(corpus, preset), question, answer)
    return {
        "corpus": corpus.pk,
        "question": question,
        **_support(assessed.support),
        "answerability": _answerability(assessed.question),
        "check": _check(assessed.check),
        "substitutions": list(assessed.question.substitutions),
    }
