"""Turns that are neither answered nor refused: a clarifying question, or a partial answer.

Heuristics, labelled so in every note they write (no LLM needed):

- ``clarification``: a turn is *underspecified* when it points at something
  nothing names ("this library", "this California county": a demonstrative
  phrase the conversation memory could not resolve), or names too little to
  search for. The reply is a clarifying question; when the retrieved passages
  name several things of that kind ("California State Library", "Monterey
  Park Bruggemeyer Library"), it offers them.
- ``missing_parts``: a turn is *partial* when the passages cover most of what
  it asks about but not all: words of the question's focus that no top
  passage (nor its title) contains, such as "archaeological" in "the
  difference between primary and archaeological sources" over passages that
  only define primary sources. The answer states what the sources support and
  names what they do not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from qa.pipeline.conversation import Rewrite, rewrite
from qa.pipeline.entities import part_of_speech_tagger
from qa.pipeline.text import META_WORDS, STOPWORDS, content_words, stem, words
from qa.pipeline.trust import trust_models
from qa.pipeline.turn_kind import (  # noqa: F401 - names_missing and only_the_reading are used through turns
    named_of_kind,
    names_missing,
    names_too_little,
    only_the_reading,
    words_put_in,
)
from qa.pipeline.types import UNSUPPORTED, Answer, AnswerSentence, ScoredPassage

# Focus words that are the question's own framing, never something a source must state.
_FRAMING = frozenset(
    stem(w)
    for w in """tell know want need like help please difference different differ compare comparison
    example examples mean meaning way ways thing things work works best good better use used get able
    possible happen happens happened today currently current isn't aren't don't doesn't last come
    seem leave answer recommend next week include call really actually exactly also""".split()
)


@dataclass(frozen=True)
class TurnsConfig:
    """Which of these replies a preset gives. ``partial_max_missing``: a turn missing more focus
    words than this is left to answerability (it is about something else, not partly answered)."""

    clarify: bool = True
    partial: bool = True
    partial_max_missing: int = 2
    # Refuse an "answerable" verdict whose passages lack this many of the question's focus words
    # while its probability stays below ``refuse_missing_below`` (tuned on MTRAG-UN train).
    refuse_missing: int = 3
    refuse_missing_below: float = 0.5
    # Decide a follow-up's reply (ask back, refuse, answer) with the learned turn-kind model
    # (qa.pipeline.turn_kind, fitted on MTRAG-UN train) instead of the rules above and the refusal
    # gates; the rules still word the question. First questions keep the rules. On by default: on
    # train, out of fold (nested CV), refusal F1 0.745 and 58% of underspecified turns asked back,
    # against the rules' 0.667 and 77% in sample (README, "Learned turn kinds").
    learned: bool = True
    # The turn-kind model's JSON (fitted by bench/turn_kinds.py); "" is the one shipped beside the code.
    learned_model: str = ""


@dataclass(frozen=True)
class Clarification:
    question: str  # the clarifying question to ask back
    about: str  # the reference that needs it ("this library"), or "" for a vague question
    options: tuple[str, ...] = ()  # things of that kind the passages name


def clarification(
    question: str,
    conversation: Rewrite | None,
    ranked: Sequence[ScoredPassage],
    *,
    top: int = 8,
    min_options: int = 2,
) -> Clarification | None:
    """A clarifying question when the turn cannot be searched as asked, else None."""
    turn = conversation if conversation is not None else rewrite(question, ())
    if turn.unresolved:
        about = turn.unresolved[0]
        noun, options = _choices(about, ranked[:top], question)
        kind = _kind(about)
        text = f"Which {kind} do you mean?"
        if len(options) >= 2:
            text += " The documents mention " + _listed(options) + "."
        else:
            text += f" Please name the {kind}, so the search can find {_it(kind)}."
        return Clarification(text, about, options)
    for about in turn.definite:
        # "the animal", "the police department": a clarifying question only when the documents
        # name several, so there is a choice to make (heuristic).
        noun, options = _choices(about, ranked[:top], question)
        if len(options) >= min_options:
            text = f"Which {_kind(about)} do you mean? The documents mention {_listed(options)}."
            return Clarification(text, about, options)
    if names_too_little(turn.question, ranked):
        return Clarification(
            "Could you say more about what you would like to know? "
            "The question names too little to search for.",
            "",
        )
    return None


def clarifying_question(
    question: str, conversation: Rewrite | None, ranked: Sequence[ScoredPassage]
) -> Clarification:
    """The clarifying question for a turn already judged underspecified (by the turn-kind model):
    the rules' question when they find the reference, else one about the conversation's subject
    ("Do you mean facilitated diffusion, or something else?"), else a request for more."""
    found = clarification(question, conversation, ranked, min_options=2)
    if found is not None:
        return found
    turn = conversation if conversation is not None else rewrite(question, ())
    if turn.resolved:
        said, meant = turn.resolved[0]
        return Clarification(f"By '{said}', do you mean {meant}, or something else?", said, (meant,))
    for about in turn.definite:
        noun = words(about)[-1]
        it = _it(noun)
        text = f"Which {noun} do you mean? Please name {it}, so the search can find {it}."
        return Clarification(text, about)
    if turn.subject:
        return Clarification(
            f"Is this about {turn.subject}, or something else? Please say what you are asking about.", ""
        )
    return Clarification(
        "Could you say more about what you would like to know? The question names too little to search for.",
        "",
    )


def doubted_reference(conversation: Rewrite | None, missing: Sequence[str]) -> Clarification | None:
    """A question back about how the rewrite read the turn, when what the passages lack is what
    it put in ("its" read as "Star-Spangled Banner", and no passage names it): the reading is in
    doubt, not the corpus, so refusing would blame the documents for a guess (heuristic)."""
    if conversation is None or not missing:
        return None
    lacking = {stem(w) for m in missing for w in words(m)}
    for said, meant in conversation.resolved:
        if not words_put_in(said, meant) & lacking:
            continue
        if conversation.method == "ellipsis":
            # The whole turn was the reference ("what about controlling the number of intents per
            # skill?"): ask about the subject it was completed with, not "By '<the turn>' ...".
            about = conversation.subject or meant
            return Clarification(
                f"Is this about {about}, or something else? Please say what you are asking about.", about
            )
        return Clarification(f"By '{said}', do you mean {meant}, or something else?", said, (meant,))
    for subject in conversation.carried:
        if {stem(w) for w in words(subject)} & lacking:
            return Clarification(
                f"Is this about {subject}, or something else? Please say what you are asking about.", subject
            )
    return None


def _choices(about: str, ranked: Sequence[ScoredPassage], question: str) -> tuple[str, tuple[str, ...]]:
    """(noun, names of that kind in the passages): the noun is the phrase's last word."""
    noun = words(about)[-1]
    return noun, named_of_kind(noun, ranked, exclude=question)


