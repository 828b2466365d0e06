"""An answer about one place or thing is built from that place's or thing's documents only, and
only documents about the same subject can disagree (``AnswerConfig.subject_documents``,
``qa.pipeline.reading.subjects``).

The rows are regression probes from the issue, not tuning data: on analyst-bench's full corpus
"What is the highest point in Oman?" was answered with Mount Everest from another country's
Factbook entry, and the Apache patent-licence question got a "sources disagree" banner between
the Apache and Mozilla licences. Texts are excerpts of the real documents (the Factbook entries of
analyst-bench, bench/genre/documents); the ranking each row hands the answering stage is the one a
large corpus can produce, where other entries outrank the one asked about. The real embedding model
and the ``default`` preset's answering settings.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from qa.pipeline.config.presets import get_preset
from qa.pipeline.drafting.llm_generation import LLMGenerator
from qa.pipeline.flow.answer_parts import build_answer_parts, build_generator
from qa.pipeline.flow.answering import answer_from_ranking
from qa.pipeline.reading.subjects import documents_on_subject, question_names
from qa.pipeline.search.embedding import SentenceTransformerEmbedder
from tests.qa.pipeline.answering_fakes import ScriptedLLM, make_passage, ranked

OMAN = make_passage(
    "factbook/Oman",
    [
        "Geography: Location: Middle East, bordering the Arabian Sea, Gulf of Oman, and Persian Gulf, "
        "between Yemen and the UAE",
        "Geography: Area - total: 309,500 sq km",
        "Geography: Elevation - highest point: Jabal Shams 3,004 m",
        "Geography: Elevation - lowest point: Arabian Sea 0 m",
        "Geography: Elevation - mean elevation: 310 m",
    ],
    title="Oman",
)
OMAN_HISTORY = make_passage(
    "gold/Oman_history",
    [
        "The inhabitants of the area of present-day Oman have long prospered from Indian Ocean trade.",
        "In the late 18th century, the nascent sultanate in Muscat signed the first in a series of "
        "friendship treaties with Britain.",
    ],
    title="Oman history",
)
NEPAL = make_passage(
    "factbook/Nepal",
    [
        "Geography: Location: Southern Asia, between China and India",
        "Geography: Area - total: 147,181 sq km",
        "Geography: Elevation - highest point: Mount Everest (highest peak in Asia and highest point on "
        "earth above sea level) 8,849 m",
        "Geography: Elevation - lowest point: Kanchan Kalan 70 m",
        "Geography: Elevation - mean elevation: 2,565 m",
    ],
    title="Nepal",
)
CHINA = make_passage(
    "factbook/China",
    [
        "Geography: Location: Eastern Asia, bordering the East China Sea, Korea Bay, Yellow Sea, and "
        "South China Sea, between North Korea and Vietnam",
        "Geography: Elevation - highest point: Mount Everest (highest peak in Asia and highest point on "
        "earth above sea level) 8,849 m",
        "Geography: Elevation - lowest point: Turpan Pendi (Turfan Depression) -154 m",
    ],
    title="China",
)
APACHE = make_passage(
    "apache-2.0",
    [
        "Subject to the terms and conditions of this License, each Contributor hereby grants to You a "
        "perpetual, worldwide, non-exclusive, no-charge, royalty-free, irrevocable (except as stated in "
        "this section) patent license to make, have made, use, offer to sell, sell, import, and otherwise "
        "transfer the Work.",
        "If You institute patent litigation against any entity alleging that the Work constitutes direct "
        "or contributory patent infringement, then any patent licenses granted to You under this License "
        "for that Work shall terminate as of the date such litigation is filed.",
    ],
    title="Apache License Version 2.0",
)
MPL = make_passage(
    "mpl-2.0",
    [
        "The licenses granted in Section 2.1 with respect to any Contribution become effective for each "
        "Contribution on the date the Contributor first distributes such Contribution.",
        "Each Contributor hereby grants You a world-wide, royalty-free, non-exclusive license under Patent "
        "Claims of such Contributor to make, use, sell, offer for sale, have made, import, and otherwise "
        "transfer either its Contributions or its Contributor Version.",
    ],
    title="Mozilla Public License Version 2.0",
)

APACHE_PATENT = "How long does a patent license granted by a contributor last under the Apache License?"

# (question, the ranking the answering stage reads, text the answer must hold, texts it must not hold)
ROWS = [
    # The issue's probe: other countries' entries outrank Oman's; Everest is theirs.
    ("What is the highest point in Oman?", (NEPAL, OMAN_HISTORY, OMAN), ("Jabal Shams",), ("Everest",)),
    ("What is the highest point in Oman?", (CHINA, NEPAL, OMAN), ("Jabal Shams",), ("Everest",)),
    ("What is the lowest point in Nepal?", (CHINA, NEPAL), ("Kanchan Kalan",), ("Turpan",)),
    ("What is the lowest point in China?", (NEPAL, CHINA), ("Turpan",), ("Kanchan",)),
    # The other licence also grants patent licences, on its own terms.
    (APACHE_PATENT, (MPL, APACHE), ("patent license",), ("Mozilla", "Patent Claims of such Contributor")),
    # A question naming nothing restricts nothing: the best-ranked entry answers.
    ("what is the highest point above sea level?", (NEPAL, OMAN), ("Everest",), ()),
]


@pytest.fixture(scope="module")
def embedder():
    return SentenceTransformerEmbedder()


def generator(embedder, *, on: bool):
    return build_generator(replace(get_preset("default").answer, subject_documents=on), embedder, None)


def answer_text(draft) -> str:
    return " ".join(s.text for s in draft.sentences)


@pytest.mark.parametrize(("question", "ranking", "holds", "lacks"), ROWS)
def test_the_answer_comes_from_the_documents_about_what_the_question_names(
    embedder, question, ranking, holds, lacks
):
    draft = generator(embedder, on=True).generate(question, ranked(*ranking))
    text = answer_text(draft)
    assert draft.reason == "" and draft.sentences, draft.notes
    for wanted in holds:
        assert wanted in text
    for unwanted in lacks:
        assert unwanted not in text


def test_switched_off_the_best_ranked_entry_answers_for_another_country(embedder):
    """What the switch changes: without it the Oman question quotes Nepal's Mount Everest."""
    draft = generator(embedder, on=False).generate("What is the highest point in Oman?", ranked(NEPAL, OMAN))
    assert "Everest" in answer_text(draft)


