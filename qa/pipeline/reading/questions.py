"""What a question asks for: its answer type and the words an answer must be about.

A rule-based analyser, deliberately small. It feeds answerability (does the
evidence hold an answer of the right kind?) and answer relevance (does the
answer state one?). "What was the population of Dominica in 2020?" asks for a
number whose measure is "population": four sentences of colonial history hold
years but no population figure, so they do not answer it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from qa.pipeline.core.lexicon import (
    CHANGE_DIRECTIONS,
    COPULAS,
    CURRENT_WORDS,
    GENERIC_MEASURES,
    HOW_MEASURE_ADJECTIVES,
    MEASURE_HEAD_NOUNS,
    MEASURE_NOUNS,
    MEASURE_SYNONYMS,
    MONTH_NAME_PATTERN,
    NOT_A_SUBJECT_WORDS,
    NUMBER_WORDS,
    OVERVIEW_PATTERN,
    PAST_HOLDER_WORDS,
    PERSON_NOUNS,
    PERSON_WH_WORDS,
    PLACE_NOUNS,
    QUESTION_WORDS,
    SLOT_FILLER_WORDS,
    TIME_NOUNS,
    TIME_PREPOSITIONS,
    alternation,
)
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.protocols import EntityTagger
from qa.pipeline.core.text import (
    META_WORDS,
    NEXT_PART,
    STOPWORDS,
    QuantitySlot,
    capitalised_names,
    has_quantity,
    number_mentions,
    quantity_slots,
    stem,
    words,
    years_named,
)
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.reading.entities import PERSON_LABELS, names_a_new_entity, refers_to_titled_person

AnswerType = Literal["number", "date", "person", "place", "other"]

_DATE = re.compile(
    rf"^\s*(?:when\b|{alternation(TIME_PREPOSITIONS)}?\s*(?:what|which)\s+{alternation(TIME_NOUNS)}\b|"
    r"how long ago\b)",
    re.IGNORECASE,
)
_PERSON = re.compile(
    rf"\b{alternation(PERSON_WH_WORDS)}\b|\b(?:what|which)\s+{alternation(PERSON_NOUNS)}\b",
    re.IGNORECASE,
)
# "Who is the current prime minister": a sentence naming the first or a former one does not answer it.
_CURRENT = re.compile(rf"\b(?:current(?:ly)?|{'|'.join(CURRENT_WORDS)})\b", re.IGNORECASE)
_PAST_HOLDER = PAST_HOLDER_WORDS
_PLACE = re.compile(
    rf"^\s*where\b|\b(?:what|which)\s+{alternation(PLACE_NOUNS)}\b|\bwhere\b",
    re.IGNORECASE,
)
# "how long", "how far", ... and "what is the population of ...": a measure the answer must state.
_HOW_MEASURE = re.compile(rf"\bhow\s+({'|'.join(HOW_MEASURE_ADJECTIVES)})\b", re.IGNORECASE)
MEASURE_WORDS = frozenset(stem(w) for w in MEASURE_NOUNS)
_MEASURE_SYNONYMS = MEASURE_SYNONYMS
# "the total number of jobs": the measure is what is counted (the quantity slot's focus), not "number".
_GENERIC_MEASURES = GENERIC_MEASURES
_MEASURE_HEAD = re.compile(
    rf"\b(?:what|which)\s+(?:{'|'.join((*COPULAS, 'will be', 'has been'))})?\s*(?:the\s+)?"
    rf"(?:[\w'\u2019]+\s+){{0,2}}?({'|'.join(MEASURE_HEAD_NOUNS)})\b",
    re.IGNORECASE,
)
_MONTHS = re.compile(
    rf"\b{MONTH_NAME_PATTERN}\b|\bcentury\b|\bdecade\b|\b1[0-9]{{3}}s?\b|\b20[0-9]{{2}}s?\b",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(stem(w) for w in QUESTION_WORDS)
# "Tell me about the port.", "What do the sources say about the floods?": the question asks what the
# sources say about a subject, not for one fact, and its framing names nothing an answer must be about.
_OVERVIEW = re.compile(OVERVIEW_PATTERN, re.IGNORECASE)


def overview_subject(question: str) -> str | None:
    """What an overview question asks about ("the port" in "Tell me about the port."); None for a
    question asking for something in particular."""
    match = _OVERVIEW.match(question)
    return match["subject"].strip(" ?.!") if match else None


@dataclass(frozen=True)
class QuestionAnalysis:
    """``focus``: stemmed content words an answer must be about; ``measure``: the stemmed measure
    word a number answer must mention ("population"), empty when the question names none."""

    question: str
    answer_type: AnswerType
    focus: frozenset[str]
    measure: frozenset[str]
    parts: int  # clauses joined by "and"/"or" that each ask something
    years: frozenset[float] = frozenset()  # years the question names ("in 2020")
    overview: bool = False  # asks what the sources say about a subject (``overview_subject``)

    @property
    def vague(self) -> bool:
        """Too little to search for: "what about it?", "tell me more"."""
        return len(self.focus) <= 1


def analyse_question(question: str) -> QuestionAnalysis:
    answer_type: AnswerType = "other"
    measure: frozenset[str] = frozenset()
    slots = quantity_slots(question)
    head = _MEASURE_HEAD.search(question)
    if _DATE.search(question):
        answer_type = "date"
    elif slots or _HOW_MEASURE.search(question) or head:
        answer_type = "number"
        if head and head.group(1).lower() not in _GENERIC_MEASURES:
            named = words(head.group(1))
            synonyms = {s for w in named for s in _MEASURE_SYNONYMS.get(w, ())}
            measure = frozenset(stem(w) for w in [*named, *synonyms])
        elif slots:
            measure = slots[0].focus
    elif _PERSON.search(question):
        answer_type = "person"
    elif _PLACE.search(question):
        answer_type = "place"
    subject = overview_subject(question)
    focus = (
        frozenset(
            stem(w)
            for w in words(subject or question)
            if w not in STOPWORDS and w not in META_WORDS and len(w) > 1 and not w[0].isdigit()
        )
        - _QUESTION_WORDS
    )
    parts = 1 + len(NEXT_PART.findall(question))
    years = years_named(question)
    return QuestionAnalysis(question, answer_type, focus, measure, parts, years, subject is not None)


def states_answer_type(
    analysis: QuestionAnalysis, sentence: str, title: str = "", *, models: PipelineModels | None = None
) -> bool:
    """Whether the sentence states something of the kind the question asks for.

    A number question's sentence must state an amount and, when the question
    names a measure, mention it; a date question's a year, month or period;
    a person or place question's a name the question does not already use (for a
    person, where spaCy is installed: a PERSON, ORG or NORP entity, "Hurricane David"
    names no one; or the person the sentence's document ``title`` names, referred to
    by a pronoun or part of the name; never a first or former holder when the
    question asks for the current one).
    "other" questions are satisfied by any sentence. ``models``: where the entity tagger comes
    from (None: ``default_models()``).
    """
    if analysis.answer_type == "number":
        if not has_quantity(sentence):
            return False
        sentence_words = {stem(w) for w in words(sentence)}
        if analysis.measure and analysis.years:
            # "the population of Dominica in 2020": a figure for another year is not the answer.
            if not analysis.years & years_named(sentence):
                return False
        return (
            not analysis.measure
            or bool(analysis.measure & sentence_words)
            or _percent_for(analysis, sentence)
        )
    if analysis.answer_type == "date":
        return bool(_MONTHS.search(sentence)) or any(k == "year" for _, k, _, _ in number_mentions(sentence))
    if analysis.answer_type == "person":
        tagged = _names_the_person(analysis, sentence, title, (models or default_models()).entities)
        if tagged is not None:
            return tagged
    if analysis.answer_type in ("person", "place"):
        asked = {w for w in words(analysis.question)}
        return bool(capitalised_names(sentence) - asked)
    return True


def _names_the_person(
    analysis: QuestionAnalysis, sentence: str, title: str, tag: EntityTagger | None
) -> bool | None:
    """A person question's test where spaCy is installed (None where it is not)."""
    tagged = _names_someone(analysis, sentence, title, tag)
    if tagged and _CURRENT.search(analysis.question) and _names_a_past_holder(analysis, sentence):
        return False
    return tagged


