"""Turns that are neither answered nor refused: a clarifying question.

Heuristics, labelled so in every note they write (no LLM needed):

- ``clarification``: a turn is *underspecified* when it points at something
  nothing names ("this library", "this California county": a demonstrative
  phrase the conversation memory could not resolve), or names too little to
  search for. The reply is a clarifying question; when the retrieved passages
  name several things of that kind ("California State Library", "Monterey
  Park Bruggemeyer Library"), it offers them.

What the sources lack, the partial answers that name it and the refusals for it are in ``gaps``.
``TurnsConfig`` says which of these replies a preset gives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from qa.pipeline.core import lexicon
from qa.pipeline.core.model_parts import PipelineModels
from qa.pipeline.core.text import STOPWORDS, stem, words
from qa.pipeline.core.types import UNSUPPORTED, Answer, AnswerSentence, ScoredPassage
from qa.pipeline.dialogue.conversation import Rewrite, rewrite
from qa.pipeline.dialogue.turn_kind import (
    named_of_kind,
    names_too_little,
    words_put_in,
)


@dataclass(frozen=True)
class TurnsConfig:
    """Which of these replies a preset gives. ``partial_max_missing``: a turn missing more focus
    words than this is left to answerability (it is about something else, not partly answered)."""

    clarify: bool = True
    partial: bool = True
    partial_max_missing: int = 2
    # Refuse an "answerable" verdict whose passages lack this many of the question's focus words
    # while its probability stays below ``refuse_missing_below``. Chosen on the whole tuning suite
    # (bench/missing_words_gate.py, docs/reply.md): one word below 0.65 turns low-probability answers
    # in part into refusals, right 19 times in 26 there (MTRAG-UN train alone had chosen 3 and 0.5).
    refuse_missing: int = 1
    refuse_missing_below: float = 0.65
    # Decide a follow-up's reply (ask back, refuse, answer) with the learned turn-kind model
    # (qa.pipeline.dialogue.turn_kind, fitted on MTRAG-UN train) instead of the rules above and the refusal
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
    why: str = ""  # the rule that asked, for the note (the default one's when empty)


def leaves_open(conversation: Rewrite | None) -> bool:
    """Whether the turn holds a reference its reader must fill in: a pronoun or demonstrative the
    rewrite read from the conversation ("it", "this outpatient clinic"), one it could not read
    ("this language"), or a "the X" nothing named. A subject the rewrite only appended to a short
    question ("What do you mean by binary options? (Forex)") is context, not a reference."""
    if conversation is None:
        return False
    return bool(
        conversation.resolved
        or conversation.unresolved
        or conversation.definite
        or conversation.open_references
    )


def ambiguous_reference(
    question: str,
    conversation: Rewrite | None,
    ranked: Sequence[ScoredPassage],
    *,
    models: PipelineModels | None = None,
) -> Clarification | None:
    """A clarifying question when the turn asks about "the <kind>" that nothing pins down
    (``Rewrite.open_references``: "the fast food chain") and the passages describe several things
    of that kind (Jack in the Box, Chipotle Mexican Grill, In-N-Out Burger): which one is a choice
    only the asker can make. None when the documents describe one or none (then the reference is
    as good as named, or answerability judges the turn). Heuristic."""
    turn = conversation if conversation is not None else rewrite(question, (), models=models)
    for about in turn.open_references:
        noun = words(about)[-1]
        options = things_of_kind(noun, ranked, question)
        if len(options) >= 2:
            kind = _kind(about)
            return Clarification(
                f"Which {kind} do you mean? The documents mention {_listed(options, noun)}.",
                about,
                options,
                why=f"'{about}' could be any of {len(options)} things of that kind the documents describe",
            )
    return None


def things_of_kind(noun: str, ranked: Sequence[ScoredPassage], question: str) -> tuple[str, ...]:
    """Names of things of the ``noun``'s kind among the top passages, at most four: names ending in
    the noun ("Sampson State Park" for "park"), then documents titled by a name whose opening (or
    title) uses the noun ("Jack in the Box ... is an American fast-food restaurant chain")."""
    found: list[str] = []
    # "Benz Stadium" is a piece of "Mercedes-Benz Stadium" (a name run cut at a hyphen), not a
    # second stadium.
    for name in (
        *named_of_kind(noun, ranked[:8], exclude=question),
        *titled_of_kind(noun, ranked[:5], question),
    ):
        if not any(name.lower() in known.lower() or known.lower() in name.lower() for known in found):
            found.append(name)
    return tuple(found[:4])


def titled_of_kind(noun: str, ranked: Sequence[ScoredPassage], question: str) -> tuple[str, ...]:
    """Distinct document titles that are names ("Kobe Bryant", "Spanish language (Spain)" shown
    without its parenthesis) whose passage opens by saying what it is with the noun, or whose title
    holds it. Titles that are headings or sentences ("Services To the Public - California State
    Library", a forum post) are no one's name and never offered."""
    wanted = stem(noun.lower())
    titles: list[str] = []
    for hit in ranked:
        title = _PARENTHESIS.sub(" ", hit.passage.document_title).strip()
        if not _name_like(title, wanted) or title.lower() in question.lower() or title in titles:
            continue
        if wanted in {stem(w) for w in words(title)} or _defines_as(hit.passage.text[:_OPENING], wanted):
            titles.append(title)
    return tuple(titles)


def _defines_as(opening: str, noun: str) -> bool:
    """Whether a sentence of the opening says what its subject is with the noun: "... is an American
    fast-food restaurant chain" for "chain" ("The German Shepherd ... is a breed of ... dog" is not a
    language, though "English language" comes up a sentence later)."""
    for sentence in _SENTENCE.split(opening):
        found = _COPULA.search(sentence)
        if found and noun in {stem(w) for w in words(sentence[found.end() :])}:
            return True
    return False


_PARENTHESIS = re.compile(r"\s*\([^)]*\)")
# Characters of a passage that say what its subject is ("Kobe Bean Bryant (born August 23, 1978) is
# an American retired professional basketball player").
_OPENING = 300
# A path, a heading's separator or a question: a document's title that is not a thing's name.
_NOT_IN_NAMES = re.compile(r"[/|:?!]")
_SENTENCE = re.compile(r"(?<=\w)\s?\.\s+(?=[A-Z])")
_COPULA = re.compile(
    rf"\b{lexicon.alternation(lexicon.COPULAS)}\s+{lexicon.alternation(lexicon.ARTICLES_AFTER_COPULA)}\b",
    re.IGNORECASE,
)


def _name_like(title: str, noun: str) -> bool:
    """A title of at most six words that starts capitalised and whose other lower-case words are
    function words or the kind itself ("Jack in the Box", "Spanish language")."""
    tokens = title.split()
    if not tokens or len(tokens) > 6 or not tokens[0][0].isupper() or _NOT_IN_NAMES.search(title):
        return False
    return all(
        token[0].isupper() or token.lower() in STOPWORDS or stem(token.lower()) == noun for token in tokens
    )


def clarification(
    question: str,
    conversation: Rewrite | None,
    ranked: Sequence[ScoredPassage],
    *,
    top: int = 8,
    min_options: int = 2,
    models: PipelineModels | None = None,
) -> Clarification | None:
    """A clarifying question when the turn cannot be searched as asked, else None."""
    turn = conversation if conversation is not None else rewrite(question, (), models=models)
    # "this library" over documents that describe one library is as good as named: answered.
    # Over several it is a choice, and over none the search has nothing to go on: asked back.
    about = turn.unresolved[0] if turn.unresolved else ""
    options = things_of_kind(words(about)[-1], ranked[:top], question) if about else ()
    if about and not (len(options) == 1 and _the_only_one(words(about)[-1], options[0], ranked[:3])):
        kind = _kind(about)
        text = f"Which {kind} do you mean?"
        if len(options) >= 2:
            text += " The documents mention " + _listed(options, words(about)[-1]) + "."
        else:
            text += f" Please name the {kind}, so the search can find {_it(kind)}."
        return Clarification(text, about, options)
    # "the X" in a conversation's first question refers to nothing earlier: the asker takes it as
    # known ("when did the wall in berlin come down"), and asking back was never right on the tuning
    # suite (docs/reply.md: CLAPNQ-dev +0.020 beyond the noise, genre and squad2 better, MTRAG-UN
    # train unchanged, with it confined to follow-ups).
    definite = turn.definite if turn.earlier_turns else ()
    for about in definite:
        # "the animal", "the police department": a clarifying question only when the documents
        # name several, so there is a choice to make (heuristic).
        options = named_of_kind(words(about)[-1], ranked[:top], exclude=question)
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
    question: str,
    conversation: Rewrite | None,
    ranked: Sequence[ScoredPassage],
    *,
    models: PipelineModels | None = None,
) -> Clarification:
    """The clarifying question for a turn already judged underspecified (by the turn-kind model):
    the rules' question when they find the reference, else one about the conversation's subject
    ("Do you mean facilitated diffusion, or something else?"), else a request for more."""
    found = clarification(question, conversation, ranked, min_options=2, models=models)
    if found is not None:
        return found
    turn = conversation if conversation is not None else rewrite(question, (), models=models)
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


