"""The parts of a question in parts: where each begins (``text.question_parts``), which ask when
and which sentences answer them (``text.time_slots``), and the question without a part no source
answers (``gaps.without_parts``), which is what a partial answer answers."""

from __future__ import annotations

import pytest

from qa.pipeline.core.text import question_parts, states_time, time_slots


def test_a_question_in_parts_is_split_where_each_part_asks_and_one_question_is_one_part():
    assert question_parts("What is the currency of Westmere and who is its prime minister?") == [
        "What is the currency of Westmere",
        "who is its prime minister?",
    ]
    assert question_parts("When did the floods happen, and how many people were evacuated?") == [
        "When did the floods happen",
        "how many people were evacuated?",
    ]
    # "and" between two things asked about is not a new part.
    assert question_parts("What are the capital and the currency of Westmere?") == [
        "What are the capital and the currency of Westmere?"
    ]


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("When did the floods happen and how many people were evacuated?", {"flood", "happen"}),
        ("How many staff did it employ, and in what year did the terminal open?", {"terminal", "open"}),
        ("What did officials say when the port closed?", None),  # "when" opens no part of its own
    ],
)
def test_a_part_asking_when_is_found_with_what_it_asks_about(question, about):
    slots = time_slots(question)
    if about is None:
        assert slots == []
    else:
        assert [slot.focus for slot in slots] == [about]
        assert not slots[0].phrase.startswith(("and", ","))


def test_a_sentence_naming_a_day_month_or_year_answers_it_and_one_about_something_else_does_not():
    (slot,) = time_slots("When did the floods happen?")
    assert slot.satisfied_by("Heavy rain caused the Sel river to flood on Tuesday.")
    assert slot.satisfied_by("The floods of March 2019 closed the port.")
    assert not slot.satisfied_by("Floods close roads in southern Westmere.")  # no time
    assert not slot.satisfied_by("The terminal opened in March.")  # a time, but not of the floods
    assert not states_time("Officials may say more later.")  # "may" the verb
    assert states_time("The weather service expects the rain to ease by the weekend.")


def test_a_part_no_source_answers_is_taken_out_whole_with_its_and():
    from qa.pipeline.dialogue.gaps import without_parts, without_words

    question = "How many staff did the authority employ and how many cruise ships called at the port?"
    assert without_parts(question, ["how many cruise ships called at the port"]) == (
        "How many staff did the authority employ?"
    )
    assert without_parts("Who is the president and how long is the term?", ["Who is the president"]) == (
        "how long is the term?"
    )
    # Single missing words are left to without_words, which drops them too.
    assert without_parts(question, ["cruise"]) == question
    assert "cruise" not in without_words(question, ["cruise"])
