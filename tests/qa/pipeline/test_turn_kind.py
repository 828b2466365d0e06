"""The learned turn-kind stage: when a turn gets a clarifying question instead of a search."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from qa.pipeline.checks.answerability import ANSWER_KINDS
from qa.pipeline.config.presets import get_preset
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.dialogue import conversation
from qa.pipeline.dialogue.turn_kind import (
    SIGNAL_NAMES,
    SoftmaxModel,
    TurnKindModel,
    TurnSignals,
    classify_turn,
    load_turn_model,
    named_of_kind,
    turn_signals,
)
from qa.pipeline.dialogue.turns import clarifying_question, leaves_open
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import PipelineRun
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from tests.qa.pipeline.answering_fakes import ScriptedLLM, make_passage
from tests.qa.pipeline.test_run import document

MISSIONS = [
    document(
        f"nasa/{name.lower()}",
        f"{name} mission",
        [
            f"The {name} Mission was launched by NASA to study {subject}.",
            f"The main purpose of the {name} Mission was to {purpose}.",
        ],
    )
    for name, subject, purpose in (
        ("Kepler", "distant stars", "find Earth-sized planets"),
        ("Juno", "Jupiter", "measure the planet's gravity and magnetic fields"),
        ("Artemis", "the Moon", "return astronauts to the lunar surface"),
    )
]


@pytest.fixture(scope="module")
def pipeline():
    """``default``, whose follow-ups the learned turn-kind model decides (``turns.learned``)."""
    index = InMemoryCorpusIndex(MISSIONS, HashingEmbedder(), chunk_size=2, chunk_overlap=0)
    return build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )


def follow_up(pipeline, question, history):
    return answer_question(question, pipeline=pipeline, rewrite=conversation.rewrite(question, history))


def test_a_follow_up_about_a_mission_nothing_named_gets_a_clarifying_question_with_the_missions(pipeline):
    # Nothing earlier names a mission, so "that mission" points at nothing.
    history = [("Who runs the American space programme?", "NASA does.")]
    run = follow_up(pipeline, "What is the main purpose of that mission?", history)
    answer = run.answer
    assert answer.kind == "underspecified" and not answer.refused and answer.cited_sentences == ()
    assert answer.text.startswith("Which mission do you mean? The documents mention")
    assert sum(name in answer.text for name in ("Kepler", "Juno", "Artemis")) >= 2
    assert run.turn_kind.kind == "underspecified" and run.turn_kind.signals.unresolved == 1.0
    assert run.turn_kind.p_underspecified >= load_turn_model().clarify_threshold
    assert "learned turn-kind model" in answer.note
    assert PipelineRun.from_json(run.to_json()).turn_kind == run.turn_kind  # shown on the trace page


def test_the_same_question_after_the_mission_was_named_is_answered_from_its_document(pipeline):
    question = "What is the main purpose of that NASA mission?"
    history = [("Tell me about the Juno Mission.", "The Juno Mission was launched by NASA to study Jupiter.")]
    run = follow_up(pipeline, question, history)
    assert run.standalone == "What is the main purpose of the Juno Mission?"
    assert run.turn_kind.kind == "answerable"
    assert not run.answer.refused and run.answer.kind in ("answerable", "partial")
    assert {c.document_id for c in run.answer.cited_sentences} == {"nasa/juno"}
    assert "measure the planet's gravity" in run.answer.text


def test_a_first_question_is_left_to_the_rules(pipeline):
    run = answer_question("What is the main purpose of that NASA mission?", pipeline=pipeline)
    assert run.turn_kind is None
    assert run.answer.kind == "underspecified" and "(heuristic): 'that NASA mission'" in run.answer.note


def test_without_the_learned_model_the_rules_decide_follow_ups_too(pipeline):
    config = dataclasses.replace(
        pipeline.config, turns=dataclasses.replace(pipeline.config.turns, learned=False)
    )
    history = [("Who runs the American space programme?", "NASA does.")]
    run = follow_up(
        dataclasses.replace(pipeline, config=config), "What is the main purpose of that mission?", history
    )
    assert run.turn_kind is None
    assert run.answer.kind == "underspecified" and "(heuristic): 'that mission'" in run.answer.note


def test_with_an_llm_judging_answerability_the_rules_decide_follow_ups(pipeline):
    # The model was fitted on the signal judge's probabilities; an LLM's are on another scale.
    trust = dataclasses.replace(pipeline.config.trust, answerability="llm")
    llm = ScriptedLLM([lambda messages: "KIND: answerable\nPROBABILITY: 0.9"] * 5)
    judged = dataclasses.replace(pipeline, config=dataclasses.replace(pipeline.config, trust=trust), llm=llm)
    history = [("Who runs the American space programme?", "NASA does.")]
    run = follow_up(judged, "What is the main purpose of that mission?", history)
    assert run.turn_kind is None
    assert run.answer.kind == "underspecified" and "(heuristic): 'that mission'" in run.answer.note


def model_of(clarify: float, refuse: float) -> TurnKindModel:
    """A model that reads one signal: ``unresolved`` pushes p(underspecified) up, ``answerable``
    p(unanswerable) down."""
    coef = (
        (0.0, 3.0),
        (0.0, 0.0),
        (6.0, 0.0),
        (0.0, -6.0),
    )  # answerable, partial, underspecified, unanswerable
    softmax = SoftmaxModel(
        ANSWER_KINDS, ("unresolved", "answerable"), (0.5, 0.5), (0.5, 0.5), coef, (0.0,) * 4
    )
    return TurnKindModel(softmax, clarify, refuse)


def signals_of(**values: float) -> TurnSignals:
    return TurnSignals(**{name: 0.0 for name in SIGNAL_NAMES} | values)


def test_the_model_asks_back_first_then_refuses_then_answers():
    model = model_of(0.5, 0.5)
    assert classify_turn(signals_of(unresolved=1.0, answerable=0.9), model).kind == "underspecified"
    assert classify_turn(signals_of(unresolved=0.0, answerable=0.0), model).kind == "unanswerable"
    verdict = classify_turn(signals_of(unresolved=0.0, answerable=1.0), model)
    assert verdict.kind == "answerable" and abs(sum(verdict.probabilities) - 1.0) < 1e-9
    assert "p(kind)" in verdict.reason


def test_a_turn_that_names_its_own_subject_is_never_asked_which_one():
    # Seen on MTRAG-UN: "What do you mean by binary options?" was asked "Is this about Forex, or
    # something else?". Without a reference left open there is no choice to ask about.
    model = model_of(0.5, 0.5)
    asked = classify_turn(signals_of(unresolved=1.0, answerable=0.9), model, refers=False)
    assert asked.kind == "answerable" and "leaves no reference open" in asked.reason
    refused = classify_turn(signals_of(unresolved=1.0, answerable=0.0), model_of(0.3, 0.01), refers=False)
    assert refused.kind == "unanswerable"


def test_leaving_a_reference_open_is_a_pronoun_a_demonstrative_or_an_unnamed_the_x():
    history = [("What is Forex?", "Forex is the foreign exchange market.")]
    assert not leaves_open(conversation.rewrite("What do you mean by binary options?", history))
    assert leaves_open(conversation.rewrite("How is it regulated?", history))
    assert leaves_open(conversation.rewrite("What does this broker charge?", history))
    assert not leaves_open(None)


def test_a_vague_turn_is_asked_back_whatever_the_model_says():
    never = model_of(2.0, 2.0)
    assert classify_turn(signals_of(vague=1.0, answerable=1.0), never).kind == "underspecified"
    assert classify_turn(signals_of(vague=0.0, answerable=1.0), never).kind == "answerable"


def test_the_softmax_fit_separates_kinds_it_is_shown_and_survives_json():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(90, 2))
    labels = np.where(x[:, 0] > 0.5, "unanswerable", np.where(x[:, 1] > 0.5, "underspecified", "answerable"))
    fitted = SoftmaxModel.fit(x, labels, ANSWER_KINDS, ("a", "b"), l2=0.1)
    predicted = np.array(ANSWER_KINDS)[fitted.probabilities(x).argmax(axis=1)]
    assert (predicted == labels).mean() > 0.9
    again = SoftmaxModel.from_json(json.loads(json.dumps(fitted.to_json())))
    assert np.allclose(again.probabilities(x), fitted.probabilities(x))


def test_the_stored_model_says_it_saw_only_the_train_half():
    model = load_turn_model()
    assert "train half only" in model.trained_on
    assert 0.0 < model.clarify_threshold < 1.0 and 0.0 < model.refuse_threshold < 1.0
    assert set(model.kinds.names) <= set(SIGNAL_NAMES) and model.kinds.kinds == ANSWER_KINDS


def hits(*pairs: tuple[str, float]) -> list[ScoredPassage]:
    return [
        ScoredPassage(
            make_passage(f"d{i}", [f"{title} is official in several countries."], title=title),
            score,
            {"sentence_similarity": score},
        )
        for i, (title, score) in enumerate(pairs)
    ]


def test_several_documents_matching_equally_count_as_competing_subjects():
    question = "In which country is this language officially spoken?"
    spread = turn_signals(
        question, None, hits(("Spanish language", 0.56), ("Italian language", 0.56), ("Xhosa language", 0.55))
    )
    one = turn_signals(
        question, None, hits(("Spanish language", 0.70), ("Spanish language", 0.69), ("Xhosa language", 0.40))
    )
    assert spread.competing_titles == 0.5 and one.competing_titles == 0.0
    assert spread.unresolved == 1.0 and spread.covered_titles > one.covered_titles


def test_a_pronoun_the_model_doubts_is_asked_about_by_what_memory_read_it_as():
    history = [
        (
            "Does facilitated diffusion happen in a cell?",
            "Yes, facilitated diffusion is passive transport.",
        )
    ]
    turn = conversation.rewrite("How does it affect the cell?", history)
    assert turn.earlier_turns == 1 and turn.shared_words == 0.5  # "cell" was said, "affect" not
    asked = clarifying_question("How does it affect the cell?", turn, ())
    assert asked.question == "By 'it', do you mean facilitated diffusion, or something else?"


def test_the_names_offered_stay_within_one_line_and_one_sentence():
    # Seen on MTRAG-UN train: "Which department do you mean? The documents mention the
    # San Bruno\xa0Police Department.\nPolice ..." (a name run across a no-break space, a
    # full stop and a line break).
    passage = make_passage(
        "sb/1",
        [
            "San Bruno\xa0Police Department. Police officers patrol the city.",
            "Police Department\nThe Auburn Police Department serves Auburn.",
        ],
        title="Police",
    )
    names = named_of_kind("department", [ScoredPassage(passage, 1.0)], exclude="Which department?")
    assert set(names) == {"San Bruno Police Department", "Police Department", "Auburn Police Department"}
