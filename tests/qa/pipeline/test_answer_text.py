"""The answer an analyst reads as one paragraph: a quoted heading does not run into the next
sentence, and every sentence keeps its exact source text."""

from __future__ import annotations

from qa.pipeline.core.types import SUPPORTED, Answer, AnswerSentence


def test_a_quoted_heading_ends_before_the_next_sentence():
    heading = AnswerSentence("Floods close roads in southern Westmere", (), SUPPORTED)
    fact = AnswerSentence("Emergency services evacuated about 2,400 residents.", (), SUPPORTED)
    quote = AnswerSentence('He said the port "was not affected."', (), SUPPORTED)
    answer = Answer(sentences=(heading, fact, quote))
    assert answer.text == (
        "Floods close roads in southern Westmere. Emergency services evacuated about 2,400 residents. "
        'He said the port "was not affected."'
    )
    assert answer.sentences[0].text == "Floods close roads in southern Westmere"