def _names_someone(
    analysis: QuestionAnalysis, sentence: str, title: str, tag: EntityTagger | None
) -> bool | None:
    tagged = names_a_new_entity(sentence, analysis.question, PERSON_LABELS, tag)
    if tagged is None:
        return None
    if not tagged and title:
        tagged = bool(refers_to_titled_person(sentence, title, analysis.question, tag))
    return tagged


def names_only_a_past_holder(
    analysis: QuestionAnalysis, sentence: str, title: str = "", *, models: PipelineModels | None = None
) -> bool:
    """The question asks who holds something now and the sentence names someone only as a first or
    former holder: what an analyst should be told when such an answer is refused."""
    return (
        analysis.answer_type == "person"
        and bool(_CURRENT.search(analysis.question))
        and bool(_names_someone(analysis, sentence, title, (models or default_models()).entities))
        and _names_a_past_holder(analysis, sentence)
    )


def _names_a_past_holder(analysis: QuestionAnalysis, sentence: str, *, window: int = 2) -> bool:
    """ "its first prime minister", "the former president": a past-holder word just before a word of
    the question (the office). "The first woman to hold the office" says nothing about when."""
    # The past-holder words are looked up as written: stemmed, "previous", "founding" and
    # "outgoing" would never match; the office words after them are stemmed, as the focus is.
    tokens = words(sentence)
    stems = [stem(w) for w in tokens]
    return any(
        word in _PAST_HOLDER and analysis.focus & set(stems[i + 1 : i + 1 + window])
        for i, word in enumerate(tokens)
    )