def test_a_window_with_no_document_on_the_subject_gives_no_sentence_and_the_next_window_is_read(embedder):
    question = "What is the highest point in Oman?"
    draft = generator(embedder, on=True).generate(question, ranked(NEPAL, CHINA))
    assert draft.reason == "" and not draft.sentences
    assert draft.notes == ("no document of this window names oman",)

    config = replace(get_preset("default").answer, subject_documents=True, passages_per_attempt=2)
    parts = build_answer_parts(config, embedder, None)
    answered = answer_from_ranking(question, ranked(NEPAL, CHINA, OMAN), parts=parts)
    assert "Jabal Shams" in answered.answer.text
    assert "Everest" not in answered.answer.text
    assert [a.outcome for a in answered.step.attempts] == ["no answer sentences", "verified"]


WESTMERE = make_passage(
    "westmere-profile", ["Military service is compulsory in Westmere for men aged 18."], title="Westmere"
)
EASTLAND = make_passage(
    "eastland-profile", ["Military service is not compulsory in Eastland for men aged 18."], title="Eastland"
)
WESTMERE_TIMES = make_passage(
    "westmere-times",
    ["Military service is not compulsory in Westmere for men aged 18."],
    title="The Westmere Times",
)
MILITARY = "Is military service compulsory in Westmere?"

# (question, ranking, on: whether the sources are said to disagree, off: the same with the switch off)
DISAGREEMENT_ROWS = [
    # Another country's rule is no disagreement about Westmere's ...
    (MILITARY, (WESTMERE, EASTLAND), False, True),
    # ... a second source on Westmere saying the opposite is.
    (MILITARY, (WESTMERE, WESTMERE_TIMES), True, True),
]


@pytest.mark.parametrize(("question", "ranking", "on", "off"), DISAGREEMENT_ROWS)
def test_only_documents_about_the_same_subject_disagree(embedder, question, ranking, on, off):
    for switch, expected in ((True, on), (False, off)):
        config = replace(get_preset("default").answer, subject_documents=switch)
        answered = answer_from_ranking(
            question, ranked(*ranking), parts=build_answer_parts(config, embedder, None)
        )
        assert answered.answer.disagreement is expected, (switch, answered.answer.note)
        assert ("The sources disagree" in answered.answer.note) is expected


# (question, the documents' titles and texts, the documents on its subject; None: it names nothing)
SUBJECT_ROWS = [
    ("What is the highest point in Oman?", {"Oman": "Jabal Shams", "Nepal": "Mount Everest"}, {"Oman"}),
    ("What is the highest point in Oman?", {"Nepal": "Mount Everest", "China": "Mount Everest"}, set()),
    # A title outweighs a mention: Nepal lies "between China and India".
    (
        "What is the lowest point in China?",
        {"China": "Turpan Pendi", "Nepal": "between China and India"},
        {"China"},
    ),
    # Several documents about the subject: all of them.
    (
        "What did Germany say?",
        {"Germany (history)": "In 1990", "Germany": "Berlin", "France": "Paris"},
        {"Germany", "Germany (history)"},
    ),
    # A form of the name counts: "Russian" holds "Russia".
    ("What did Russia say?", {"News": "Russian officials said", "Other": "Officials said"}, {"News"}),
    # Holding more of the names asked about is being more about it.
    (
        APACHE_PATENT,
        {"Apache License": "patent license", "Mozilla Public License": "patent"},
        {"Apache License"},
    ),
    ("what is the highest point?", {"Oman": "Jabal Shams"}, None),
]


@pytest.mark.parametrize(("question", "documents", "expected"), SUBJECT_ROWS)
def test_documents_on_subject(question, documents, expected):
    passages = [make_passage(title, [text], title=title) for title, text in documents.items()]
    found = documents_on_subject(question, [s for p in passages for s in p.sentences])
    assert found == (None if expected is None else frozenset(expected))


def test_question_names_skip_the_first_word_and_small_words():
    assert question_names("What is the highest point in Oman?") == {"oman"}
    assert question_names(APACHE_PATENT) == {"apache", "license"}


def test_the_llm_is_shown_only_the_documents_about_the_subject():
    llm = ScriptedLLM(["The highest point in Oman is Jabal Shams, 3,004 m [1]."])
    generator = LLMGenerator(llm, subject_documents=True)
    draft = generator.generate("What is the highest point in Oman?", ranked(NEPAL, OMAN))
    prompt = " ".join(m["content"] for m in llm.calls[0]["messages"])
    assert "Jabal Shams" in prompt and "Everest" not in prompt
    assert {c.document_id for s in draft.sentences for c in s.citations} == {"factbook/Oman"}

    nothing = ScriptedLLM([])
    draft = LLMGenerator(nothing, subject_documents=True).generate(
        "What is the highest point in Oman?", ranked(NEPAL, CHINA)
    )
    assert not draft.sentences and draft.reason == "" and not nothing.calls
