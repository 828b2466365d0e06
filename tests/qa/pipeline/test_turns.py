"""Clarifying questions and partial answers, end to end through the default preset (no LLM)."""

from __future__ import annotations

import dataclasses

import pytest

from qa.pipeline.config.presets import get_preset
from qa.pipeline.dialogue import conversation
from qa.pipeline.dialogue.gaps import as_written, missing_parts
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import PipelineRun
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from tests.qa.pipeline.in_memory import in_memory_pipeline
from tests.qa.pipeline.test_run import document

DOCS = [
    document(
        "libraries/state",
        "California State Library",
        [
            "The California State Library lends books to state employees and the public.",
            "The California State Library offers research help and free wifi to the public.",
        ],
    ),
    document(
        "libraries/monterey",
        "Monterey Park Bruggemeyer Library",
        [
            "The Monterey Park Bruggemeyer Library offers study rooms and free wifi to the public.",
            "The Monterey Park Bruggemeyer Library holds a large Chinese language collection.",
        ],
    ),
    document(
        "sources/primary",
        "Primary source",
        [
            "A primary source is an artifact, document or recording created at the time under study.",
            "Historians read primary sources to learn what people of the time saw and thought.",
        ],
    ),
]


@pytest.fixture(scope="module")
def pipeline():
    index = InMemoryCorpusIndex(DOCS, HashingEmbedder(), chunk_size=2, chunk_overlap=0)
    return build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )


def test_a_reference_nothing_names_gets_a_clarifying_question_offering_what_the_documents_name(pipeline):
    question = "What facilities does this library offer to the public?"
    history = [("Which VA clinics are in Boston?", "The Causeway VA Clinic is in Boston.")]
    run = answer_question(question, pipeline=pipeline, rewrite=conversation.rewrite(question, history))
    answer = run.answer
    assert answer.kind == "underspecified" and not answer.refused
    assert answer.text.startswith("Which library do you mean?")
    assert "California State Library" in answer.text and "Monterey Park Bruggemeyer Library" in answer.text
    assert answer.cited_sentences == ()
    assert run.answering.outcome == "clarifying question" and "heuristic" in answer.note
    assert PipelineRun.from_json(run.to_json()) == run  # the kind and the rewrite survive the hand-over


def test_the_same_question_after_the_library_was_named_is_answered(pipeline):
    question = "What facilities does this library offer to the public?"
    history = [("Tell me about the Monterey Park Bruggemeyer Library.", "It is a public library.")]
    rewrite = conversation.rewrite(question, history)
    run = answer_question(question, pipeline=pipeline, rewrite=rewrite)
    assert run.standalone == "What facilities does the Monterey Park Bruggemeyer Library offer to the public?"
    assert run.answer.kind != "underspecified"
    assert not run.answer.refused
    assert {c.document_id for c in run.answer.cited_sentences} == {"libraries/monterey"}


def test_a_question_the_sources_cover_only_in_part_names_the_missing_part():
    # The real embedding model: the hashing one's cosines leave answerability at 0.44, below the
    # missing-words gate (a lacking word under 0.65 is refused, docs/reply.md), where the real one
    # gives 0.96, as a user would see it.
    run = answer_question(
        "What is the difference between primary and archaeological sources?",
        pipeline=in_memory_pipeline(DOCS),
    )
    answer = run.answer
    assert answer.kind == "partial" and answer.missing == ("archaeological",)
    assert any(c.document_id == "sources/primary" for c in answer.cited_sentences)
    assert (
        answer.sentences[-1].text
        == "The sources do not cover 'archaeological', so that part stays unanswered."
    )


def test_missing_parts_ignore_the_questions_framing_words():
    ranked = answer_question(
        "What do historians read primary sources for?",
        pipeline=build_pipeline(
            get_preset("default"),
            index=InMemoryCorpusIndex(DOCS, HashingEmbedder(), chunk_size=2, chunk_overlap=0),
            clients=ModelClients(embedder=HashingEmbedder()),
        ),
    )
    assert ranked.answer.kind == "answerable"
    assert missing_parts("Can you tell me the difference?", ()) == ()


def test_asking_for_the_exact_number_is_not_a_gap_when_the_passage_states_it():
    # analyst-bench train q017 was answered with the count and then told the analyst that the
    # sources "do not cover 'exact', 'number'": words that only ask for precision.
    from qa.pipeline.core.types import ScoredPassage
    from tests.qa.pipeline.answering_fakes import make_passage

    stated = [ScoredPassage(make_passage("d1", ["At least 287 children were killed in the strikes."]), 1.0)]
    assert missing_parts("What is the exact number of children killed in the strikes?", stated) == ()
    assert missing_parts("What specific kind of strikes killed children?", stated) == ()
    assert "hospitals" in missing_parts("What exact number of hospitals were hit?", stated)