def _percent_for(analysis: QuestionAnalysis, sentence: str) -> bool:
    """A percentage answers a question about a share or rate, and a "how much" question too: "How
    much money do I need to put down for a mortgage?" is answered by "Put down 20% to pay no PMI"."""
    wants_percent = analysis.measure & {stem("percentage"), stem("percent"), stem("share"), stem("rate")}
    return bool(wants_percent or _HOW_MUCH.search(analysis.question)) and any(
        k == "percent" for _, k, _, _ in number_mentions(sentence)
    )


_HOW_MUCH = re.compile(r"\bhow much\b", re.IGNORECASE)


def slot_states_amount(slot: QuantitySlot, sentence: str, title: str = "", *, window: int = 4) -> bool:
    """Stricter than ``QuantitySlot.satisfied_by``, for deciding answerability.

    The amount must be attached to the counted thing: one of the slot's first
    two focus words ("cruise ships") within ``window`` words after a number
    ("19 stations", "3.3 million more ballots"); and the sentence (or its
    title) must share another word of the slot that is not a capitalised name
    (names are the topic, present everywhere). "The port handled 4.2 million
    containers" counts no ships; "a population of 3.1 million people" says
    nothing about people who died in a flood. Percentages attach to "%", not
    to the noun, so for them the focus word may be anywhere in the sentence.
    """
    if not slot.satisfied_by(sentence + " " + title) or not has_quantity(sentence):
        return False
    names = {m.lower() for m in re.findall(r"\b[A-Z][a-z]+", slot.phrase)}
    focus = [
        stem(w)
        for w in words(slot.phrase)
        if w not in STOPWORDS and w not in META_WORDS and not w[0].isdigit() and len(w) > 1 and w not in names
    ]
    focus = [w for w in dict.fromkeys(focus) if w not in _SLOT_FILLER_STEMS]
    if not focus:
        return True
    tokens = [stem(w) for w in words(sentence)]
    heads = set(focus[:2])
    if slot.kind == "percent":
        attached = bool(heads & set(tokens))
    elif _HOW_MUCH.match(slot.phrase) and any(
        kind == "percent" for _, kind, _, _ in number_mentions(sentence)
    ):
        # A rate is an amount of something, and its noun is seldom the one the question counts in
        # ("money" in "how much money ... to put down"), so any word of the slot attaches it.
        attached = bool(set(focus) & set(tokens))
    else:
        numeric = [i for i, w in enumerate(tokens) if w[0].isdigit() or w in _COUNT_WORDS]
        attached = any(heads & set(tokens[i + 1 : i + 1 + window]) for i in numeric)
    others = set(focus) - heads
    bag = set(tokens) | {stem(w) for w in words(title)}
    # Prefixes, not only equal stems: the tiny stemmer maps "handled" to "handl" but "handle" to itself.
    return attached and (not others or any(_same_word(w, b) for w in others for b in bag))


def _same_word(a: str, b: str) -> bool:
    if a == b or (min(len(a), len(b)) >= 5 and a[:5] == b[:5]):
        return True
    return any(a in group and b in group for group in _CHANGES)


# Words for one direction of change, any of which a source may use for another: "How much did the
# container volume grow in 2024?" is answered by "... 4.2 million containers in 2024, an increase of
# 6 percent", and was refused because no sentence said "grow".
_CHANGES = tuple(frozenset(stem(w) for w in group.split()) for group in CHANGE_DIRECTIONS)


# text.py's slot fillers and "more" ("how many more staff").
_SLOT_FILLER_STEMS = frozenset(stem(w) for w in (*SLOT_FILLER_WORDS, "more"))
# text.py's number words without "half" and with "dozens".
_COUNT_WORDS = frozenset(stem(w) for w in NUMBER_WORDS | {"dozens"})
_NOT_A_SUBJECT = frozenset(stem(w) for w in NOT_A_SUBJECT_WORDS)


def names_too_little(
    question: str,
    ranked: Sequence[ScoredPassage],
    *,
    top: int = 3,
    analysis: QuestionAnalysis | None = None,
) -> bool:
    """Whether a turn gives nothing to search for ("tell me more", "what about it?",
    "Interesting."). A turn of one subject word the best passages contain ("Photosynthesis?",
    "What is SSML?") asks about that subject, and is answered, not asked back; so does a turn
    naming a year ("What happened in 1994?" was asked back). An overview of one subject word is
    never too little ("Tell me about the army." names the army, which the sources may lack).
    ``analysis``: the question's, when the caller has read it already."""
    analysis = analysis or analyse_question(question)
    focus = analysis.focus
    if len(focus) > 1 or analysis.years:
        return False
    subject = focus - _NOT_A_SUBJECT
    if not subject:
        return True
    if analysis.overview:
        return False
    found = set()
    for hit in ranked[:top]:
        found |= {stem(w) for w in words(hit.passage.text + " " + hit.passage.document_title)}
    return not subject <= found
