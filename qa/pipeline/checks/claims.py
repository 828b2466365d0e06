"""Conflicting claims between documents, beyond numbers: a heuristic, not an NLI model.

No entailment model can be installed offline here (ISSUE_NOTES), so the
disagreement check for statements (``verification.find_conflicts`` handles
numbers and years) looks for three surface patterns in two sentences of
different documents that are about the same thing:

- **negation**: the same statement, one side negated ("the talks resumed" /
  "the talks did not resume");
- **outcome**: the same event with opposite outcome words ("won" / "lost",
  "approved" / "rejected", "rose" / "fell");
- **entity**: the same frame with a different name as its subject ("Keita
  won the election" / "Cisse won the election"), found by aligning the two
  sentences word by word; names written two ways ("Anthony"/"Antony",
  "UN"/"United Nations") are one name.

"About the same thing" means: enough shared content words (Jaccard, stemmed,
stopwords out), one of them a word of the question, and no year in one
sentence that the other contradicts (the same words in different years are
different events). Every conflict found here is labelled heuristic in the
answer's note, the trace and the UI: it can mistake two events for one, and it
misses paraphrases.
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from qa.pipeline.core.lexicon import (
    NAME_PARTICLES,
    NEGATIONS,
    OPPOSITE_OUTCOMES,
    RECORD_LABEL_WORDS,
    REVERSING_VERBS,
)
from qa.pipeline.core.text import (
    META_WORDS,
    STOPWORDS,
    capitalised_names,
    content_words,
    jaccard,
    stem,
    unique_sentences,
    words,
    years_named,
)
from qa.pipeline.core.types import Passage, SourceSentence

ClaimKind = Literal["negation", "outcome", "entity"]

_CONTRACTED = re.compile(r"\b\w+n[’']t\b", re.I)
OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split())) for a, b in OPPOSITE_OUTCOMES
)


# "Economy: Exports - commodities: ...", "Photograph: X/Getty Images": a record's label, not a
# statement; two records of different entries (countries) differ without contradicting.
_RECORD = re.compile(rf"^\s*[A-Z][\w'’()-]*(?:\s(?:{'|'.join(RECORD_LABEL_WORDS)}|&|-|[A-Z][\w'’()-]*))*:\s")


@dataclass(frozen=True)
class ClaimSettings:
    """Thresholds, set by hand on constructed pairs and analyst-bench train (README)."""

    min_shared: int = 3  # content words both sentences use
    same_subject: float = 0.3  # Jaccard of content words for an outcome conflict
    same_statement: float = 0.5  # ... for a negation or a different name (a stricter match)
    same_frame: float = 0.5  # word alignment ratio for a different name in the same place


@dataclass(frozen=True)
class ClaimConflict:
    kind: ClaimKind
    answer_sentence: SourceSentence
    other_sentence: SourceSentence
    about: tuple[str, ...]  # the content words both share
    answer_value: str  # what differs: "won", "not", "Keita"
    other_value: str
    answer_published: datetime.date | None = None
    other_published: datetime.date | None = None

    @property
    def other(self) -> SourceSentence:
        return self.other_sentence

    def describe(self) -> str:
        a, b = self.answer_sentence, self.other_sentence
        return (
            f"{_source(a, self.answer_published)} says {_shown(self.answer_value)} where "
            f"{_source(b, self.other_published)} says {_shown(self.other_value)} "
            f"({' '.join(self.about[:6])}; heuristic {self.kind} check)."
        )


def _source(sentence: SourceSentence, published: datetime.date | None) -> str:
    name = sentence.document_title or sentence.document_id
    return f"{name} ({published.isoformat()})" if published else name


def _shown(value: str) -> str:
    return f'"{value}"' if value else "the opposite"


def find_claim_conflicts(
    question: str,
    evidence: Sequence[SourceSentence],
    passages: Sequence[Passage],
    *,
    settings: ClaimSettings = ClaimSettings(),
    max_conflicts: int = 2,
    skip: frozenset[int] = frozenset(),
) -> list[ClaimConflict]:
    """Statements of other documents among ``passages`` that contradict the answer's ``evidence``.

    ``skip``: sentence ids already in a (numeric) conflict, so one pair is not reported twice.
    """
    question_words = content_words(question)
    published = {p.document_id: p.published for p in passages}
    evidence = [s for s in unique_sentences([evidence]) if s.id not in skip]
    evidence_ids = {s.id for s in evidence}
    others = [s for s in unique_sentences([p.sentences for p in passages]) if s.id not in evidence_ids | skip]
    conflicts: list[ClaimConflict] = []
    used: set[int] = set()
    for mine in evidence:
        for theirs in others:
            if theirs.id in used or theirs.document_id == mine.document_id:
                continue
            found = claim_conflict(mine, theirs, question_words, settings)
            if found is not None:
                conflicts.append(
                    ClaimConflict(
                        *found,
                        answer_published=published.get(mine.document_id),
                        other_published=published.get(theirs.document_id),
                    )
                )
                used.add(theirs.id)
                break
        if len(conflicts) >= max_conflicts:
            break
    return conflicts


def claim_conflict(
    a: SourceSentence, b: SourceSentence, question_words: set[str], settings: ClaimSettings = ClaimSettings()
) -> tuple[ClaimKind, SourceSentence, SourceSentence, tuple[str, ...], str, str] | None:
    """(kind, a, b, shared words, a's side, b's side) when the two sentences contradict, else None."""
    if _RECORD.match(a.text) or _RECORD.match(b.text):
        return None
    words_a, words_b = content_words(a.text) - NEGATIONS, content_words(b.text) - NEGATIONS
    shared = words_a & words_b
    if len(shared) < settings.min_shared or not shared & question_words:
        return None
    years_a, years_b = years_named(a.text), years_named(b.text)
    if years_a and years_b and years_a != years_b:
        return None
    overlap = jaccard(words_a, words_b)
    about = tuple(sorted(shared))
    if overlap >= settings.same_statement:
        negated_a, negated_b = _negation(a.text, shared), _negation(b.text, shared)
        if bool(negated_a) != bool(negated_b) and not (_negation(a.text) and _negation(b.text)):
            return "negation", a, b, about, negated_a, negated_b
    if overlap >= settings.same_subject:
        outcome = _opposite_outcomes(a.text, b.text)
        if outcome is not None:
            return ("outcome", a, b, about, *outcome)
    if overlap >= settings.same_statement:
        names = _swapped_names(a.text, b.text, settings.same_frame)
        # Each name its own document's subject ("Jordan has ... status" in Jordan's entry, "Kuwait has
        # ... status" in Kuwait's): two entries saying the same of their own subjects, not a conflict.
        if names is not None and not (_titled(names[0], a) and _titled(names[1], b)):
            return ("entity", a, b, about, *names)
    return None


def _negation(text: str, shared: set[str] | None = None) -> str:
    """The negating word of ``text`` ("" when it has none). With ``shared``, only a negation of one
    of those words counts: in "could not be verified, though footage showed ..." the "not" is about
    the verifying, which says nothing against another report of the footage."""
    tokens = words(_CONTRACTED.sub(lambda m: m.group(0)[:-3] + " not", text))
    for index, token in enumerate(tokens):
        if token not in NEGATIONS:
            continue
        if shared is None or any(_same_word(stem(w), shared) for w in tokens[index + 1 : index + 4]):
            return token
    return ""


def _same_word(word: str, pool: set[str]) -> bool:
    """Stems match loosely: "resum" (resumed) and "resume" are one word."""
    return any(word[:5] == other[:5] and min(len(word), len(other)) >= 4 or word == other for other in pool)


def _opposite_outcomes(a: str, b: str) -> tuple[str, str] | None:
    tokens_a, tokens_b = _outcome_words(a), _outcome_words(b)
    for one, other in OPPOSITES:
        for first, second in ((one, other), (other, one)):
            here, there = tokens_a & first, tokens_b & second
            # Both sides in one sentence ("rose, then fell") say nothing against the other sentence.
            if here and there and not tokens_a & second and not tokens_b & first:
                return min(here), min(there)
    return None


# Words that reverse the outcome word after them ("lifted a ban", "did not win"): such a sentence's
# outcome is not read at all, rather than read backwards.
_REVERSING = NEGATIONS | REVERSING_VERBS


def _outcome_words(text: str) -> set[str]:
    tokens = words(_CONTRACTED.sub(lambda m: m.group(0)[:-3] + " not", text))
    return {
        token
        for index, token in enumerate(tokens)
        if not any(t in _REVERSING for t in tokens[max(0, index - 3) : index])
    }


def _swapped_names(a: str, b: str, min_ratio: float) -> tuple[str, str] | None:
    """A name of ``a`` and a different one of ``b`` in the same place of the same frame."""
    names_a, names_b = _names(a), _names(b)
    only_a, only_b = names_a - names_b, names_b - names_a
    if not only_a or not only_b:
        return None
    # The frame must be more than names: photo credits ("Photograph: X/Getty Images") share only those.
    frame = {w for w in content_words(a) & content_words(b) if not _same_word(w, names_a | names_b)}
    if len(frame) < 2:
        return None
    tokens_a, tokens_b = words(a), words(b)
    matcher = difflib.SequenceMatcher(None, tokens_a, tokens_b, autojunk=False)
    if matcher.ratio() < min_ratio:
        return None
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        # Only the subject's place (the first words): a name further on is as often an attribution
        # in boilerplate ("The opinions expressed ... are solely those of X") as another actor.
        if tag != "replace" or i1 > _SUBJECT_WORDS or j1 > _SUBJECT_WORDS:
            continue
        left, right = set(tokens_a[i1:i2]), set(tokens_b[j1:j2])
        if (
            left <= only_a | NAME_PARTICLES
            and right <= only_b | NAME_PARTICLES
            and left & only_a
            and right & only_b
        ):
            shown_a, shown_b = " ".join(tokens_a[i1:i2]), " ".join(tokens_b[j1:j2])
            return None if _one_name(shown_a, shown_b) else (shown_a, shown_b)
    return None


def _titled(name: str, sentence: SourceSentence) -> bool:
    return bool(set(name.split()) & set(words(sentence.document_title)))


def _one_name(a: str, b: str) -> bool:
    """One name written two ways, not two names: "Anthony"/"Antony" (spelling), "Jeff"/"Jeffrey"
    (short form), "United Nations"/"UN" (initials)."""
    short, long = sorted((a, b), key=len)
    initials = "".join(part[0] for part in long.split())
    return (
        difflib.SequenceMatcher(None, a, b).ratio() >= 0.75
        or long.startswith(short)
        or short.replace(" ", "") == initials
    )


def _names(text: str) -> set[str]:
    """``capitalised_names``, plus a capitalised first word that is no stopword: in "Ibrahim Keita
    won ..." the first name is part of the name whose place the alignment compares."""
    names = capitalised_names(text)
    first = re.match(r"\s*([A-Z][A-Za-z'\u2019-]+)", text)
    if first and (word := words(first.group(1))) and word[0] not in STOPWORDS and word[0] not in META_WORDS:
        names.add(word[0])
    return names


_SUBJECT_WORDS = 2