def _kind(about: str) -> str:
    """What to ask "which ...?" about: the reference without its determiner and possessive
    ("this outpatient clinic" -> "outpatient clinic", "the police department's" -> "police
    department")."""
    kept = about.split()[1:] or about.split()
    return re.sub(r"['\u2019]s$", "", " ".join(kept))


def _it(noun: str) -> str:
    """How to refer back to the noun: "Which guidelines do you mean? Please name them"."""
    return "them" if noun.endswith("s") and not noun.endswith(("ss", "us", "is")) else "it"


def _listed(options: Sequence[str]) -> str:
    names = [f"the {o}" if not o.lower().startswith("the ") else o for o in options]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def clarifying_answer(clarify: Clarification, documents: Sequence[str], *, learned: str = "") -> Answer:
    """``learned``: the turn-kind model's reason when it, not the rules, decided to ask."""
    if learned:
        note = f"Asked to clarify (learned turn-kind model, heuristic signals): {learned}."
    else:
        what = (
            f"'{clarify.about}' refers to nothing named earlier" if clarify.about else "the question is vague"
        )
        note = f"Asked to clarify (heuristic): {what}."
    return Answer(
        sentences=(AnswerSentence(clarify.question, (), UNSUPPORTED),),
        refused=False,
        note=note,
        retrieved_documents=tuple(documents),
        kind="underspecified",
    )


