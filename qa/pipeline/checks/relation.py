"""How each answer sentence bears on the question: it answers it, gives background, or is off it.

A reader takes a sentence shown under a question as an answer to it; a quoted sentence can be true
to its source and still be about something else (the copyright grant under a question about the
patent grant). One signal per sentence decides: the answer check's relevance
(``relevance.answer_relevance``) computed for the sentence alone,

    score = 0.5 * cosine(question, sentence) + 0.5 * share of the question's focus words the
            sentence (or the title of the document it cites) uses

and two thresholds chosen on a tuning set by bench/sentence_relation.py (docs/reply.md): at or
above ``answers`` the sentence is labelled "answers"; below ``background`` it is "off_question";
between, "background". With the LLM judge (``TrustConfig.llm_judge_relevance``, an LLM configured)
the judge's P(yes) for "Does this sentence answer the question?" (``llm_judge.SentenceJudge``) joins it:

    judged score = 0.5 * score + 0.5 * P(yes)

labelled with ``JUDGED_THRESHOLDS``, chosen by the same rules on the same sets
(bench/llm_judge_sentences.py); a sentence the judge failed on keeps the score alone and its note says
why. The label is presentation: it never refuses or drops a sentence (the reply
decision in qa.pipeline.checks.reply decides what is shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from qa.pipeline.checks.llm_judge import SentenceJudge
from qa.pipeline.core.protocols import Embedder
from qa.pipeline.core.text import content_words, cosine_matrix
from qa.pipeline.core.types import Answer, AnswerSentence
from qa.pipeline.reading.questions import QuestionAnalysis, analyse_question

Relation = Literal["answers", "background", "off_question"]
ANSWERS: Relation = "answers"
BACKGROUND: Relation = "background"
OFF_QUESTION: Relation = "off_question"
RELATIONS: tuple[Relation, ...] = (ANSWERS, BACKGROUND, OFF_QUESTION)

# Chosen by bench/sentence_relation.py on the genre set and CLAPNQ-dev (docs/reply.md): ``answers`` is
# the lowest threshold at which at least 65% of the sentences labelled "answers" are gold answer
# sentences on both sets (genre 67%, CLAPNQ-dev 71%; they are 42% and 16% of the gold sentences, the
# rest read "background"); ``background`` the highest under which at most 5% of gold answer sentences
# fall (CLAPNQ-dev 4.7%, genre 0%). The score ranks weakly (AUC 0.77 genre, 0.70 CLAPNQ-dev): a
# precise "answers" badge costs recall, which the docs say.
DEFAULT_ANSWERS = 0.725
DEFAULT_BACKGROUND = 0.375
JUDGED_ANSWERS = 0.6
JUDGED_BACKGROUND = 0.35


@dataclass(frozen=True)
class RelationThresholds:
    answers: float = DEFAULT_ANSWERS
    background: float = DEFAULT_BACKGROUND


# The thresholds of the judged score (the module docstring), chosen as ``DEFAULT_ANSWERS`` and
# ``DEFAULT_BACKGROUND`` were, on the rows the local 1.5B model judged (bench/llm_judge_sentences.py).
JUDGED_THRESHOLDS = RelationThresholds(answers=JUDGED_ANSWERS, background=JUDGED_BACKGROUND)
JUDGE_WEIGHT = 0.5


def judged_score(score: float, p_yes: float) -> float:
    return round((1 - JUDGE_WEIGHT) * score + JUDGE_WEIGHT * p_yes, 4)


def relation_of(score: float, thresholds: RelationThresholds = RelationThresholds()) -> Relation:
    if score >= thresholds.answers:
        return ANSWERS
    return BACKGROUND if score >= thresholds.background else OFF_QUESTION


def relation_scores(
    question: str,
    sentences: Sequence[AnswerSentence],
    embedder: Embedder,
    *,
    analysis: QuestionAnalysis | None = None,
) -> tuple[float, ...]:
    """The relevance of each sentence alone to the question (the module docstring's score)."""
    if not sentences:
        return ()
    analysis = analysis or analyse_question(question)
    vectors = np.asarray(embedder.encode([question] + [s.text for s in sentences]), dtype=np.float64)
    cosines = cosine_matrix(vectors[:1], vectors[1:])[0]
    scores = []
    for sentence, cosine in zip(sentences, cosines, strict=True):
        bag = content_words(sentence.text)
        for cited in sentence.citations:
            bag |= content_words(cited.document_title)
        focus = len(analysis.focus & bag) / len(analysis.focus) if analysis.focus else 1.0
        scores.append(round(0.5 * float(cosine) + 0.5 * focus, 4))
    return tuple(scores)


def with_relations(
    question: str,
    answer: Answer,
    embedder: Embedder,
    *,
    thresholds: RelationThresholds = RelationThresholds(),
    analysis: QuestionAnalysis | None = None,
    judge: SentenceJudge | None = None,
    judged_thresholds: RelationThresholds = JUDGED_THRESHOLDS,
) -> Answer:
    """``answer`` with each sentence's relation to the question; a refusal or a question back as is.
    ``judge``: the LLM judge, asked once per cited sentence (None: the score alone)."""
    if answer.refused or answer.kind == "underspecified" or not answer.sentences:
        return answer
    # An uncited sentence is the pipeline's own ("The sources do not cover ..."), not evidence.
    cited = [s for s in answer.sentences if s.citations]
    scores = dict(
        zip(map(id, cited), relation_scores(question, cited, embedder, analysis=analysis), strict=True)
    )
    sentences = tuple(
        _related(question, sentence, scores[id(sentence)], thresholds, judge, judged_thresholds)
        if id(sentence) in scores
        else sentence
        for sentence in answer.sentences
    )
    return replace(answer, sentences=sentences)


def _related(
    question: str,
    sentence: AnswerSentence,
    score: float,
    thresholds: RelationThresholds,
    judge: SentenceJudge | None,
    judged_thresholds: RelationThresholds,
) -> AnswerSentence:
    if judge is None:
        return replace(sentence, relation=relation_of(score, thresholds), relation_score=score)
    title = sentence.citations[0].document_title if sentence.citations else ""
    reading = judge.relevance(question, sentence.text, title)
    if reading.p_yes is None:
        return replace(
            sentence,
            relation=relation_of(score, thresholds),
            relation_score=score,
            relation_note=f"LLM judge {judge.name} failed: {reading.error}",
        )
    combined = judged_score(score, reading.p_yes)
    return replace(
        sentence,
        relation=relation_of(combined, judged_thresholds),
        relation_score=combined,
        relation_judge=round(reading.p_yes, 4),
    )
