"""Combining the parts' answers: citations across documents, refused parts named, 2-4 sentences."""

from __future__ import annotations

from qa.pipeline.core.types import REFUSAL_TEXT, Answer, AnswerSentence, SourceSentence
from qa.pipeline.dialogue.decompose import Plan
from qa.pipeline.flow.combine import PartAnswer, combine, self_check, sources_do_not_say


def source(pk: int, document: str, text: str, title: str = "") -> SourceSentence:
    return SourceSentence(pk, document, title or document, pk, str(pk), text)


def answered(document: str, *texts: str, title: str = "") -> Answer:
    sentences = tuple(
        AnswerSentence(t, (source(hash((document, t)) % 10_000, document, t, title),), "supported")
        for t in texts
    )
    return Answer(sentences=sentences, verified=True, retrieved_documents=(document, "other"), confidence=0.8)


REFUSED = Answer(
    sentences=(AnswerSentence(REFUSAL_TEXT, ()),), refused=True, note="Refused: low answerability."
)
PLAN = Plan("Q", ("How many containers did the port handle?", "What is the capital of Westmere?"), "rules")


def test_two_answered_parts_give_one_answer_citing_both_documents_in_at_most_four_sentences():
    port = answered(
        "port", "The port handled 4.2 million containers.", "It employed 1,850 staff.", "Revenue rose."
    )
    country = answered(
        "country", "Its capital is Arlen.", "The currency is the crown.", title="Westmere profile"
    )
    answer, records = combine(
        PLAN, [PartAnswer(PLAN.parts[0], port, 7), PartAnswer(PLAN.parts[1], country, 8)]
    )
    assert answer.kind == "answerable" and not answer.refused
    assert [s.text for s in answer.sentences] == [
        "The port handled 4.2 million containers.",
        "It employed 1,850 staff.",
        "Its capital is Arlen.",
        "The currency is the crown.",
    ]
    assert {c.document_id for c in answer.cited_sentences} == {"port", "country"}
    assert answer.retrieved_documents == ("port", "country", "other")
    assert [(r.outcome, r.question_id, r.used_sentences) for r in records] == [
        ("answered", 7, 2),
        ("answered", 8, 2),
    ]


def test_each_part_keeps_the_sentences_about_what_only_it_asks():
    # The revenue part read the container and dredging sentences first and kept those two.
    plan = Plan("Q", ("What is the port's revenue?", "How many staff does the port employ?"), "rules")
    revenue = answered(
        "port",
        "The port handled 4.2 million containers.",
        "The channel was dredged.",
        "Revenue was 312 million.",
    )
    staff = answered("port", "It employed 1,850 staff.", "The channel was dredged.")
    answer, records = combine(plan, [PartAnswer(plan.parts[0], revenue), PartAnswer(plan.parts[1], staff)])
    assert [s.text for s in answer.sentences] == [
        "The port handled 4.2 million containers.",
        "Revenue was 312 million.",
        "It employed 1,850 staff.",
        "The channel was dredged.",
    ]
    assert [r.used_sentences for r in records] == [2, 2]


def test_a_refused_part_is_named_and_makes_the_answer_partial():
    country = answered("country", "Its capital is Arlen.", title="Westmere profile")
    plan = Plan("Q", ("What is the capital of Westmere?", "Who is the president of Westmere?"), "rules")
    answer, records = combine(plan, [PartAnswer(plan.parts[0], country), PartAnswer(plan.parts[1], REFUSED)])
    assert answer.kind == "partial" and not answer.refused
    assert answer.text == "Its capital is Arlen. The sources do not say who the president of Westmere is."
    assert answer.missing == ("Who is the president of Westmere?",)
    assert [r.outcome for r in records] == ["answered", "refused"]


def test_every_part_refused_is_a_refusal_of_the_whole_question():
    answer, records = combine(PLAN, [PartAnswer(q, REFUSED) for q in PLAN.parts])
    assert answer.refused and answer.kind == "unanswerable" and answer.text == REFUSAL_TEXT
    assert answer.missing == PLAN.parts


def test_self_check_refuses_an_answer_whose_cited_text_never_names_what_the_part_asks_about():
    about_oman = answered("oman", "The capital is Muscat.", title="Oman")
    outcome, reason = self_check(PartAnswer("What is the capital of Westmere?", about_oman))
    assert outcome == "refused" and "Westmere" in reason


def test_self_check_refuses_unsupported_sentences_and_reports_a_failed_part():
    unsupported = Answer(
        sentences=(AnswerSentence("Arlen.", (source(1, "d", "Arlen is a town."),), "unsupported"),)
    )
    assert self_check(PartAnswer("What is the capital?", unsupported))[0] == "refused"
    assert self_check(PartAnswer("What is the capital?", None, error="worker stopped 3 times")) == (
        "failed",
        "worker stopped 3 times",
    )


def test_a_question_that_was_not_split_keeps_its_answer_as_it_is():
    only = Answer(sentences=(AnswerSentence(REFUSAL_TEXT, ()),), refused=True, note="Refused: off topic.")
    answer, records = combine(Plan("Q?", ("Q?",)), [PartAnswer("Q?", only, 3)])
    assert answer == only and records[0].outcome == "refused"


def test_refusal_sentences_read_as_indirect_questions():
    assert (
        sources_do_not_say("When was Westmere founded?")
        == "The sources do not say when Westmere was founded."
    )
    assert (
        sources_do_not_say("What is the capital of Oman?")
        == "The sources do not say what the capital of Oman is."
    )
    assert sources_do_not_say("Why did the port grow?") == 'The sources do not say: "Why did the port grow?"'


def test_a_sentence_two_parts_both_found_is_said_once_and_the_framing_is_not_quoted():
    shared = "Keita won the elections in 2013 and 2018."
    first = answered("mali", shared, title="Mali")
    second = answered("mali", shared, "Observers deemed these elections credible.", title="Mali")
    plan = Plan("Q", ("Who won Mali's elections?", "How did observers judge Mali's elections?"), "rules")
    answer, _ = combine(plan, [PartAnswer(plan.parts[0], first), PartAnswer(plan.parts[1], second)])
    assert [s.text for s in answer.sentences] == [shared, "Observers deemed these elections credible."]
    refused = sources_do_not_say("According to the article, how many stations lacked accreditation?")
    assert refused == 'The sources do not say: "How many stations lacked accreditation?"'
