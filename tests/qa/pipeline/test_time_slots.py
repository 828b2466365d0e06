"""Which parts of a question ask when, and which sentences answer them (``text.time_slots``):
the extractive answer quotes a sentence naming a time for each such part."""

from __future__ import annotations

import pytest

from qa.pipeline.text import states_time, time_slots


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


def test_a_part_no_source_answers_is_taken_out_whole_with_its_and():
    from qa.pipeline.turns import without_parts, without_words

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