def test_a_name_the_passages_never_mention_is_refused_not_answered(pipeline):
    run = answer_question(
        "Does the Monterey Park Bruggemeyer Library offer books in Klingon?", pipeline=pipeline
    )
    assert run.answer.refused and run.answer.kind == "unanswerable"
    assert "klingon" in run.answer.note.lower()


def test_feedback_terms_are_words_the_best_passages_share_and_the_rest_lack():
    from qa.pipeline.core.types import ScoredPassage
    from qa.pipeline.search.expansion import feedback_terms
    from tests.qa.pipeline.answering_fakes import make_passage

    texts = [
        ["Roth accounts allow penalty free withdrawals of contributions."],
        ["Contributions to Roth accounts come out penalty free."],
        ["A penalty applies to early withdrawals of earnings."],
        ["Bond funds hold many bonds."],
        ["Bond prices fall when rates rise."],
    ]
    ranked = [ScoredPassage(make_passage(f"d{i}", t), 1.0 - i / 10) for i, t in enumerate(texts)]
    terms = feedback_terms("Can I take money out of my Roth?", ranked, terms=3)
    assert "penalty" in terms and "contributions" in terms
    assert not {"bond", "bonds", "roth"} & {t.lower() for t in terms}


def test_a_people_named_after_a_place_the_passages_name_is_not_missing():
    from qa.pipeline.core.types import ScoredPassage
    from tests.qa.pipeline.answering_fakes import make_passage

    over_japan = [ScoredPassage(make_passage("d2", ["Japan is an island country in East Asia."]), 1.0)]
    assert "japanese" not in missing_parts("Why are the Japanese called Nippon?", over_japan)
    assert "spanish" in missing_parts("Is it available in Spanish?", over_japan)


def test_a_pronoun_read_as_something_no_passage_names_is_asked_about_by_the_rules(pipeline):
    # MTRAG-UN train: "Did its original composition win any awards?", "its" read as a song no
    # passage names, was refused; the reading is in doubt, not the corpus.
    question = "Which study rooms does it offer?"
    history = [("Tell me about the Klingon Opera House.", "It opened on Qo'noS.")]
    turn = conversation.rewrite(question, history)
    assert turn.resolved == (("it", "Klingon Opera House"),)
    rules = dataclasses.replace(
        pipeline.config, turns=dataclasses.replace(pipeline.config.turns, learned=False)
    )
    run = answer_question(question, pipeline=dataclasses.replace(pipeline, config=rules), rewrite=turn)
    assert run.answer.kind == "underspecified" and not run.answer.refused
    assert run.answer.text == "By 'it', do you mean Klingon Opera House, or something else?"
    # The learned turn kinds (default) refuse it instead: on MTRAG-UN train 4 of the 5 follow-ups
    # whose passages lacked only the rewrite's reading were unanswerable. Never an answer about
    # the libraries' study rooms passed off as the opera house's.
    learned = answer_question(question, pipeline=pipeline, rewrite=turn)
    assert learned.turn_kind.kind == "unanswerable" and learned.turn_kind.signals.reading_missing == 1.0
    assert learned.answer.refused and learned.answer.cited_sentences == ()


def test_a_partial_answer_missing_only_what_the_rewrite_put_in_is_asked_about(pipeline):
    # MTRAG-UN train: "Does this outpatient clinic provide mental health services ...?" read as the
    # Causeway VA Clinic was answered "the sources do not cover 'causeway'", blaming the sources.
    question = "Does this library offer study rooms and free wifi to the public?"
    history = [("Tell me about the Springfield Library.", "It opened in 1901.")]
    turn = conversation.rewrite(question, history)
    assert turn.resolved == (("this library", "Springfield Library"),)
    run = answer_question(question, pipeline=pipeline, rewrite=turn)
    assert run.answer.kind == "underspecified" and not run.answer.missing
    assert run.answer.text == "By 'this library', do you mean Springfield Library, or something else?"


def test_a_refused_reading_is_not_asked_about_when_the_turn_as_asked_is_unanswerable_too(pipeline):
    # MTRAG-UN train: "Can you just visit the casino, or do you have to gamble?" ("the casino" read as
    # Monte Carlo Casino) was asked back; the passages answer neither reading, so it is refused.
    question = "Is it open on Sundays for gambling?"
    history = [("Tell me about the Klingon Opera House.", "It opened on Qo'noS.")]
    turn = conversation.rewrite(question, history)
    assert turn.resolved == (("it", "Klingon Opera House"),)
    run = answer_question(question, pipeline=pipeline, rewrite=turn)
    assert run.answer.refused and run.answer.kind == "unanswerable"