def _the_only_one(noun: str, name: str, ranked: Sequence[ScoredPassage]) -> bool:
    """Whether every top passage that speaks of the noun's kind names ``name``: the documents
    describe that one ("this library" over the Sutro Library's pages), rather than one name found
    among passages about others of the kind (a menu's "View Technology Missions" beside pages
    about NASA's missions in general)."""
    wanted = stem(noun.lower())
    for hit in ranked:
        text = hit.passage.document_title + " " + hit.passage.text
        if wanted in {stem(w) for w in words(text)} and name.lower() not in text.lower():
            return False
    return True


def _kind(about: str) -> str:
    """What to ask "which ...?" about: the reference without its determiner and possessive
    ("this outpatient clinic" -> "outpatient clinic", "the police department's" -> "police
    department")."""
    kept = about.split()[1:] or about.split()
    return re.sub(r"['\u2019]s$", "", " ".join(kept))


def _it(noun: str) -> str:
    """How to refer back to the noun: "Which guidelines do you mean? Please name them"."""
    return "them" if noun.endswith("s") and not noun.endswith(lexicon.SINGULAR_S_ENDINGS) else "it"


def _listed(options: Sequence[str], noun: str = "") -> str:
    """The options as a list; with ``noun``, "the" only before names that end in it ("the Sampson
    State Park", but "Kobe Bryant")."""
    names = [
        f"the {o}"
        if not o.lower().startswith("the ") and (not noun or stem(words(o)[-1]) == stem(noun.lower()))
        else o
        for o in options
    ]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def clarifying_answer(clarify: Clarification, documents: Sequence[str], *, learned: bool = False) -> Answer:
    """``learned``: the turn-kind model, not the rules, decided to ask. The note is what the card
    shows, so it says why in plain words; the model's probabilities are in the trace (the run's
    ``turn_kind``)."""
    if learned:
        note = (
            "Asked to clarify (learned turn-kind model, heuristic signals): this turn could mean more "
            "than one thing in this conversation."
        )
    elif clarify.why:
        note = f"Asked to clarify (heuristic): {clarify.why}."
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
