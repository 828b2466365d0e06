"""The shipped confidence model: what an analyst reads beside an answer is a probability of the
answer being right (answered with citations matching the evidence), never a restated p(answerable).
"""

from __future__ import annotations

import json

import pytest

from qa.pipeline.checks.answerability import MODEL_PATH
from qa.pipeline.checks.confidence import AnswerCheck, TrustModels
from qa.pipeline.checks.relevance import AnswerRelevance

ON_QUESTION = AnswerRelevance(0.7, 0.72, 0.8, True, True, "the answer addresses the question")
SUPPORTED = ["supported", "supported", "supported"]


@pytest.fixture(scope="module")
def models() -> TrustModels:
    return TrustModels()


def confidence_at(models: TrustModels, checked: float, agreement: float | None = 1.0) -> float:
    signals = None if agreement is None else {"retriever_agreement": agreement}
    return models.of_answer(AnswerCheck(checked, 0.0, ON_QUESTION), SUPPORTED, signals).probability


def test_an_answer_the_check_is_surer_of_is_more_confident_and_stays_a_probability(models):
    shown = [confidence_at(models, p) for p in (0.05, 0.3, 0.6, 0.9, 0.999)]
    assert shown == sorted(shown) and len(set(shown)) == len(shown)
    assert all(0.01 <= p <= 0.99 for p in shown)


def test_an_answer_is_less_sure_to_be_right_than_the_question_is_to_be_answerable(models):
    # Right also means citing the evidence: about a quarter of the answered answerable tuning
    # questions cited it with F1 below 0.5, so confidence sits below p(answerable).
    for checked in (0.6, 0.8, 0.95):
        assert confidence_at(models, checked) < checked - 0.05


def test_an_answer_from_a_top_document_both_retrievers_agree_on_is_more_confident(models):
    # Where BM25 and dense disagree on the top document, the cited one is more often the wrong one.
    for checked in (0.5, 0.9):
        agreed, split, neither = (confidence_at(models, checked, a) for a in (1.0, 0.5, 0.0))
        assert agreed > split > neither


def test_without_answerability_signals_an_answer_still_gets_a_confidence(models):
    # The LLM answerability judge computes no signals: the agreement then moves nothing.
    without = confidence_at(models, 0.9, None)
    assert 0.01 <= without <= 0.99
    assert confidence_at(models, 0.9, 0.0) < without < confidence_at(models, 0.9, 1.0)


def test_a_confidence_model_written_before_the_platt_scaling_still_gives_a_confidence(tmp_path):
    stored = json.loads(MODEL_PATH.read_text())
    stored["confidence"].update(
        names=["answer_check_logit", "answer_cosine", "answer_coverage", "support_share"],
        mean=[1.75, 0.66, 0.62, 1.0],
        scale=[1.72, 0.13, 0.21, 1.0],
        coef=[0.87, 0.07, -0.04, 0.0],
        intercept=0.23,
    )
    path = tmp_path / "model.json"
    path.write_text(json.dumps(stored))
    older = TrustModels(path)
    assert 0.01 <= confidence_at(older, 0.9) <= 0.99
    assert confidence_at(older, 0.9) > confidence_at(older, 0.3)


def test_the_confidence_reads_only_inputs_the_pipeline_gives(models):
    # A name the pipeline does not compute would silently read as its training mean: the
    # confidence would stop moving with that input.
    from qa.pipeline.checks.confidence import confidence_inputs

    given = confidence_inputs(0.8, ON_QUESTION, 1.0, {"retriever_agreement": 1.0})
    assert set(models.confidence.names) <= set(given)
