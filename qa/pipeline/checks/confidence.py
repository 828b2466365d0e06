"""The answer check and confidence: is this answer an answer, and how likely is it right?

Two small logistic models stored beside the answerability model in
``answerability_model.json``, each naming the data that fitted it:

- the answer check: p(the question is answerable) once the answer is known,
  from the answerability probability and the answer's relevance to the
  question (question-answer cosine, focus coverage, whether it states the kind
  of thing asked for), fitted by bench/answerability.py. Below its threshold
  the answer is refused: supported sentences that do not address the question
  are not an answer;
- confidence: p(the answer is right), where right means what the bench scores:
  an answer to an answerable question whose citations reach F1 >= 0.5 against
  the gold evidence, or a refusal of an unanswerable one. For an answer it is
  a logistic model of two inputs, the answer check's logit and whether BM25
  and dense agree on the top document (the check says whether the question is
  answered, agreement whether the cited document is the right one), fitted by
  bench/answerability.py on *cross-fitted* check probabilities: each tuning
  question's from models that did not see it. In-sample probabilities are
  surer than they turn out on new questions, and a calibration fitted on them
  inherits that. CLAPNQ-dev held out, fold splits 0/1/2: ECE 0.040 / 0.047 /
  0.070. A refit on the wider tuning suite (bench/confidence_suite.py) was
  measured and not adopted (docs/reply.md).

A refusal's confidence is the probability that refusing is right, never a
bare 100%: 1 - the last calibrated answerability probability computed for
it; for a refusal a hard rule decided (an asked-for amount no passage
states), the share of such refusals that were right on the tuning data
(``refusal_rule`` in the model file); for an underspecified question, none
(``None``: nothing was judged against the corpus, so there is nothing to be
right about; the answer's note says so). Every probability is kept within
[0.01, 0.99]: ~230 tuning questions cannot show a model to be surer than that.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qa.pipeline.checks.answerability import MODEL_PATH, LogisticModel, load_model, logit
from qa.pipeline.checks.relevance import AnswerRelevance

ANSWER_CHECK_NAMES: tuple[str, ...] = (
    "answerability_logit",
    "answer_cosine",
    "answer_coverage",
    "type_stated",
)
# The answer check says whether the question is answered; whether BM25 and dense agree on the top
# document says whether the answer cites the right one (right needs citation F1 >= 0.5 too).
CONFIDENCE_NAMES: tuple[str, ...] = ("answer_check_logit", "retriever_agreement")


def answer_check_features(answerability: float, relevance: AnswerRelevance) -> np.ndarray:
    return np.array(
        [logit(answerability), relevance.cosine, relevance.focus_coverage, float(relevance.type_stated)]
    )


def confidence_inputs(
    checked: float, relevance: AnswerRelevance, support_share: float, signals: Mapping[str, float] | None
) -> dict[str, float]:
    """Every input a confidence model may name, by name (bench/confidence_suite.py stores these)."""
    return {
        "answer_check_logit": float(logit(checked)),
        "answer_cosine": float(relevance.cosine),
        "answer_coverage": float(relevance.focus_coverage),
        "support_share": float(support_share),
        **(signals or {}),
    }


def confidence_features(
    checked: float,
    relevance: AnswerRelevance,
    support_share: float,
    signals: Mapping[str, float] | None,
    model: LogisticModel,
) -> np.ndarray:
    """The features ``model`` names (a model file names its own: files written before the
    cross-fitted model used the answer's relevance and support share). A signal the judge did not compute (the
    LLM judge computes none) takes the model's mean, so that it moves the probability neither way."""
    available = confidence_inputs(checked, relevance, support_share, signals)
    return np.array([available.get(name, mean) for name, mean in zip(model.names, model.mean, strict=True)])


def support_share(labels: Sequence[str]) -> float:
    return sum(label == "supported" for label in labels) / len(labels) if labels else 0.0


