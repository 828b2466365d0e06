"""The reply outcome a client branches on: one table of answers and the outcome each is shown as."""

from __future__ import annotations

import pytest

from qa.pipeline.checks.reply import ReplyThresholds, decide_reply
from qa.pipeline.config.parameters import InvalidParameters, apply_parameters
from qa.pipeline.config.presets import PipelineConfig, get_preset
from qa.pipeline.core.types import Answer, AnswerSentence, SourceSentence

SOURCE = SourceSentence(1, "doc", "Doc", 0, "1", "zlib is thread safe.")


def answer(*, refused=False, kind="", confidence=None, missing=(), note="") -> Answer:
    if refused:
        return Answer.refusal(note, confidence=confidence, kind=kind, missing=missing)
    sentence = AnswerSentence("zlib is thread safe.", (SOURCE,), "supported")
    return Answer((sentence,), confidence=confidence, kind=kind, missing=missing, note=note)


THRESHOLDS = ReplyThresholds(answer_confidence=0.5, withhold_confidence=0.2)

# (answer, outcome, words the reason must contain)
CASES = [
    (answer(confidence=0.9), "answer", "likely right"),
    (answer(confidence=0.5), "answer", "likely right"),  # the threshold itself shows as an answer
    (answer(confidence=0.49), "low_confidence", "not sure that this answers"),
    (answer(confidence=0.3, kind="answerable"), "low_confidence", "may be about something else"),
    (answer(confidence=0.1), "refused", "not sure enough"),
    (answer(confidence=None), "answer", "does not estimate confidence"),
    (answer(confidence=0.8, kind="partial", missing=("the uid",)), "partial", "not the uid"),
    (answer(confidence=0.3, kind="partial", missing=("the uid",)), "low_confidence", "do not cover the uid"),
    (answer(refused=True, confidence=0.9, note="No passage names a population."), "refused", "population"),
    (answer(refused=True, confidence=0.9), "refused", "do not support an answer"),
    # A refusal's confidence is that refusing is right: a low one does not turn it into an answer.
    (answer(refused=True, confidence=0.05), "refused", "do not support"),
    (answer(refused=True, kind="underspecified"), "ask_back", "more than one thing"),
    (answer(kind="underspecified", confidence=None), "ask_back", "more than one thing"),
]


@pytest.mark.parametrize(("given", "outcome", "words"), CASES)
def test_outcome_and_reason(given, outcome, words):
    reply = decide_reply(given, THRESHOLDS)
    assert reply.outcome == outcome
    assert words in reply.reason
    assert "%" not in reply.reason  # plain words on the card; the probabilities are in the trace
    assert reply.shown_as_answer == (outcome in ("answer", "partial"))


def test_preset_and_team_preset_parameters_set_the_thresholds():
    config = apply_parameters(get_preset("default"), {"answer_confidence": 0.8, "withhold_confidence": 0.3})
    thresholds = ReplyThresholds.of(config.answer)
    assert thresholds == ReplyThresholds(0.8, 0.3)
    # stored with the run's configuration, and read back
    assert ReplyThresholds.of(PipelineConfig.from_dict(config.to_dict()).answer) == thresholds
    assert decide_reply(answer(confidence=0.7), thresholds).outcome == "low_confidence"
    assert (
        decide_reply(answer(confidence=0.7), ReplyThresholds.of(get_preset("default").answer)).outcome
        == "answer"
    )


def test_a_configuration_stored_before_the_thresholds_reads_the_defaults():
    data = get_preset("default").to_dict()
    del data["answer"]["answer_confidence"], data["answer"]["withhold_confidence"]
    assert ReplyThresholds.of(PipelineConfig.from_dict(data).answer) == ReplyThresholds()


def test_withholding_above_the_answer_threshold_is_refused_with_why():
    with pytest.raises(InvalidParameters, match="withhold_confidence 0.9 is above answer_confidence"):
        apply_parameters(get_preset("default"), {"withhold_confidence": 0.9})


def test_a_run_stored_before_the_thresholds_loads_with_the_defaults():
    from qa.pipeline.config.answering_config import AnswerConfig
    from qa.pipeline.flow.run import AnsweringStep, PipelineRun, load_run

    stored = PipelineRun(
        question="Is zlib thread safe?",
        answering=AnsweringStep(outcome="verified", config=AnswerConfig(answer_confidence=0.9)),
        answer=answer(confidence=0.7),
    ).to_json()
    del (
        stored["answering"]["config"]["answer_confidence"],
        stored["answering"]["config"]["withhold_confidence"],
    )
    run = load_run(stored)
    assert ReplyThresholds.of(run.answering.config) == ReplyThresholds()
    assert decide_reply(run.answer, ReplyThresholds.of(run.answering.config)).outcome == "answer"
