"""What a clarifying question says, and when a short turn is answered instead (no LLM)."""

from __future__ import annotations

import pytest

from qa.pipeline.config.presets import get_preset
from qa.pipeline.dialogue import conversation
from qa.pipeline.dialogue.turns import clarification
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from tests.qa.pipeline.answering_fakes import make_passage, ranked
from tests.qa.pipeline.test_run import document

DEPARTMENTS = ranked(
    make_passage(
        "auburn/police",
        [
            "Skip to Main Content\nServices\nPolice Department Home\nContact Us\n"
            "HomeDepartmentsPolice Department\n",
            "The Auburn Police Department publishes a crime report every year.",
        ],
        title="Annual report | Auburn Police Department",
    ),
    make_passage(
        "sanbruno/fire",
        ["The San Bruno Fire Department publishes its inspection schedule online."],
        title="Inspections",
    ),
)


def test_a_reference_followed_by_a_verb_asks_about_the_noun_not_the_verb():
    # Seen on MTRAG-UN: "Which publish do you mean?" for "this department publish ...".
    question = "When did this department publish its annual report?"
    turn = conversation.rewrite(question, [("Where can I pay a parking ticket?", "Online.")])
    assert turn.unresolved == ("this department",)
    asked = clarification(question, turn, DEPARTMENTS)
    assert asked is not None and asked.question.startswith("Which department do you mean?")
    assert "Auburn Police Department" in asked.question and "San Bruno Fire Department" in asked.question


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # Seen on MTRAG-UN: "Which Superior Court publish do you mean?". A "does" question needs a
        # verb after its subject; the tagger read "publish" and "support" as nouns.
        ("Does this Superior Court publish judges roster?", "Which Superior Court do you mean?"),
        ("Does this California county support veterans?", "Which California county do you mean?"),
        ("Does this library offer Wi-Fi?", "Which library do you mean?"),
    ],
)
def test_a_does_question_asks_about_its_subject_not_its_verb(question, asked):
    clarify = clarification(question, conversation.rewrite(question, ()), ())
    assert clarify is not None and clarify.question.startswith(asked)


def test_menu_and_navigation_lines_are_never_offered_as_choices():
    question = "When did this department publish its annual report?"
    asked = clarification(question, conversation.rewrite(question, ()), DEPARTMENTS)
    assert asked is not None
    assert asked.options and set(asked.options) <= {"Auburn Police Department", "San Bruno Fire Department"}
    for menu in ("Skip", "Home", "Contact", "Services"):
        assert menu not in asked.question


def test_a_phrase_that_names_what_it_means_is_not_asked_back():
    # "those abbreviations bps and VIX" says which abbreviations: nothing to ask.
    turn = conversation.rewrite("What are those abbreviations bps and VIX?", [("Bond ETFs vs bonds", "...")])
    assert turn.unresolved == () and turn.definite == ()


PLANTS = [
    document(
        "biology/photosynthesis",
        "Photosynthesis",
        [
            "Photosynthesis is the process by which plants turn light, water and carbon dioxide into sugar.",
            "Photosynthesis releases oxygen as a by-product.",
        ],
    ),
    document("biology/respiration", "Respiration", ["Cellular respiration releases energy from sugar."]),
]


@pytest.fixture(scope="module")
def plants():
    index = InMemoryCorpusIndex(PLANTS, HashingEmbedder(), chunk_size=2, chunk_overlap=0)
    return build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )


def test_a_one_word_question_about_a_subject_the_documents_cover_is_answered(plants):
    run = answer_question("Photosynthesis?", pipeline=plants)
    assert run.answer.kind != "underspecified"
    assert "Could you say more" not in run.answer.text
    assert {c.document_id for c in run.answer.cited_sentences} == {"biology/photosynthesis"}


def test_a_turn_that_names_nothing_to_search_for_is_still_asked_back(plants):
    run = answer_question("Tell me more", pipeline=plants)
    assert run.answer.kind == "underspecified" and run.answer.text.startswith("Could you say more")


def test_choices_are_names_that_end_in_the_kind_asked_about():
    # Seen on MTRAG-UN train: "The documents mention the California State Library The State, ...",
    # "the Morgan Hill Police Department's", "the About NASA's Mission Join Us".
    passages = ranked(
        make_passage(
            "libraries/1",
            [
                "Visit the California State Library The State archives hold old maps.",
                "About NASA's Mission Join Us for a tour of the Monterey Park Bruggemeyer Library today.",
                "The Monterey Park Bruggemeyer Library's hours are posted online.",
            ],
        )
    )
    question = "What does this library offer?"
    asked = clarification(question, conversation.rewrite(question, ()), passages)
    assert asked is not None
    assert set(asked.options) == {"California State Library", "Monterey Park Bruggemeyer Library"}
    assert asked.question == (
        "Which library do you mean? The documents mention the Monterey Park Bruggemeyer Library "
        "and the California State Library."
    )


def test_two_things_of_the_kind_the_passages_name_make_the_police_department_a_choice():
    question = "What programs does the police department run for young people?"
    passages = ranked(
        make_passage("sb", ["The San Bruno Police Department runs a youth Explorer program."]),
        make_passage("mh", ["The Morgan Hill Police Department runs summer camps for teens."]),
    )
    turn = conversation.rewrite(question, [("Where can I fish in Marin County?", "At Lagunitas Lake.")])
    asked = clarification(question, turn, passages)
    assert asked is not None and asked.question.startswith("Which police department do you mean?")
    assert set(asked.options) == {"San Bruno Police Department", "Morgan Hill Police Department"}


def test_a_plural_thing_is_asked_for_as_them():
    question = "Are there any specific guidelines for jurors?"
    asked = clarification(question, conversation.rewrite(question, ()), ())
    assert asked is not None
    assert (
        asked.question
        == "Which guidelines do you mean? Please name the guidelines, so the search can find them."
    )


WALLS = ranked(
    make_passage("walls/berlin", ["The Berlin Wall came down in November 1989."], title="The Berlin Wall"),
    make_passage("walls/china", ["The Great Wall was built over many centuries."], title="The Great Wall"),
)
EARLIER = [("Which landmarks draw the most visitors?", "Several do, in many countries.")]


@pytest.mark.parametrize(("history", "asked_back"), [
    ((), False),  # a first question: "the wall" is what the asker takes as known
    (EARLIER, True),  # a follow-up that names no wall before: the documents give a choice of two
])  # fmt: skip
def test_the_x_asks_which_only_in_a_conversation_not_in_a_first_question(history, asked_back):
    question = "When did the wall come down?"
    turn = conversation.rewrite(question, history)
    assert turn.definite == ("the wall",)
    asked = clarification(question, turn, WALLS)
    assert (asked is not None) == asked_back
    if asked_back:
        assert asked.question.startswith("Which wall do you mean?") and "Berlin Wall" in asked.question
