"""Whether a conversation turn needs a clarifying question before anything is searched for.

A follow-up can point at something the conversation never named ("this
outpatient clinic", "the animal", "a specific city"), or at one of several
things the documents describe alike ("this language": Spanish, Italian,
Xhosa). ``turn_signals`` reads one turn into plain numbers (``TurnSignals``):
what the rewrite could not resolve, how many things of that kind the passages
name, and how many different documents' subjects fit the question equally.
A logistic model (``LogisticModel``, the one answerability uses) turns them
into p(underspecified); ``classify_turn`` asks back when it reaches the stored
threshold, and otherwise leaves the turn to answerability (issue 11), which
answers, answers in part, or refuses.

The model and threshold were fitted on the MTRAG-UN slice's *train* half only
(``bench/turn_kinds.py --write``; ``trained_on`` in ``turn_kind_model.json``
says what it saw). A learned refusal model was tried beside it and dropped:
on train's out-of-fold turns it refused worse than answerability's gates
(bench/README.md). Everything here is heuristic and labelled so in the notes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from qa.pipeline.answerability import LogisticModel
from qa.pipeline.conversation import Rewrite, rewrite
from qa.pipeline.questions import analyse_question, names_too_little
from qa.pipeline.text import STOPWORDS, stem, words
from qa.pipeline.types import ScoredPassage

TurnKind = Literal["answer", "clarify"]
MODEL_PATH = Path(__file__).with_name("turn_kind_model.json")

# A run of capitalised words on one line (a name never spans a line break: page menus and
# headings sit on lines of their own).
_NAME_RUN = re.compile(r"(?:[A-Z][\w.'&-]*[^\S\n]+){0,4}[A-Z][\w.'&-]*")
# A full stop after a word of four letters or more ends a sentence ("Police Department. Police
# officers"); after a shorter one it is an abbreviation ("St. Louis", "U.S. Army").
_SENTENCE_END = re.compile(r"(?<=\w{4})\.\s")
_PRONOUN = re.compile(r"\b(?:it|its|they|them|their|he|him|his|she|her)\b", re.IGNORECASE)


@dataclass(frozen=True)
class TurnSignals:
    """One turn as the model sees it; every field a plain number."""

    unresolved: float  # 1 when "this X"/"a specific X" points at nothing the conversation names
    reference_options: float  # things of the unresolved (or "the X") kind the passages name, /4
    definite_unnamed: float  # 1 when a "the X" names nothing earlier (and nothing in the question)
    pronoun: float  # 1 when the turn says "it", "they", ... (resolved from memory or not)
    vague: float  # 1 when the question has at most one focus word (a rule, not a model input)
    # Distinct titles among the top passages scoring within 0.05 of the best, less one, /4: several
    # things of one kind matching equally well ("this language": Spanish, Italian, Xhosa).
    competing_titles: float
    # Distinct titles among the top passages that each hold at least half the focus words, less one,
    # /4: the question fits several documents' subjects (ambiguous), not just one (or none).
    covered_titles: float
    earlier_turns: float  # turns before this one, /8, at most 1
    shared_words: float  # share of the turn's content words the conversation already used

    def vector(self, names: Sequence[str]) -> list[float]:
        return [getattr(self, name) for name in names]


SIGNAL_NAMES: tuple[str, ...] = tuple(TurnSignals.__dataclass_fields__)


def turn_signals(
    question: str, conversation: Rewrite | None, ranked: Sequence[ScoredPassage], *, top: int = 5
) -> TurnSignals:
    """``question`` as asked; ``conversation`` its rewrite (None: a first turn); ``ranked`` the
    passages retrieved for the rewrite, best first."""
    turn = conversation if conversation is not None else rewrite(question, ())
    analysis = analyse_question(turn.question)
    head = list(ranked[:top])
    options = 0
    for phrase in (*turn.unresolved, *turn.definite):
        options = max(options, len(named_of_kind(words(phrase)[-1], head, exclude=question)))
    return TurnSignals(
        unresolved=float(bool(turn.unresolved)),
        reference_options=min(options, 4) / 4,
        definite_unnamed=float(bool(turn.definite)),
        pronoun=float(bool(_PRONOUN.search(question))),
        vague=float(names_too_little(turn.question, head)),
        competing_titles=_competing_titles(head),
        covered_titles=_covered_titles(analysis.focus, head),
        earlier_turns=min(turn.earlier_turns, 8) / 8,
        shared_words=turn.shared_words,
    )


def _title(hit: ScoredPassage) -> str:
    return (hit.passage.document_title or hit.passage.document_id).strip().lower()


def _competing_titles(head: Sequence[ScoredPassage], margin: float = 0.05) -> float:
    scored = [
        (hit.scores.get("sentence_similarity", hit.scores.get("dense", 0.0)), _title(hit)) for hit in head
    ]
    if not scored:
        return 0.0
    best = max(score for score, _ in scored)
    return min(len({title for score, title in scored if score >= best - margin}) - 1, 4) / 4


def _covered_titles(focus: frozenset[str], head: Sequence[ScoredPassage]) -> float:
    if not focus:
        return 0.0
    titles = set()
    for hit in head:
        bag = {stem(w) for w in words(hit.passage.text + " " + hit.passage.document_title)}
        if len(focus & bag) >= len(focus) / 2:
            titles.add(_title(hit))
    return max(len(titles) - 1, 0) / 4


def named_of_kind(noun: str, ranked: Sequence[ScoredPassage], *, exclude: str) -> tuple[str, ...]:
    """Capitalised names in the passages whose last word is ``noun`` ("Auburn Police Department"
    for "department"), most frequent first, at most four: the choices a clarifying question offers.
    A name ends in the kind of thing it names; a run where the noun sits elsewhere is a heading or a
    menu ("Nutrition Services CalFresh Program", "About NASA's Mission Join Us")."""
    wanted = stem(noun.lower())
    counts: dict[str, int] = {}
    for hit in ranked:
        for line in _name_sources(hit):
            for match in _NAME_RUN.finditer(line):
                name = _clean_name(match.group())
                tokens = words(name)
                if (
                    len(tokens) > 1
                    and stem(tokens[-1]) == wanted
                    and not _GLUED.search(name)
                    and name.lower() not in exclude.lower()
                ):
                    counts[name] = counts.get(name, 0) + 1
    return tuple(sorted(counts, key=lambda n: -counts[n])[:4])


def _clean_name(run: str) -> str:
    """A run of capitalised words as a name: one sentence of it, without a leading article ("The
    Auburn Police Department" is the same choice as "Auburn Police Department"; the question puts
    "the" back), cut before a capitalised function word (a heading's "California State Library The
    State", "Humans In Space") and without a possessive's "'s"."""
    name = _SENTENCE_END.split(" ".join(run.split()))[0].strip(" .")
    name = _ARTICLE.sub("", name)
    kept = []
    for position, word in enumerate(name.split()):
        if position and word.lower() in STOPWORDS:
            break
        kept.append(word)
    return re.sub(r"['\u2019]s$", "", " ".join(kept))


# Menu items run together when a page is flattened ("HomeDepartmentsSolid Waste"): a word whose
# capital follows three lower-case letters is a seam, not a name ("McDonald" has one).
_GLUED = re.compile(r"[a-z]{3}[A-Z]")
_ARTICLE = re.compile(r"^(?:The|A|An)\s+(?=\S)")
_PROSE_WORD = re.compile(r"(?<![\w'])[a-z][a-z']{2,}\b")


def _name_sources(hit: ScoredPassage) -> list[str]:
    """Where a passage names things: its lines that read as prose (a full stop at the end, or two
    lower-case words of three letters or more) and its title's parts ("Salary And Benefits | VA
    Birmingham Health Care"). Web pages open with navigation ("Skip to Main Content", "Contact
    Us", "Services"): lines of capitalised words only, which would otherwise be offered as things
    the asker might mean."""
    prose = [
        line
        for line in hit.passage.text.splitlines()
        if len(_PROSE_WORD.findall(line)) >= 2 or line.rstrip().endswith((".", "!", "?"))
    ]
    return prose + re.split(r"\s+[|:\u2013-]\s+|\|", hit.passage.document_title)


# --- the learned decision -------------------------------------------------------------------


@dataclass(frozen=True)
class TurnKindModel:
    """p(underspecified) and the threshold chosen on the tuning data."""

    clarify: LogisticModel
    clarify_threshold: float
    trained_on: str = ""

    @classmethod
    def from_json(cls, data: dict) -> TurnKindModel:
        return cls(
            clarify=LogisticModel.from_json(data["clarify"]),
            clarify_threshold=float(data["clarify_threshold"]),
            trained_on=data.get("trained_on", ""),
        )

    def to_json(self) -> dict:
        return {
            "trained_on": self.trained_on,
            "clarify_threshold": self.clarify_threshold,
            "clarify": self.clarify.to_json(),
        }


@lru_cache(maxsize=2)
def load_turn_model(path: Path | str = MODEL_PATH) -> TurnKindModel:
    with Path(path).open(encoding="utf-8") as handle:
        return TurnKindModel.from_json(json.load(handle))


@dataclass(frozen=True)
class TurnKindVerdict:
    """``kind``: "clarify" (ask back), or "answer" (answerability and its gates decide)."""

    kind: TurnKind
    p_underspecified: float
    reason: str
    signals: TurnSignals


def classify_turn(signals: TurnSignals, model: TurnKindModel | None = None) -> TurnKindVerdict:
    """Clarify when the question is vague (a rule: nothing to search for) or p(underspecified)
    reaches the threshold; else answer. Clarifying comes before answerability: a turn that points
    at nothing cannot be judged against the corpus, so refusing it would blame the documents."""
    model = model or load_turn_model()
    p_under = float(model.clarify.probability(signals.vector(model.clarify.names))[0])
    if signals.vague:
        return TurnKindVerdict("clarify", p_under, "the question names too little to search for", signals)
    if p_under >= model.clarify_threshold:
        return TurnKindVerdict(
            "clarify", p_under, f"p(underspecified) {p_under:.2f} >= {model.clarify_threshold:.2f}", signals
        )
    return TurnKindVerdict(
        "answer", p_under, f"p(underspecified) {p_under:.2f} < {model.clarify_threshold:.2f}", signals
    )
