"""Context relevance (per retrieved passage) and answer relevance (the whole answer vs the question).

Support, checked by verification, asks "does the cited sentence say this?"; a
quoted sentence always passes. Relevance asks "is this about what was
asked?": an answer of four quoted sentences on Dominica's colonial history is
fully supported and does not answer "What was the population of Dominica in
2020?". Both use the same cheap evidence as answerability: the question's
focus words, the kind of answer it needs (``questions.analyse_question``) and
question-sentence cosines. Thresholds were set on CLAPNQ-dev and
analyst-bench train (bench/answerability.py prints the figures behind them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from qa.pipeline.core.model_parts import PipelineModels
from qa.pipeline.core.protocols import Embedder
from qa.pipeline.core.text import content_words, cosine_matrix
from qa.pipeline.core.types import AnswerSentence, ScoredPassage
from qa.pipeline.reading.questions import (
    QuestionAnalysis,
    analyse_question,
    names_only_a_past_holder,
    states_answer_type,
)

ContextLabel = Literal["relevant", "partial", "irrelevant"]
RELEVANT: ContextLabel = "relevant"
PARTIALLY_RELEVANT: ContextLabel = "partial"
IRRELEVANT: ContextLabel = "irrelevant"


@dataclass(frozen=True)
class ContextJudgement:
    key: str
    document_id: str
    label: ContextLabel
    sentence_cosine: float
    focus_coverage: float

    def to_trace(self) -> dict:
        return {
            "key": self.key,
            "document": self.document_id,
            "label": self.label,
            "sentence_cosine": round(self.sentence_cosine, 4),
            "focus_coverage": round(self.focus_coverage, 4),
        }


@dataclass(frozen=True)
class ContextThresholds:
    """A passage is irrelevant when both its best sentence cosine and its focus coverage are low,
    relevant when either is high (an exact-name match with a paraphrased body still helps)."""

    relevant_cosine: float = 0.5
    relevant_coverage: float = 0.6
    irrelevant_cosine: float = 0.3
    irrelevant_coverage: float = 0.34


def judge_context(
    question: str,
    ranked: Sequence[ScoredPassage],
    *,
    thresholds: ContextThresholds = ContextThresholds(),  # noqa: B008 - frozen, safe to share
    analysis: QuestionAnalysis | None = None,
) -> tuple[ContextJudgement, ...]:
    """One judgement per passage, in the given order.

    The cosine is the evidence reranker's best question-sentence cosine
    (scores["sentence_similarity"]); a passage without one is judged on its
    focus coverage alone, and never irrelevant for lack of a cosine.
    """
    analysis = analysis or analyse_question(question)
    judgements = []
    for hit in ranked:
        bag = content_words(hit.passage.text) | content_words(hit.passage.document_title)
        coverage = len(analysis.focus & bag) / len(analysis.focus) if analysis.focus else 1.0
        cosine = hit.scores.get("sentence_similarity")
        if cosine is None and hit.passage.unit == "sentence":
            cosine = hit.scores.get("dense")
        if (
            cosine is not None and cosine >= thresholds.relevant_cosine
        ) or coverage >= thresholds.relevant_coverage:
            label = RELEVANT
        elif (
            cosine is not None
            and cosine < thresholds.irrelevant_cosine
            and coverage < thresholds.irrelevant_coverage
        ):
            label = IRRELEVANT
        else:
            label = PARTIALLY_RELEVANT
        judgements.append(
            ContextJudgement(hit.passage.key, hit.passage.document_id, label, cosine or 0.0, coverage)
        )
    return tuple(judgements)


def relevant_passages(
    ranked: Sequence[ScoredPassage], judgements: Sequence[ContextJudgement]
) -> tuple[ScoredPassage, ...]:
    """The passages not judged irrelevant, in order: what generation may read."""
    label = {j.key: j.label for j in judgements}
    return tuple(hit for hit in ranked if label.get(hit.passage.key) != IRRELEVANT)


# --- answer relevance --------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerRelevance:
    """``addresses``: the answer states the kind of thing asked for and is about the question."""

    score: float  # mean of the question-answer cosine and the focus coverage
    cosine: float
    focus_coverage: float  # share of the question's focus words the answer (or its sources' titles) uses
    type_stated: bool  # an answer sentence states a number/date/name when one is asked for
    addresses: bool
    reason: str  # for the trace, with the figures
    # For the reader when the answer does not address the question, in plain words ("" in runs stored
    # before it: ``reason`` stands in).
    plain: str = ""

    def to_trace(self) -> dict:
        return {
            "score": round(self.score, 4),
            "cosine": round(self.cosine, 4),
            "focus_coverage": round(self.focus_coverage, 4),
            "type_stated": self.type_stated,
            "addresses": self.addresses,
            "reason": self.reason,
        }


MIN_ANSWER_RELEVANCE = 0.35


def _title_of(sentence: AnswerSentence) -> str:
    """The title of the document the sentence cites first (a quoted sentence cites its own)."""
    return sentence.citations[0].document_title if sentence.citations else ""


def answer_relevance(
    question: str,
    sentences: Sequence[AnswerSentence],
    embedder: Embedder,
    *,
    min_score: float = MIN_ANSWER_RELEVANCE,
    analysis: QuestionAnalysis | None = None,
    models: PipelineModels | None = None,
) -> AnswerRelevance:
    """``models``: the pipeline's models, for the entity tagger (None: ``default_models()``)."""
    analysis = analysis or analyse_question(question)
    text = " ".join(s.text for s in sentences)
    if not text.strip():
        return AnswerRelevance(0.0, 0.0, 0.0, False, False, "the answer is empty")
    # The mean of the sentence vectors stands for the answer: extractive answers are source
    # sentences whose vectors an embedding cache already holds, so this costs one question encoding.
    vectors = np.asarray(embedder.encode([question] + [s.text for s in sentences]), dtype=np.float64)
    cosine = float(cosine_matrix(vectors[:1], vectors[1:].mean(axis=0, keepdims=True))[0, 0])
    bag = content_words(text)
    for sentence in sentences:
        for cited in sentence.citations:
            bag |= content_words(cited.document_title)
    coverage = len(analysis.focus & bag) / len(analysis.focus) if analysis.focus else 1.0
    type_stated = any(states_answer_type(analysis, s.text, _title_of(s), models=models) for s in sentences)
    score = 0.5 * cosine + 0.5 * coverage
    # Only a named measure and a person are hard requirements: "where does the phrase X come from"
    # asks for an origin, not a place name, and natural questions are loose that way (CLAPNQ-dev:
    # requiring every answer type refused 18 of 100 answerable questions and 43 of 100 unanswerable
    # ones). An answer to "who ..." that names nobody new is no answer (2 of 14 answerable CLAPNQ
    # person questions got such an answer).
    strict = (analysis.answer_type == "number" and bool(analysis.measure)) or analysis.answer_type == "person"
    if strict and not type_stated:
        wanted = ", ".join(sorted(analysis.measure)) if analysis.measure else "person"
        reason = f"no answer sentence states the {wanted} asked for"
        if any(names_only_a_past_holder(analysis, s.text, _title_of(s), models=models) for s in sentences):
            reason += " (it names only a first or former holder, not the current one)"
        return AnswerRelevance(score, cosine, coverage, False, False, reason)
    if score < min_score:
        reason = f"the answer is off the question (relevance {score:.3f} < {min_score:.3f})"
        plain = "the sentences found are about something other than the question"
        return AnswerRelevance(score, cosine, coverage, type_stated, False, reason, plain)
    return AnswerRelevance(score, cosine, coverage, type_stated, True, f"relevance {score:.3f}")
