"""Answers quote answers on real FAQs, licences and manuals (bench/genre), never their headings.

The genre set's documents (both parts: the seven of the tuning part, the five held out), parsed as
uploads are, through ``default`` in memory with the real embedding model.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.genre import PARTS, load_documents, load_questions
from documents.parsing import parse_bytes
from qa.pipeline.config.parameters import apply_parameters
from qa.pipeline.config.presets import get_preset
from qa.pipeline.core import roles
from qa.pipeline.flow.runner import answer_question
from tests.qa.pipeline.in_memory import in_memory_pipeline


@pytest.fixture(scope="module")
def genre():
    return in_memory_pipeline(load_documents())


@pytest.fixture(scope="module")
def heldout():
    return in_memory_pipeline(load_documents("heldout"))


QUESTIONS = [(part, q) for part in ("tuning", "heldout") for q in load_questions(part)]


@pytest.mark.parametrize(("part", "question"), QUESTIONS, ids=[q.id for _, q in QUESTIONS])
def test_no_answer_quotes_a_heading_title_or_question(request, part, question):
    # Both parts: the held-out one's documents were not parsed or answered while the layout rules
    # were written.
    pipeline = request.getfixturevalue("genre" if part == "tuning" else "heldout")
    answer = answer_question(question.question, pipeline=pipeline).answer
    quoted = [
        (cited.role, cited.text)
        for sentence in ([] if answer.refused else answer.sentences)
        for cited in sentence.citations
        if roles.frames_content(cited.role, cited.text)
    ]
    assert quoted == []


# (question, a text the answer must quote, a text it must not): what a new user saw quoted before
# documents kept their structure.
QUOTES = [
    ("Is zlib Y2K-compliant?", "zlib doesn't handle dates.", "Is zlib Y2K-compliant?"),
    ("Is zlib thread-safe?", "must also be thread-safe", "Is zlib thread-safe?"),
    (
        "What happens to a patent license under the Apache License if I sue a contributor for patent "
        "infringement?",
        "shall terminate as of the date such litigation is filed",
        "Grant of Patent License.",
    ),
    ("Can XZ Utils handle .7z files?", "Use 7-Zip (Windows) or p7zip", "I have many .tar.7z files."),
]


@pytest.mark.parametrize(("question", "quoted", "not_quoted"), QUOTES, ids=[q[0][:40] for q in QUOTES])
def test_a_faq_question_leads_to_its_answer_not_to_itself(genre, question, quoted, not_quoted):
    answer = answer_question(question, pipeline=genre).answer
    assert not answer.refused, answer.note
    texts = [" ".join(s.text.split()) for s in answer.sentences]
    assert any(quoted in text for text in texts), texts
    assert not any(not_quoted == text for text in texts), texts


def test_a_table_row_is_quoted_whole_with_its_column_headers(genre):
    answer = answer_question("What support tier does Node.js give to FreeBSD on x64?", pipeline=genre).answer
    assert not answer.refused, answer.note
    rows = [c.text for s in answer.sentences for c in s.citations if c.role == roles.TABLE_ROW]
    freebsd = [row for row in rows if "Operating System: FreeBSD" in row]
    assert freebsd and "Support Type: Experimental" in freebsd[0], rows


@pytest.mark.parametrize("part", sorted(PARTS))
def test_every_answerable_genre_question_has_a_gold_sentence_in_its_parsed_documents(part):
    """The bench scores citations against the sentences holding a question's evidence: a string the
    parser splits across sentences would leave the question no gold, and score every answer 0."""
    sentences = [s for document in load_documents(part) for s in document.sentences]
    flat = [" ".join(s.text.split()) for s in sentences]
    lacking = [
        q.id
        for q in load_questions(part)
        if q.answerable and not any(" ".join(e.split()) in text for e in q.evidence for text in flat)
    ]
    assert lacking == []


def test_a_preset_of_one_sentence_answers_quotes_only_the_row_that_answers():
    # `default` quotes three sentences of the platform table's section for this question, the FreeBSD
    # row among them; a team whose documents answer in one sentence sets max_answer_sentences.
    question = "What support tier does Node.js give to FreeBSD on x64?"
    documents = load_documents()
    default = answer_question(question, pipeline=in_memory_pipeline(documents)).answer
    short = apply_parameters(get_preset("default"), {"max_answer_sentences": 1})
    answer = answer_question(question, pipeline=in_memory_pipeline(documents, short)).answer
    assert len(default.sentences) > 1
    assert [s.text.split(" | ")[:2] for s in answer.sentences] == [
        ["Operating System: FreeBSD", "Architectures: x64"]
    ]


def test_a_question_whose_subject_no_document_mentions_is_refused_naming_it_not_answered_in_part(genre):
    # It was answered in part, "The sources do not cover 'raspberry'": the missing-words gate refused
    # only at three lacking words (docs/reply.md, the gate chosen on the tuning suite). "How long
    # does it take to build Node.js on a Raspberry Pi?", the same case, is now refused before the
    # gate, by answerability, since chunks stay inside sections.
    question = "How fast does xz decompress on a Raspberry Pi?"
    answer = answer_question(question, pipeline=genre).answer
    assert answer.refused and not answer.cited_sentences
    assert (
        answer.note
        == "Refused: none of the passages found mentions 'Raspberry Pi', which the question asks about."
    )
    before = get_preset("default")
    before = replace(before, turns=replace(before.turns, refuse_missing=3, refuse_missing_below=0.5))
    in_part = answer_question(question, pipeline=in_memory_pipeline(load_documents(), before)).answer
    assert in_part.kind == "partial" and in_part.missing == ("Raspberry Pi",)


def test_a_fact_under_its_own_heading_is_found_not_the_sentences_of_the_section_before(genre):
    """Chunks stay inside a section (chunking.section_windows): the man-db FAQ's "Performance" list
    item was searched in one chunk with the release history before it, and the answer quoted that
    history ("At the time of writing (February 2012), man-db has had ten full releases ...")."""
    answer = answer_question("How much faster is man-db than man at full-text search?", pipeline=genre).answer
    assert not answer.refused, answer.note
    texts = [" ".join(s.text.split()) for s in answer.sentences]
    assert any("at least three times as quickly as man" in text for text in texts), texts


def _profile(country: str, records: list[str]) -> bytes:
    url = f"url: https://www.cia.gov/the-world-factbook/countries/{country.lower()}/"
    return "\n".join([url, *records]).encode()


# Two country profiles as a user uploads them: the World Factbook's text (public domain), one record a
# line with no blank lines between, most of them short and without a full stop.
PROFILES = {
    "oman.txt": _profile(
        "Oman",
        [
            "Geography: Location: Middle East, bordering the Arabian Sea, Gulf of Oman, and Persian Gulf, "
            "between Yemen and the UAE",
            "Geography: Area - total: 309,500 sq km",
            "Geography: Climate: dry desert; hot, humid along coast; hot, dry interior; strong southwest "
            "summer monsoon (May to September) in far south",
            "Geography: Elevation - highest point: Jabal Shams 3,004 m",
            "Geography: Elevation - lowest point: Arabian Sea 0 m",
            "Geography: Elevation - mean elevation: 310 m",
            "People and Society: Population - total: 3,901,992",
            "Government: Capital - name: Muscat",
        ],
    ),
    "nepal.txt": _profile(
        "Nepal",
        [
            "Geography: Location: Southern Asia, between China and India",
            "Geography: Area - total: 147,181 sq km",
            "Geography: Climate: varies from cool summers and severe winters in north to subtropical "
            "summers and mild winters in south",
            "Geography: Elevation - highest point: Mount Everest (highest peak in Asia and highest point "
            "on earth above sea level) 8,849 m",
            "Geography: Elevation - lowest point: Kanchan Kalan 70 m",
            "Geography: Elevation - mean elevation: 2,565 m",
            "People and Society: Population - total: 31,122,387",
            "Government: Capital - name: Kathmandu",
        ],
    ),
}


def test_a_record_of_an_uploaded_country_profile_is_quoted_as_the_answer():
    # Each short record was a heading, so none could be quoted: the Oman question was answered from
    # another record, and Everest is Nepal's, not Oman's.
    documents = [doc for name, data in PROFILES.items() for doc in parse_bytes(data, name)]
    answer = answer_question(
        "What is the highest point in Oman?", pipeline=in_memory_pipeline(documents)
    ).answer
    assert not answer.refused, answer.note
    assert "Jabal Shams 3,004 m" in answer.sentences[0].text
    assert not any("Everest" in s.text for s in answer.sentences)
