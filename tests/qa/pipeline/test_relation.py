"""Each answer sentence's relation to the question (answers / background / off the question) and the
badges the reply shows for it."""

from __future__ import annotations

import pytest

from qa.pipeline.checks.relation import RelationThresholds, relation_of, relation_scores, with_relations
from qa.pipeline.checks.reply import label_words, sentence_label, sentence_relation
from qa.pipeline.core.types import Answer, AnswerSentence, SourceSentence
from tests.qa.pipeline.answering_fakes import BagOfWordsEmbedder

THRESHOLDS = RelationThresholds(answers=0.6, background=0.3)


@pytest.mark.parametrize(
    ("score", "relation"),
    [
        (0.9, "answers"),
        (0.6, "answers"),
        (0.59, "background"),
        (0.3, "background"),
        (0.29, "off_question"),
        (0.0, "off_question"),
    ],
)
def test_a_score_reads_as_a_relation_at_the_thresholds(score, relation):
    assert relation_of(score, THRESHOLDS) == relation


def _sentence(text: str, title: str = "Apache License 2.0") -> AnswerSentence:
    return AnswerSentence(text, (SourceSentence(1, "apache", title, 0, "s1", text),), "supported")


QUESTION = "How long does the patent license granted by a contributor last?"
# (sentence, the relation it must get): the patent grant's duration answers; the copyright grant
# shares the frame but not the focus; the warranty disclaimer is about something else.
SENTENCES = [
    (
        "The patent license granted by each contributor is perpetual and lasts as long as the patent.",
        "answers",
    ),
    ("Each contributor grants a perpetual copyright license to reproduce the work.", "background"),
    ("Zlib does not handle dates and is unaffected by the year 2000.", "off_question"),
]


def test_the_sentences_of_one_answer_are_ordered_answers_background_off_question():
    answer = Answer(tuple(_sentence(text) for text, _ in SENTENCES))
    labelled = with_relations(
        QUESTION, answer, BagOfWordsEmbedder(), thresholds=RelationThresholds(0.55, 0.25)
    )
    scores = [s.relation_score for s in labelled.sentences]
    assert scores == sorted(scores, reverse=True)
    assert [s.relation for s in labelled.sentences] == [relation for _, relation in SENTENCES]


def test_a_refusal_and_the_pipelines_own_uncited_sentence_get_no_relation():
    refusal = Answer.refusal("nothing")
    assert with_relations(QUESTION, refusal, BagOfWordsEmbedder()) is refusal
    gap = AnswerSentence("The sources do not cover 'the uid', so that part stays unanswered.", ())
    labelled = with_relations(QUESTION, Answer((_sentence(SENTENCES[0][0]), gap)), BagOfWordsEmbedder())
    assert labelled.sentences[0].relation and labelled.sentences[1].relation == ""


def test_the_document_title_counts_as_what_a_quoted_sentence_is_about():
    """A sentence of the zlib FAQ is about zlib even when it says "the library"."""
    embedder = BagOfWordsEmbedder()
    plain, titled = relation_scores(
        "Is zlib thread safe?",
        [
            _sentence("The library is thread safe.", "Notes"),
            _sentence("The library is thread safe.", "zlib FAQ"),
        ],
        embedder,
    )
    assert titled > plain


# (support, generator, cited, outcome, contradicted, label, words shown)
LABELS = [
    ("supported", "extractive", True, "answer", False, "quote", "quote"),
    ("supported", "llm", True, "answer", False, "supported", "supported by its citation"),
    ("unsupported", "llm", True, "answer", True, "contradicted", "contradicts its citation"),
    ("partial", "llm", True, "partial", False, "partial", "partly supported by its citation"),
    # Not shown as an answer: no badge at all, green or otherwise.
    ("supported", "llm", True, "low_confidence", False, None, ""),
    ("supported", "extractive", True, "refused", False, None, ""),
    ("unsupported", "llm", True, "ask_back", True, None, ""),
]


@pytest.mark.parametrize(
    ("support", "generator", "cited", "outcome", "contradicted", "label", "words"), LABELS
)
def test_the_support_badge(support, generator, cited, outcome, contradicted, label, words):
    shown = sentence_label(
        support, generator=generator, cited=cited, outcome=outcome, contradicted=contradicted
    )
    assert shown == label
    assert label_words(shown) == words


@pytest.mark.parametrize(
    ("relation", "outcome", "shown"),
    [
        ("answers", "answer", "answers"),
        ("off_question", "partial", "off_question"),
        ("background", "answer", "background"),
        ("answers", "low_confidence", None),  # no "answers the question" under a doubtful reply
        ("answers", "refused", None),
        ("", "answer", None),  # stored before relations existed
    ],
)
def test_the_relation_badge_only_on_a_reply_shown_as_an_answer(relation, outcome, shown):
    assert sentence_relation(relation, outcome=outcome) == shown


def test_a_contradiction_is_shown_with_what_differs():
    words = label_words("contradicted", "the claim says 'ten times', the source says 'three times'")
    assert words == "contradicts its citation: the claim says 'ten times', the source says 'three times'"
