"""The question read once (qa.pipeline.dialogue.question_reading): tables of questions and the reading each
should get.

The questions are of the kinds the tuning suite asks (the genre set's licences, FAQs and manuals,
the Westmere-style probes, CLAPNQ-style facts, MTRAG-style follow-ups), written here; none is taken
from analyst-bench dev/test or MTRAG-UN test. Each table is one behaviour: a change to the analysers
shows every row it moves.
"""

from __future__ import annotations

import json

import pytest

from documents.parsing.types import ParsedDocument, ParsedSentence
from qa.pipeline.config.presets import get_preset
from qa.pipeline.core.text import main_clause, quantity_slots
from qa.pipeline.dialogue.conversation import rewrite
from qa.pipeline.dialogue.question_reading import QuestionReading, read_question, reading_of, with_reading
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import PipelineRun, load_run
from qa.pipeline.flow.runner import retrieve_stage
from qa.pipeline.reading.dates import question_period
from qa.pipeline.reading.questions import analyse_question
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex

ANSWER_TYPES = [
    ("When did the port of Westmere open?", "date"),
    ("In what year was the terminal built?", "date"),
    ("How long ago did the floods happen?", "date"),
    ("Under the Mozilla Public License, when do my rights terminate?", "other"),  # "when" not first
    ("Who is the current prime minister of Westmere?", "person"),
    ("Which minister announced the budget?", "person"),
    ("Whose ballots were recounted?", "person"),
    ("Who wrote the first version of the Mozilla Public License in 1998?", "person"),
    ("Where is the zlib documentation?", "place"),
    ("Which country hosts the summit?", "place"),
    ("How many ballots did the commission request?", "number"),
    ("What percentage of the population is Hutu?", "number"),
    ("What was the population of Dominica in 2020?", "number"),
    ("How far is the port from the capital?", "number"),
    ("How long is the Mozilla Public License's cure period after notice of non-compliance?", "number"),
    ("How much memory does man-db need to build its database?", "number"),
    ("What is the price of a zlib support contract?", "number"),
    ("How fast does xz decompress on a Raspberry Pi?", "number"),
    ("Is zlib Y2K-compliant?", "other"),
    ("Which translation system does man-db use?", "other"),
    ("Why did container volumes grow?", "other"),
    ("Does the Apache License grant permission to use the licensor's trademarks?", "other"),
    ("What is LZMA?", "other"),
]


@pytest.mark.parametrize(("question", "answer_type"), ANSWER_TYPES)
def test_the_kind_of_answer_a_question_asks_for(question, answer_type):
    assert read_question(question).answer_type == answer_type


# (question, focus: stemmed words an answer must be about, measure a number answer must name)
FOCUS = [
    ("Where is the zlib documentation?", {"documentation", "zlib"}, set()),
    ("Which group owns /var/mail?", {"group", "owns", "mail", "var"}, set()),
    ("Does zlib infringe on any patents?", {"infringe", "patent", "zlib"}, set()),
    ("Which minister announced the budget?", {"minister", "announc", "budget"}, set()),
    ("What uid did the gnats user have?", {"uid", "gnat", "user"}, set()),
    (
        "What was the population of Dominica in 2020?",
        {"dominica", "population"},
        {"citizen", "inhabitant", "people", "population", "resident"},
    ),
    (
        "What is the price of a zlib support contract?",
        {"contract", "price", "support", "zlib"},
        {"cost", "paid", "price"},
    ),
    (
        "What was the inflation rate in early 2019 and late 2020?",
        {"early", "inflation", "late", "rate"},
        {"rate"},
    ),
    (
        "How many ballots did the commission request?",
        {"ballot", "commission", "request"},
        {"ballot", "commission", "request"},
    ),
    ("What is the total number of jobs created?", {"creat", "jobs", "number", "total"}, {"creat", "jobs"}),
    # Source-talk and question words are never focus.
    ("According to the article, what did the minister announce?", {"announce", "minister"}, set()),
    # An overview's focus is its subject's words only.
    ("What do the sources say about the floods?", {"flood"}, set()),
    ("Give me an overview of the Apache License.", {"apache", "license"}, set()),
    # Too little to search for.
    ("What about it?", set(), set()),
]


@pytest.mark.parametrize(("question", "focus", "measure"), FOCUS)
def test_the_words_an_answer_must_be_about(question, focus, measure):
    reading = read_question(question)
    assert (set(reading.focus), set(reading.measure)) == (focus, measure)


# (question, what an overview asks about; None: the question asks for something in particular)
SUBJECTS = [
    ("Tell me about the port.", "the port"),
    ("What do the sources say about the floods?", "the floods"),
    ("Summarize the election results.", "the election results"),
    ("Give me an overview of the Apache License.", "the Apache License"),
    ("What happened in 1994?", "in 1994"),
    ("What happened in Westmere in March 2021?", "in Westmere in March 2021"),
    ("What is LZMA?", None),
    ("Tell me more.", None),
    ("Where is the zlib documentation?", None),
]