@dataclass(frozen=True)
class AnswerCheck:
    probability: float  # p(answerable) given the answer
    threshold: float
    relevance: AnswerRelevance
    # An overview question ("Tell me about the port") is addressed by sentences about its subject:
    # the model, fitted on questions asking for one fact, does not judge it.
    overview: bool = False

    @property
    def addresses_question(self) -> bool:
        return self.relevance.addresses and (self.overview or self.probability >= self.threshold)

    @property
    def reason(self) -> str:
        if not self.relevance.addresses:
            return self.relevance.reason
        if self.overview:
            return f"an overview whose sentences are about its subject ({self.relevance.reason})"
        if self.probability < self.threshold:
            return (
                f"the answer does not address the question (p {self.probability:.3f} < {self.threshold:.3f})"
            )
        return f"the answer addresses the question (p {self.probability:.3f})"

    @property
    def plain_reason(self) -> str:
        """Why the answer does not address the question, in plain words for the answer card; the
        probabilities stay in ``reason`` and the trace."""
        if not self.relevance.addresses:
            return self.relevance.plain or self.relevance.reason
        if not self.overview and self.probability < self.threshold:
            return "the sentences found do not seem to answer the question"
        return "the answer addresses the question"

    def to_trace(self) -> dict:
        return {
            "probability": round(self.probability, 4),
            "threshold": round(self.threshold, 4),
            "addresses_question": self.addresses_question,
            "overview": self.overview,
            "reason": self.reason,
            "relevance": self.relevance.to_trace(),
        }


PROBABILITY_BOUNDS = (0.01, 0.99)


def bounded(probability: float) -> float:
    low, high = PROBABILITY_BOUNDS
    return min(max(float(probability), low), high)


@dataclass(frozen=True)
class Confidence:
    probability: float | None  # None: not applicable (an underspecified question; ``basis`` says why)
    basis: str

    def to_trace(self) -> dict:
        shown = None if self.probability is None else round(self.probability, 4)
        return {"probability": shown, "basis": self.basis}


class TrustModels:
    """The answer-check and confidence models, loaded once per process."""

    def __init__(self, path: Path | str = MODEL_PATH) -> None:
        self.answer_check = load_model(path, "answer_check")
        self.confidence = load_model(path, "confidence")
        with Path(path).open(encoding="utf-8") as handle:
            rule = json.load(handle).get("refusal_rule")  # absent from model files written before it
        self.rule_precision: float | None = rule["precision"] if rule else None

    def check_answer(
        self, answerability: float, relevance: AnswerRelevance, *, overview: bool = False
    ) -> AnswerCheck:
        probability = float(self.answer_check.probability(answer_check_features(answerability, relevance))[0])
        return AnswerCheck(probability, self.answer_check.threshold, relevance, overview)

    def of_answer(
        self, check: AnswerCheck, labels: Sequence[str], signals: Mapping[str, float] | None = None
    ) -> Confidence:
        """``signals``: the answerability signals by name (None where the judge computed none)."""
        features = confidence_features(
            check.probability, check.relevance, support_share(labels), signals, self.confidence
        )
        return Confidence(bounded(self.confidence.probability(features)[0]), "answer: confidence model")

    def of_refusal(self, answerability: float, *, by_rule: bool = False) -> Confidence:
        """That refusing is right: see the module's docstring."""
        if by_rule and self.rule_precision is not None:
            return Confidence(
                bounded(self.rule_precision), "refusal by rule: its precision on the tuning data"
            )
        return Confidence(bounded(1.0 - answerability), "refusal: 1 - p(answerable)")

    @staticmethod
    def not_applicable(reason: str) -> Confidence:
        return Confidence(None, f"not applicable: {reason}")


def fitted(model: LogisticModel, **changes) -> LogisticModel:
    """A copy with fields changed (the threshold, what it was trained on)."""
    return LogisticModel(**{**model.__dict__, **changes})