# --- partial answers ----------------------------------------------------------------------


def missing_parts(question: str, ranked: Sequence[ScoredPassage], *, top: int = 3) -> tuple[str, ...]:
    """The question's focus words that none of the top passages contains (as asked, not stemmed)."""
    bag: set[str] = set()
    for hit in ranked[:top]:
        bag |= content_words(hit.passage.text) | content_words(hit.passage.document_title)
    missing = []
    actions = _verbs_and_adverbs(question)
    for word in words(question):
        if word in STOPWORDS or word in META_WORDS or len(word) < 4 or word[0].isdigit():
            continue
        if word in actions:
            continue
        stemmed = stem(word)
        if (
            stemmed in _FRAMING
            or stemmed in bag
            or any(b.startswith(stemmed[:6]) for b in bag if len(stemmed) >= 7)
            or _demonym_of(stemmed, bag)
        ):
            continue
        missing.append(word)
    return tuple(dict.fromkeys(missing))


def _verbs_and_adverbs(question: str) -> frozenset[str]:
    """The question's words tagged as verbs or adverbs ("feel", "seeing", "check", "everywhere"):
    what the asker does or how, never a thing a source must name for the question to be answered.
    Empty when no tagger is installed."""
    tagger = part_of_speech_tagger()
    if tagger is None:
        return frozenset()
    found = set()
    for start, tag in tagger(question):
        if tag.startswith(("VB", "RB")):
            found.update(words(question[start:].split(maxsplit=1)[0]))
    return frozenset(found)


_DEMONYM_ENDINGS = ("ese", "ian", "an", "n", "ish", "i")


def _demonym_of(word: str, bag: set[str]) -> bool:
    """Whether the passages name the place the word is formed from: "Japan" covers "Japanese",
    "Australia" "Australian" (stems alone miss it, so a question about the Japanese was refused
    over passages about Japan)."""
    return any(word.startswith(b) and word[len(b) :] in _DEMONYM_ENDINGS for b in bag if len(b) >= 4)


def without_words(question: str, missing: Sequence[str]) -> str:
    """The question with the words no source covers taken out: what the answer can address."""
    drop = {m.lower() for m in missing}
    return " ".join(t for t in question.split() if t.lower().strip("?,.!;:'\"") not in drop)


def partial_answer(answer: Answer, missing: Sequence[str]) -> Answer:
    """The answer with a last sentence naming what the sources do not cover."""
    named = ", ".join(f"'{m}'" for m in missing)
    gap = AnswerSentence(f"The sources do not cover {named}, so that part stays unanswered.", (), UNSUPPORTED)
    return Answer(
        sentences=(*answer.sentences, gap),
        refused=False,
        disagreement=answer.disagreement,
        verified=answer.verified,
        note=(answer.note + " " if answer.note else "") + f"Partial answer (heuristic): nothing on {named}.",
        retrieved_documents=answer.retrieved_documents,
        confidence=answer.confidence,
        kind="partial",
        missing=tuple(missing),
    )


def refusal_for_missing(verdict, missing: Sequence[str], documents: Sequence[str]) -> Answer:
    """A refusal because the passages lack much of what the question asks about (heuristic)."""
    named = ", ".join(f"'{m}'" for m in missing)
    return Answer.refusal(
        f"Refused (heuristic): the passages mention none of {named}, and answerability was "
        f"only {verdict.probability:.2f}.",
        documents,
        confidence=trust_models().of_refusal(verdict.probability).probability,
        kind="unanswerable",
    )


def learned_refusal(verdict, reason: str, documents: Sequence[str]) -> Answer:
    """A refusal the turn-kind model decided (heuristic signals, learned on MTRAG-UN train)."""
    return Answer.refusal(
        f"Refused (learned turn-kind model, heuristic signals): {reason}; answerability "
        f"{verdict.probability:.2f} ({verdict.reason}).",
        documents,
        confidence=trust_models().of_refusal(verdict.probability, by_rule=verdict.by_rule).probability,
        kind="unanswerable",
    )
