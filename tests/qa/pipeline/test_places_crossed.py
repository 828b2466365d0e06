"""A question that names the countries money moves between is answered by passages on moving money
internationally, which name none of them (MTRAG-UN train asked the cheapest way to wire money from
an Australian bank account to a person in England from Laos and was refused: "the passages mention
none of 'australian', 'england', 'laos'"). One place is still a name the passages must hold, and
a partial answer still says which places the sources do not name.
`default` with the real embedding model, in memory."""

from __future__ import annotations

import pytest

from documents.parsing.assemble import document_from_text
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.dialogue.gaps import missing_parts, names_lacking
from qa.pipeline.flow.runner import answer_question
from tests.qa.pipeline.answering_fakes import make_passage
from tests.qa.pipeline.in_memory import in_memory_pipeline

WIRE = """Sending money overseas

If you trust the other party, an international bank wire is the quickest, easiest and cheapest \
option for sending money to another country. Ask your bank about the fees for an outgoing \
international wire transfer before you send it. Money transfer services can cost less than a bank \
for small amounts."""

WAGES = """Minimum wages

The federal minimum wage is $7.25 per hour. Many states set a higher minimum wage than the federal one."""


@pytest.fixture(scope="module")
def pipeline():
    return in_memory_pipeline(
        [
            document_from_text(WIRE, external_id="money-wire", filename="money-wire.txt"),
            document_from_text(WAGES, external_id="money-wages", filename="money-wages.txt"),
        ]
    )


def test_money_sent_between_named_countries_is_answered_from_passages_on_international_wires(pipeline):
    question = "What is the cheapest way to wire money from an Australian account to a person in England?"
    answer = answer_question(question, pipeline=pipeline).answer
    assert not answer.refused, answer.note
    cited = [source.text for sentence in answer.sentences for source in sentence.citations]
    assert any("international bank wire is the quickest" in text for text in cited)


def _hits(*texts: str) -> list[ScoredPassage]:
    return [
        ScoredPassage(make_passage(f"d{i}", [text], title="Money"), 1.0, {}) for i, text in enumerate(texts)
    ]


def test_places_stay_missing_names_unless_the_question_crosses_borders_over_international_passages():
    international = _hits("An international bank wire is the cheapest way to send money abroad.")
    crossing = "How do I wire money from Canada to a person in India?"
    lacking = missing_parts(crossing, international)
    # A partial answer still says the sources name neither country; the refusal gate lets them be.
    assert lacking == ("canada", "india")
    assert names_lacking(crossing, lacking, international) == ()
    # One place: the passages must say something about it.
    one = "How do I wire money to a person in India?"
    assert names_lacking(one, missing_parts(one, international), international) == ("india",)
    # Two places over passages that never speak of crossing borders.
    domestic = _hits("A bank wire is the cheapest way to send money to another account.")
    assert names_lacking(crossing, missing_parts(crossing, domestic), domestic) == ("canada", "india")
