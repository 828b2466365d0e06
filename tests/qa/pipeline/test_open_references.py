"""Turns about "the <kind>" that nothing picks out: asked back when the documents describe several
things of that kind, answered when they describe one (real pipeline, no LLM)."""

from __future__ import annotations

import pytest

from qa.pipeline.config.presets import get_preset
from qa.pipeline.dialogue import conversation
from qa.pipeline.dialogue.references import open_references
from qa.pipeline.dialogue.turns import ambiguous_reference
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from tests.qa.pipeline.answering_fakes import make_passage, ranked
from tests.qa.pipeline.test_run import document

LIBRARIES = [
    document(
        "libraries/state",
        "California State Library",
        [
            "The California State Library offers research help, a law library and interlibrary loans.",
            "The California State Library is open on weekdays.",
        ],
    ),
    document(
        "libraries/sutro",
        "Sutro Library",
        [
            "The Sutro Library offers genealogy research services and rare book viewing.",
            "The Sutro Library is in San Francisco.",
        ],
    ),
    document(
        "libraries/mosk",
        "Mosk Library",
        [
            "The Mosk Library offers government publications and reading rooms.",
            "The Mosk Library is in Sacramento.",
        ],
    ),
]
WEATHER = document(
    "weather/fog",
    "Fog",
    ["Fog forms when moist air cools near the ground.", "Coastal fog is common in summer."],
)


def _pipeline(documents):
    index = InMemoryCorpusIndex(documents, HashingEmbedder(), chunk_size=2, chunk_overlap=0)
    return build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )


def test_this_library_over_several_libraries_is_asked_back_naming_them():
    run = answer_question("What services does this library offer?", pipeline=_pipeline(LIBRARIES))
    assert run.answer.kind == "underspecified"
    assert run.answer.text.startswith("Which library do you mean? The documents mention")
    for library in ("California State Library", "Sutro Library", "Mosk Library"):
        assert library in run.answer.text


def test_this_library_over_one_library_is_answered_from_it():
    run = answer_question(
        "What services does this library offer?", pipeline=_pipeline([LIBRARIES[1], WEATHER])
    )
    assert run.answer.kind != "underspecified"
    assert not run.answer.refused
    assert {c.document_id for c in run.answer.cited_sentences} == {"libraries/sutro"}


CHAINS = ranked(
    make_passage(
        "wiki/jack",
        ["Jack in the Box is an American fast-food restaurant chain founded in 1951 in San Diego."],
        title="Jack in the Box",
    ),
    make_passage(
        "wiki/innout",
        ["In-N-Out Burger is an American regional chain of fast food restaurants in the Southwest."],
        title="In-N-Out Burger",
    ),
    make_passage(
        "wiki/chipotle",
        ["In a list of fastest-growing restaurant chains in 2009, Chipotle was ranked eighth."],
        title="Chipotle Mexican Grill",
    ),
)


def test_the_fast_food_chain_is_asked_back_offering_the_chains_the_documents_describe():
    question = "How did the fast food chain establish a presence in the United States?"
    asked = ambiguous_reference(question, None, CHAINS)
    assert asked is not None
    # Named as the documents title them, without "the" before a name that does not end in "chain";
    # Chipotle's passage only mentions chains, it does not say it is one.
    assert asked.question == (
        "Which fast food chain do you mean? The documents mention Jack in the Box and In-N-Out Burger."
    )


def test_the_chain_a_conversation_already_talked_about_is_not_asked_back():
    history = [("Tell me about Jack in the Box.", "Jack in the Box is a fast food chain from San Diego.")]
    question = "How did the fast food chain establish a presence in the United States?"
    turn = conversation.rewrite(question, history)
    assert turn.open_references == ()
    assert ambiguous_reference(question, turn, CHAINS) is None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When was the famous basketball player born?", ("the famous basketball player",)),
        ("What is the origin of the animal's breed?", ("the animal", "the animal's breed")),
        ("Is there a daily limit to hunt the animal in California?", ("the animal",)),
        # All of them, a complement that says which, a number and a name: nothing to choose.
        ("Who is eligible for the services?", ()),
        ("What is the history of the city of Chicago?", ()),
        ("Who won the 1998 final?", ()),
        ("What does the Causeway VA Clinic offer?", ()),
    ],
)
def test_open_references_are_the_phrases_nothing_pins_down(question, expected):
    assert open_references(question) == expected


CHAIN_DOCUMENTS = [
    document(
        "wiki/jack",
        "Jack in the Box",
        [
            "Jack in the Box is an American fast-food restaurant chain founded in 1951 in San Diego.",
            "The chain expanded across the western United States in the 1960s.",
        ],
    ),
    document(
        "wiki/innout",
        "In-N-Out Burger",
        [
            "In-N-Out Burger is an American regional chain of fast food restaurants.",
            "The chain grew slowly in the United States, opening restaurants near its own meat plants.",
        ],
    ),
]


def test_a_follow_up_about_the_fast_food_chain_is_asked_back_and_the_trace_says_why():
    history = [("Where did Australian troops fight after Gallipoli?", "They went to the Western Front.")]
    question = "How did the fast food chain establish a presence in the United States?"
    run = answer_question(
        question, pipeline=_pipeline(CHAIN_DOCUMENTS), rewrite=conversation.rewrite(question, history)
    )
    assert run.answer.kind == "underspecified" and not run.answer.cited_sentences
    assert "Jack in the Box" in run.answer.text and "In-N-Out Burger" in run.answer.text
    # The follow-up went through the learned turn-kind model; the trace shows what decided.
    assert run.turn_kind is not None and run.turn_kind.kind == "underspecified"
    assert "'the fast food chain' could be any of 2 things" in run.turn_kind.reason + run.answer.note


CELLS = [
    document(
        "bio/atp",
        "Adenosine triphosphate",
        [
            "Adenosine triphosphate (ATP) is the energy currency of the cell.",
            "ATP is made in the mitochondria during cellular respiration.",
            "Cells use ATP to power muscle contraction and active transport.",
        ],
    ),
    document(
        "bio/diffusion",
        "Facilitated diffusion",
        [
            "Facilitated diffusion moves molecules across a membrane through transport proteins.",
            "It needs no energy from the cell.",
        ],
    ),
    document(
        "bio/osmosis",
        "Osmosis",
        [
            "Osmosis is the movement of water across a semi-permeable membrane.",
            "Osmosis can make a cell swell or shrink.",
        ],
    ),
]


def test_an_answer_that_misses_a_follow_up_read_through_a_guessed_pronoun_asks_about_the_guess():
    # The rewrite reads "it" from the conversation; when the answer to the turn so read does not
    # address it, the asker is asked what "it" means instead of being shown an off-target answer.
    history = [("What is osmosis?", "Osmosis is the movement of water across a membrane.")]
    question = "Does it need energy?"
    turn = conversation.rewrite(question, history)
    said, meant = turn.resolved[0]
    run = answer_question(question, pipeline=_pipeline(CELLS), rewrite=turn)
    assert run.answer.kind == "underspecified" and not run.answer.cited_sentences
    assert run.answer.text == f"By '{said}', do you mean {meant}, or something else?"
    assert "the answer check doubts the answer to the turn as read" in run.answer.note
    assert run.turn_kind is not None and run.turn_kind.kind == "underspecified"