@pytest.mark.parametrize(("question", "subject"), SUBJECTS)
def test_an_overview_names_its_subject(question, subject):
    reading = read_question(question)
    assert reading.overview == (subject is not None)
    assert reading.subject == (subject or "")


# (question, first and last day of the period it names as ISO dates, the words naming it)
PERIODS = [
    ("What happened in 1994?", ("1994-01-01", "1994-12-31"), ("1994",)),
    (
        "Who wrote the first version of the Mozilla Public License in 1998?",
        ("1998-01-01", "1998-12-31"),
        ("1998",),
    ),
    ("What happened in Westmere in March 2021?", ("2021-03-01", "2021-03-31"), ("March 2021",)),
    ("Did exports rise in mid-2022?", ("2022-05-01", "2022-08-31"), ("mid-2022",)),
    (
        "What was the inflation rate in early 2019 and late 2020?",
        ("2019-01-01", "2020-12-31"),
        ("early 2019", "late 2020"),
    ),
    ("Can zlib process more than 4 GB of data?", None, ()),
    ("How much does an Apache License cost per seat?", None, ()),
    ("Which Python version do Node.js docs recommend for Windows 7?", None, ()),
]


@pytest.mark.parametrize(("question", "span", "mentions"), PERIODS)
def test_the_period_a_question_names(question, span, mentions):
    reading = read_question(question)
    if span is None:
        assert reading.period is None and reading.named_period() is None
        return
    assert (reading.period.start, reading.period.end) == span
    assert reading.period.mentions == mentions


# (question, amounts asked for as (kind, what is counted), names it holds, lower-cased)
AMOUNTS_AND_NAMES = [
    (
        "How many ballots did the commission request?",
        [("amount", {"ballot", "commission", "request"})],
        set(),
    ),
    ("What percentage of the population is Hutu?", [("percent", {"hutu", "population"})], {"hutu"}),
    ("What was the port's revenue and how many staff did it have?", [("amount", {"staff"})], set()),
    (
        "How much does an Apache License cost per seat?",
        [("amount", {"apache", "cost", "license", "seat"})],
        {"apache", "license"},
    ),
    ("What was the population of Dominica in 2020?", [], {"dominica"}),
    ("When did the port of Westmere open?", [], {"westmere"}),
    ("What support tier does Node.js give to FreeBSD on x64?", [], {"freebsd", "node"}),
    ("How long does it take to build Node.js on a Raspberry Pi?", [], {"node", "pi", "raspberry"}),
    ("Which group owns /var/mail?", [], set()),
]


@pytest.mark.parametrize(("question", "amounts", "names"), AMOUNTS_AND_NAMES)
def test_the_amounts_asked_for_and_the_names_named(question, amounts, names):
    reading = read_question(question)
    assert [(a.kind, set(a.focus)) for a in reading.amounts] == amounts
    assert set(reading.names) == names


# (question, its parts, the kind of answer its first part asks for)
PARTS = [
    (
        "What was the port's revenue and how many staff did it have?",
        ("What was the port's revenue", "how many staff did it have?"),
        "number",
    ),
    (
        "What is the currency of Westmere, and who is its prime minister?",
        ("What is the currency of Westmere", "who is its prime minister?"),
        "other",
    ),
    (
        "When did the terminal open and how much did it cost?",
        ("When did the terminal open", "how much did it cost?"),
        "date",
    ),
    (
        "Who founded the zlib project and in which year?",
        ("Who founded the zlib project and in which year?",),
        "person",
    ),
    ("Can XZ Utils handle .7z files?", ("Can XZ Utils handle .7z files?",), "other"),
]


@pytest.mark.parametrize(("question", "parts", "main_type"), PARTS)
def test_a_question_in_parts_is_read_part_by_part(question, parts, main_type):
    reading = read_question(question)
    assert reading.parts == parts
    assert reading.clauses == len(parts)
    assert reading.main_analysis().answer_type == main_type
    assert (reading.main is None) == (len(parts) == 1)


# (question, the opening that frames it, words that only frame it, words that must not be framing)
FRAMING = [
    (
        "According to the article, what did the minister announce?",
        "According to the article, ",
        {"according", "article"},
        {"minister", "announce"},
    ),
    (
        "Based solely on this historical overview, what share of Rwanda's population is Hutu?",
        "Based solely on this historical overview, ",
        {"based", "solely", "overview"},
        {"population", "hutu", "rwanda"},
    ),
    (
        "Based on the report provided, when did the floods start?",
        "Based on the report provided, ",
        {"based", "report"},
        {"floods"},
    ),
    ("What is the total number of jobs created?", "", {"what", "total", "number"}, {"jobs", "created"}),
    ("How many people were evacuated?", "", {"how", "people"}, {"evacuated"}),
    ("Where is the zlib documentation?", "", {"where"}, {"zlib", "documentation"}),
]


@pytest.mark.parametrize(("question", "opening", "framing", "content"), FRAMING)
def test_the_words_that_only_frame_a_question(question, opening, framing, content):
    reading = read_question(question)
    assert reading.framing == opening
    assert framing <= set(reading.framing_words)
    assert not content & set(reading.framing_words)


