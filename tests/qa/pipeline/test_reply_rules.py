"""The reply rules: one ordered table, walked first match first, each rule switchable off by name in a
preset; switching one off changes what the reader gets exactly where that rule decided."""

from __future__ import annotations

from dataclasses import replace

import pytest

from qa.pipeline.checks import reply_rules
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.config.presets import PipelineConfig, get_preset
from qa.pipeline.core.types import SUPPORTED
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder
from tests.qa.pipeline.test_run import index  # noqa: F401 - the module's corpus fixture


class Facts:
    """Evidence as the stages hand it over: an item not given reads None."""

    def __init__(self, **items) -> None:
        self.__dict__.update(items)

    def __getattr__(self, name):
        return None


REFUSAL, ASK = object(), object()

# (evidence, rules off, phase) -> the rule that decides (None: answer in full)
CASES = [
    ({}, (), "before", None),
    ({"unresolved_reference": ASK, "answerability_refuses": True, "answerability_refusal": REFUSAL}, (),
     "before", "unresolved_reference"),
    ({"unresolved_reference": ASK, "answerability_refuses": True, "answerability_refusal": REFUSAL},
     ("unresolved_reference",), "before", "unanswerable"),
    ({"answerability_refuses": True, "doubted_reading": ASK, "answerability_refusal": REFUSAL}, (), "before",
     "doubted_reading"),
    ({"answerability_refuses": True, "doubted_reading": ASK, "answerability_refusal": REFUSAL},
     ("doubted_reading",), "before", "unanswerable"),
    ({"answerability_refuses": True, "answerability_refusal": REFUSAL}, ("unanswerable",), "before", None),
    # A reading's doubt counts only where answerability refuses.
    ({"answerability_refuses": False, "doubted_reading": ASK}, (), "before", None),
    ({"lacks_too_much": True, "missing_refusal": REFUSAL}, (), "before", "missing_words"),
    ({"lacks_too_much": True, "missing_refusal": REFUSAL, "early_refusal": REFUSAL}, ("missing_words",),
     "before", "weak_retrieval"),
    ({"lacks_too_much": False, "missing_refusal": REFUSAL}, (), "before", None),
    ({"early_refusal": REFUSAL}, (), "before", "weak_retrieval"),
    ({"early_refusal": REFUSAL}, ("weak_retrieval",), "before", None),
    # The phases do not mix: an after-rule's evidence decides nothing before the answer.
    ({"check_refusal": REFUSAL, "missing": ("x",)}, (), "before", None),
    ({"check_refusal": REFUSAL, "doubted_guess": ASK, "missing": ("x",)}, (), "after", "answer_check"),
    ({"check_refusal": REFUSAL, "doubted_guess": ASK}, ("answer_check",), "after", "doubted_guess"),
    ({"missing": ("the elevation",)}, (), "after", "answer_in_part"),
    ({"missing": ()}, (), "after", None),
    ({"missing": ("the elevation",)}, ("answer_in_part",), "after", None),
]  # fmt: skip


@pytest.mark.parametrize(("evidence", "off", "phase", "rule"), CASES)
def test_the_first_rule_on_whose_condition_holds_decides(evidence, off, phase, rule):
    decision = reply_rules.decide(phase, Facts(**evidence), off)
    assert (decision.rule if decision else None) == rule
    if decision is not None:
        assert decision.detail is evidence[{
            "unresolved_reference": "unresolved_reference",
            "doubted_reading": "doubted_reading", "unanswerable": "answerability_refusal",
            "missing_words": "missing_refusal", "weak_retrieval": "early_refusal",
            "answer_check": "check_refusal", "doubted_guess": "doubted_guess", "answer_in_part": "missing",
        }[rule]]  # fmt: skip


def test_every_rule_says_what_it_reads_decides_and_why():
    table = reply_rules.rules_table()
    assert [row["name"] for row in table] == list(reply_rules.RULE_NAMES[:-1])
    assert len(set(reply_rules.RULE_NAMES)) == len(reply_rules.RULE_NAMES)
    for row in table:
        assert (
            row["reads"]
            and row["why"].endswith(".")
            and row["decides"] in ("answer_in_part", "ask_back", "refuse")
        )


@pytest.mark.parametrize("make", [
    lambda names: AnswerConfig(rules_off=names),
    lambda names: PipelineConfig.from_dict(
        {**get_preset("default").to_dict(), "answer": {**get_preset("default").to_dict()["answer"],
                                                      "rules_off": names}}
    ),
])  # fmt: skip
def test_an_unknown_rule_name_is_refused_with_the_names_there_are(make):
    with pytest.raises(ValueError) as error:
        make(["doubted_guess", "guessed_doubt"])
    message = str(error.value)
    assert "'guessed_doubt'" in message and "'doubted_guess'" not in message
    assert all(name in message for name in reply_rules.RULE_NAMES)


def test_a_stored_configuration_naming_a_deleted_rule_still_loads_without_it():
    # A question asked with a rule off that was later deleted keeps its page and its re-run.
    stored = get_preset("default").to_dict()
    stored["answer"] = {
        **stored["answer"],
        "rules_off": ["only_the_reading", "answer_check", "ambiguous_reference", "doubted_missing"],
    }
    assert PipelineConfig.from_dict(stored).answer.rules_off == ("answer_check",)
    assert not set(reply_rules.DELETED_RULES) & set(reply_rules.RULE_NAMES)


def test_rules_off_read_back_from_a_stored_configuration():
    config = get_preset("default")
    config = replace(config, answer=replace(config.answer, rules_off=["answer_check", "doubted_guess"]))
    stored = PipelineConfig.from_dict(config.to_dict())
    assert stored.answer.rules_off == ("answer_check", "doubted_guess")  # table order, a tuple


def ask(index, question: str, off: tuple[str, ...] = ()):  # noqa: F811
    config = get_preset("default")
    config = replace(config, answer=replace(config.answer, rules_off=off))
    pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=HashingEmbedder()))
    return answer_question(question, pipeline=pipeline).answer


def test_without_answer_in_part_a_partly_covered_question_is_answered_without_naming_the_gap(index):  # noqa: F811
    question = "What is the population of Oman and its capital's elevation?"
    by_default, off = ask(index, question), ask(index, question, ("answer_in_part",))
    assert by_default.kind == "partial" and by_default.missing
    assert off.kind == "answerable" and not off.missing
    assert any("do not cover 'elevation'" in s.text for s in by_default.sentences)
    assert not any("do not cover" in s.text for s in off.sentences)


def test_without_the_answer_check_rule_a_failed_check_labels_the_answer_instead_of_refusing(index):  # noqa: F811
    question = "Who staged a coup in Mali?"
    by_default, off = ask(index, question), ask(index, question, ("answer_check",))
    assert by_default.refused and "person" in by_default.note
    assert not off.refused and off.sentences
    assert not any(s.support == SUPPORTED for s in off.sentences)
    assert "answer check doubts" in off.note