def test_is_there_asks_whether_something_exists_and_points_nowhere():
    history = [("How many people live in Detroit?", "Detroit has about 630,000 people.")]
    turn = conversation.rewrite("Is there other municipalities on the verge of collapse?", history)
    assert turn.resolved == ()
    assert "there other municipalities" in turn.question


def test_what_the_asker_does_is_never_a_missing_part():
    # MTRAG-UN train: "I meant for Mars?", "how to create a Virtual Machine" were answered as partial,
    # "the sources do not cover 'meant'"; a source states things, not the asker's verbs.
    from qa.pipeline.core.types import ScoredPassage
    from tests.qa.pipeline.answering_fakes import make_passage

    vm = [ScoredPassage(make_passage("vm", ["Open the console to set up a new virtual machine."]), 1.0)]
    assert missing_parts("I meant to ask how to quickly build a virtual machine?", vm) == ()
    assert missing_parts("How do I build a virtual machine on Solaris?", vm) == ("solaris",)


def test_a_word_the_passages_hold_with_another_ending_is_not_missing():
    # "handle" / "handled" and "decline" / "declines": the bare word keeps its final e, the stem loses it.
    from qa.pipeline.core.types import ScoredPassage
    from tests.qa.pipeline.answering_fakes import make_passage

    port = [
        ScoredPassage(
            make_passage("port", ["The port handled 4.2 million containers as exports declined."]), 1.0
        )
    ]
    assert missing_parts("How many containers did the port handle?", port) == ()
    assert missing_parts("What explains the decline of exports?", port) == ()
    assert missing_parts("How many containers did the harbour handle?", port) == ("harbour",)


def test_a_how_deep_question_is_covered_by_a_passage_giving_the_depth():
    from qa.pipeline.core.types import ScoredPassage
    from tests.qa.pipeline.answering_fakes import make_passage

    text = "The main channel was dredged to a depth of 16 meters."
    channel = [ScoredPassage(make_passage("port", [text]), 1.0)]
    assert missing_parts("How deep is the main channel?", channel) == ()
    # A measure the passage does not give is still missing.
    assert missing_parts("How wide is the main channel?", channel) == ("wide",)


def test_people_counted_by_what_they_are_are_not_missing():
    # The demo corpus: "... how many people were evacuated?" was answered in part, "the sources do
    # not cover 'people'", over "Emergency services evacuated about 2,400 residents".
    from qa.pipeline.core.types import ScoredPassage
    from tests.qa.pipeline.answering_fakes import make_passage

    text = "Emergency services evacuated about 2,400 residents from low-lying villages."
    floods = [ScoredPassage(make_passage("floods", [text]), 1.0)]
    assert missing_parts("When were the villages flooded and how many people were evacuated?", floods) == ()
    assert missing_parts("How many people were evacuated from Arlen?", floods) == ("arlen",)


# What a partial answer or a refusal names as missing, as the question writes it (questions of the
# genre set and the demo; the words are what ``missing_parts`` found no passage holding).
AS_WRITTEN = [
    ("How long does it take to build Node.js on a Raspberry Pi?", ["raspberry"], ("Raspberry Pi",)),
    ("How long is the MPL's cure period after notice?", ["cure", "period"], ("cure period",)),
    ("Which macOS versions does Node.js support on arm64?", ["macos"], ("macOS",)),
    ("Does zlib support the Zstandard format?", ["zstandard"], ("Zstandard",)),
    ("What is the Harbor Authority's budget?", ["harbor"], ("Harbor Authority",)),
    ("Which Python version suits Windows 7?", ["windows"], ("Windows 7",)),
    ("compare audit committee in nigeria and united states", ["nigeria", "united"], ("nigeria", "united")),
    (
        "What is the difference between primary and archaeological sources?",
        ["archaeological"],
        ("archaeological",),
    ),
    # A part of a question in parts, and a word the question does not hold, are named as they are.
    (
        "How many staff did it employ and how many cruise ships called?",
        ["how many cruise ships called"],
        ("how many cruise ships called",),
    ),
    ("Which company maintains man-db?", ["company", "maintainer"], ("company", "maintainer")),
]


@pytest.mark.parametrize(("question", "missing", "named"), AS_WRITTEN)
def test_what_the_sources_lack_is_named_as_the_question_writes_it(question, missing, named):
    assert as_written(question, missing) == named