XZ = [("What is XZ Utils?", "XZ Utils is a set of compression tools.")]
APACHE = [
    ("Which licence covers the Apache HTTP Server?", "The Apache HTTP Server uses the Apache License 2.0.")
]
DEBIAN = [("What does the Debian users-and-groups page describe?", "It lists the system users and groups.")]

# (earlier turns, follow-up, the question read, what it resolved, references nothing earlier names)
FOLLOW_UPS = [
    (XZ, "Is it thread safe?", "Is XZ Utils thread safe?", (("it", "XZ Utils"),), ()),
    (XZ, "How much memory does it need?", "How much memory does XZ Utils need?", (("it", "XZ Utils"),), ()),
    (
        APACHE,
        "When was it published?",
        "When was Apache HTTP Server published?",
        (("it", "Apache HTTP Server"),),
        (),
    ),
    (
        APACHE,
        "Can I sue over its patent grant?",
        "Can I sue over Apache HTTP Server's patent grant?",
        (("its", "Apache HTTP Server"),),
        (),
    ),
    (APACHE, "What does this licence say about trademarks?", None, (), ("this licence",)),
    (DEBIAN, "Which group owns this directory?", None, (), ("this directory",)),
    ([], "What all facilities does this library provide?", None, (), ("this library",)),
]


@pytest.mark.parametrize(("history", "question", "read", "resolved", "unresolved"), FOLLOW_UPS)
def test_a_follow_up_is_read_as_rewritten_with_its_references(history, question, read, resolved, unresolved):
    reading = read_question(question, rewrite=rewrite(question, history))
    assert reading.asked == question
    assert reading.question == (read or question)
    assert reading.references.resolved == resolved
    assert reading.references.unresolved == unresolved


def test_a_first_question_refers_to_no_earlier_turn():
    assert read_question("Is zlib thread safe?").references is None


EVERY_QUESTION = sorted(
    {
        row[0]
        for table in (ANSWER_TYPES, FOCUS, SUBJECTS, PERIODS, AMOUNTS_AND_NAMES, PARTS, FRAMING)
        for row in table
    }
)


@pytest.mark.parametrize("question", EVERY_QUESTION)
def test_the_reading_gives_what_parsing_the_question_again_would(question):
    """Stages switched to the reading must decide exactly as they did when they parsed the question."""
    reading = read_question(question)
    assert reading.analysis() == analyse_question(question)
    assert reading.main_analysis() == analyse_question(main_clause(question))
    assert reading.named_period() == question_period(question)
    assert reading.amounts_asked() == quantity_slots(question)
    stored = PipelineRun(question=question, reading=reading).to_json()
    assert PipelineRun.from_json(json.loads(json.dumps(stored))).reading == reading


def _document(external_id: str, title: str, sentences: list[str]) -> ParsedDocument:
    parsed, position = [], 0
    for text in sentences:
        parsed.append(ParsedSentence(text, position, position + len(text)))
        position += len(text) + 1
    return ParsedDocument(external_id, title, " ".join(sentences), tuple(parsed))


@pytest.fixture(scope="module")
def pipeline():
    documents = [
        _document("faq/zlib", "zlib FAQ", ["zlib is thread safe.", "zlib doesn't handle dates."]),
        _document(
            "news/port", "Port report", ["The port's revenue rose in mid-2022.", "It has 1,850 staff."]
        ),
    ]
    index = InMemoryCorpusIndex(documents, HashingEmbedder(), chunk_size=2, chunk_overlap=0)
    return build_pipeline(
        get_preset("default"), index=index, clients=ModelClients(embedder=HashingEmbedder())
    )


def test_retrieval_reads_the_question_once_and_the_run_keeps_the_reading(pipeline):
    question = "What was the port's revenue in mid-2022?"
    run, _ = retrieve_stage(pipeline, PipelineRun(question=question))
    assert run.reading == read_question(question)
    assert run.reading.period.mentions == ("mid-2022",)
    handed_over = PipelineRun.from_json(json.loads(json.dumps(run.to_json())))
    assert handed_over.reading == run.reading
    assert with_reading(handed_over) is handed_over  # a run read once is not read again


def test_a_follow_up_run_reads_its_rewrite():
    turn = rewrite("Is it thread safe?", XZ)
    run = with_reading(
        PipelineRun(question="Is it thread safe?", standalone=turn.question, conversation=turn)
    )
    assert run.reading.question == "Is XZ Utils thread safe?" and run.reading.asked == "Is it thread safe?"
    assert run.reading.references.resolved == (("it", "XZ Utils"),)


def test_a_run_stored_before_readings_were_kept_still_loads_and_is_read_on_demand():
    stored = PipelineRun(question="When did the port of Westmere open?").to_json()
    del stored["reading"]
    run = load_run(json.loads(json.dumps(stored)))
    assert run.reading is None
    assert reading_of(run) == read_question("When did the port of Westmere open?")
    assert isinstance(reading_of(run), QuestionReading)
