"""Small, dependency-free text helpers shared by generation, citation and verification.

Everything here is deliberately crude and deterministic: these helpers decide
lexical overlap, which numbers and names a sentence asserts, and where an LLM's
prose splits into sentences. They must behave identically on answer text and on
source text, so both sides go through the same normalisation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qa.pipeline.core.lexicon import (
    CONTENT_STOPWORDS,
    COUNTED_NOUNS,
    EXACT_WORDS,
    HOW_QUANTITY_WORDS,
    META_WORDS,
    MONTHS,
    NEXT_PART_OPENERS,
    NOT_NAMES_EXTRA,
    NUMBER_SUFFIX_WORDS,
    NUMBER_WORDS,
    ORDINAL_SUFFIXES,
    RELATIVE_DAYS,
    SCALE_WORDS,
    SHARE_NOUNS,
    SLOT_END_WORDS,
    SLOT_FILLER_WORDS,
    STEM_SUFFIXES,
    TIME_QUESTION_NOUNS,
    WEEKDAY_STEMS,
    alternation,
)
from qa.pipeline.core.segment import segment

STOPWORDS = CONTENT_STOPWORDS

# Capitalised words that start sentences without naming anything.
_NOT_NAMES = STOPWORDS | META_WORDS | NOT_NAMES_EXTRA

_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d[\d,]*(?:\.\d+)?")
_NUMBER = re.compile(
    rf"(?<![\w.])(\d{{1,3}}(?:,\d{{3}})+|\d+)(\.\d+)?\s*(%|{alternation(NUMBER_SUFFIX_WORDS)}\b)?",
    re.IGNORECASE,
)
_SCALE = SCALE_WORDS
# "half" counts as a number here ("half the staff"), not in questions.py's count words.
_NUMBER_WORDS = NUMBER_WORDS | {"half"}


def words(text: str) -> list[str]:
    """Lower-cased word and number tokens, possessives removed."""
    out = []
    for token in _WORD.findall(text):
        token = token.lower().replace("\u2019", "'").strip("'-")
        if token.endswith("'s"):
            token = token[:-2]
        if token:
            out.append(token)
    return out


def stem(word: str) -> str:
    """A tiny suffix stripper: enough to match 'elections'/'election', 'reforms'/'reform'.

    A silent final e stays on the bare word and goes with the ending ('handle' but 'handl' for
    'handled'; 'ceded' is too short to lose its ending). Left so, since the answerability models
    were fitted on these stems; ``gaps.missing_parts`` tries both forms where it matters."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in STEM_SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """Stemmed words that carry meaning: no stopwords, no source-talk, no bare numbers."""
    return {
        stem(w)
        for w in words(text)
        if w not in STOPWORDS and w not in META_WORDS and not w[0].isdigit() and len(w) > 1
    }


def number_mentions(text: str) -> list[tuple[float, str, int, int]]:
    """(value, kind, start, end) per number: "percent", "money", "year", "ordinal" or "amount".

    Scale words are applied ("3.2 million" -> 3200000.0); percentages keep
    their face value, so "12%" and "12 percent" agree.
    """
    mentions = []
    for match in _NUMBER.finditer(text):
        whole, fraction, unit = match.groups()
        value = round(float(whole.replace(",", "") + (fraction or "")), 6)
        unit = (unit or "").lower()
        if unit in _SCALE:
            value = round(value * _SCALE[unit], 6)
        digits_end = match.end(2) if fraction else match.end(1)
        if unit.startswith(("%", "percent", "per cent")):
            kind = "percent"
        elif re.match(r"(?:st|nd|rd|th)\b", text[digits_end:], re.IGNORECASE):
            kind = "ordinal"
        elif re.search(r"(?:[$\u20ac\u00a3]|\bUSD|\bEUR)\s*$", text[: match.start()]):
            kind = "money"
            # "$100m", "\u00a381.2k": a letter scale is unambiguous right after money.
            letter = re.match(r"(m|k)\b", text[digits_end:])
            if letter and not unit:
                value = round(value * (1e6 if letter.group(1) == "m" else 1e3), 6)
        elif not unit and "," not in whole and is_year(value):  # "1,850 staff" is a count
            kind = "year"
        else:
            kind = "amount"
        mentions.append((value, kind, match.start(), match.end()))
    return mentions


def numbers(text: str) -> set[float]:
    """The numeric values a text asserts (see ``number_mentions``)."""
    return {value for value, _, _, _ in number_mentions(text)}


def has_quantity(text: str) -> bool:
    """True when the text states an amount: a digit that is not a bare year, or a number word."""
    if any(kind != "year" for _, kind, _, _ in number_mentions(text)):
        return True
    return any(w in _NUMBER_WORDS or "-half" in w for w in words(text))


def is_year(value: float) -> bool:
    return value.is_integer() and 1800 <= value <= 2100


_DECADE = re.compile(r"\b(1[89]\d0|20\d0)s\b")
# "the 19th century", "the late 19th and early 20th centuries": the ordinal before "century".
_CENTURY = re.compile(
    rf"\b(\d{{1,2}}){alternation(ORDINAL_SUFFIXES)}\b(?=[\w\s,-]{{0,25}}?\bcentur(?:y|ies)\b)", re.IGNORECASE
)


def years_named(text: str) -> frozenset[float]:
    """The years a text names ("in 2011"; see ``number_mentions``)."""
    return frozenset(value for value, kind, _, _ in number_mentions(text) if kind == "year")


def year_spans(text: str) -> list[tuple[int, int]]:
    """The times a text names, each as (first year, last year): a year ("in 2011"), a decade
    ("the 1990s") or a century ("the 19th century"). Years before 1800 read as amounts
    (``is_year``), so they are not among them."""
    spans = [(int(value), int(value)) for value, kind, _, _ in number_mentions(text) if kind == "year"]
    spans += [(int(m.group(1)), int(m.group(1)) + 9) for m in _DECADE.finditer(text)]
    spans += [((int(m.group(1)) - 1) * 100, int(m.group(1)) * 100 - 1) for m in _CENTURY.finditer(text)]
    return spans


def capitalised_names(text: str) -> set[str]:
    """Lower-cased capitalised words that are likely names (Oman, Qaboos, ECOWAS).

    The first word is skipped: grammar capitalises it ("Despite", "Critics"),
    and a name there is usually repeated, or stated by the cited sentence's
    subject, anyway. Single letters ("U.S." splits into "u", "s") are skipped.
    """
    names = set()
    for index, match in enumerate(re.finditer(r"[A-Za-z][A-Za-z'\u2019-]*", text)):
        token = match.group()
        if index == 0 or not token[0].isupper():
            continue
        normal = words(token)
        if normal and len(normal[0]) > 1 and normal[0] not in _NOT_NAMES:
            names.add(normal[0])
    return names


def name_present(name: str, pool: set[str]) -> bool:
    """Whether a name, or a form of it, is in ``pool``: "Russian" matches "Russia",
    "Ukrainian" matches "Ukraine", but "Austria" does not match "Australia"."""
    if name in pool:
        return True
    for word in pool:
        short, long = sorted((name, word), key=len)
        if len(short) >= 4 and long.startswith(short):
            return True
        if len(short) >= 6 and long[:6] == short[:6]:
            return True
    return False


def split_sentences(text: str) -> list[str]:
    """Split an answer's prose into sentences with the documents' splitter (one line, one or more).

    Citation markers that follow the full stop ("... 1970. [3] Next ...") stay
    with the sentence before them.
    """
    pieces = [text[start:end] for start, end in segment(text, hard_line_breaks=True)]
    merged: list[str] = []
    for piece in pieces:
        leading = re.match(r"^((?:\s*\[[^\]]{1,40}\])+)\s*(.*)$", piece, flags=re.S)
        if leading and merged:
            merged[-1] = merged[-1] + " " + leading.group(1).strip()
            piece = leading.group(2)
        if piece.strip():
            merged.append(piece.strip())
    return merged


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def coverage(needles: set[str], haystack: set[str]) -> float:
    """Share of ``needles`` found in ``haystack``; 1.0 when there is nothing to find."""
    return len(needles & haystack) / len(needles) if needles else 1.0


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities between rows; re-normalises because fakes may not."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float32))
    b = np.atleast_2d(np.asarray(b, dtype=np.float32))
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def unique_sentences(groups: Sequence[Sequence]) -> list:
    """Flatten sentence groups keeping the first occurrence of each sentence id."""
    seen: set[int] = set()
    out = []
    for group in groups:
        for sentence in group:
            if sentence.id not in seen:
                seen.add(sentence.id)
                out.append(sentence)
    return out


_QUANTITY_QUESTION = re.compile(
    rf"\bhow {alternation(HOW_QUANTITY_WORDS)}\b|\bwhat {alternation(SHARE_NOUNS)}\b|"
    rf"\b{alternation(EXACT_WORDS)}\b[\w\s'\u2019-]{{0,30}}?\b{alternation(COUNTED_NOUNS)}\b",
    re.IGNORECASE,
)
# Words around a quantity trigger that say nothing about *what* is counted (stemmed, as compared).
_SLOT_FILLERS = frozenset(stem(w) for w in SLOT_FILLER_WORDS)
_SLOT_END = re.compile(rf"[,;?]|\b{alternation(SLOT_END_WORDS)}\b", re.IGNORECASE)


@dataclass(frozen=True)
class QuantitySlot:
    """One amount a question asks for: its kind and the words naming what is counted.

    "how many ballots did the commission request" -> ("amount", {"ballot",
    "commission", "request"}); "what percentage of the population" ->
    ("percent", {"population"}).
    """

    phrase: str
    kind: str  # "percent", "amount" or "time" (``time_slots``)
    focus: frozenset[str]

    def satisfied_by(self, sentence: str) -> bool:
        """The sentence states an amount (a time, for a ``time_slots`` slot) of the right kind about
        (one of) the focus words."""
        if self.kind == "time":
            if not states_time(sentence):
                return False
        elif self.kind == "percent":
            if not any(kind == "percent" for _, kind, _, _ in number_mentions(sentence)):
                return False
        elif not has_quantity(sentence):
            return False
        return not self.focus or bool(self.focus & content_words(sentence))


def quantity_slots(question: str, *, focus_words: int = 4) -> list[QuantitySlot]:
    """Every amount the question asks for, in order; [] when it asks for none.

    The focus is the first few content words after the trigger, up to the
    next clause boundary: "how many extra ballots ..., and how many stations
    ..." has two slots, each with its own focus.
    """
    return [
        _slot(question, match, "percent" if "percent" in match.group(0).lower() else "amount", focus_words)
        for match in _QUANTITY_QUESTION.finditer(question)
    ]


# ", and how ...", ", and what ...": where a question's next part begins.
NEXT_PART = re.compile(rf",?\s+and\s+{alternation(NEXT_PART_OPENERS)}\b", re.IGNORECASE)


def main_clause(question: str) -> str:
    """The question up to where its next part begins: "What was the port's revenue" of "What was
    the port's revenue and how many staff did it have?"."""
    return NEXT_PART.split(question, maxsplit=1)[0]


def question_parts(question: str) -> list[str]:
    """Each part of a question in parts, from its question word on, without the "and" joining it:
    ["What is the currency of Westmere", "who is its prime minister?"]; [question] for one part."""
    bounds = [0, *(match.start() for match in NEXT_PART.finditer(question)), len(question)]
    parts = (question[start:end] for start, end in zip(bounds, bounds[1:], strict=False))
    return [re.sub(r"^[\s,]*and\s+", "", part).strip() for part in parts if part.strip()]


# A part of a question asking when: at its start, or after the "and" or comma that opens the part
# ("When did the floods happen and how many ...", "..., and in what year did ..."). A "when" inside
# a clause ("What did officials say when the port closed?") asks nothing of its own.
_TIME_QUESTION = re.compile(
    rf"(?:^|,|\band)\s*(?:when|(?:in\s+|on\s+)?(?:what|which)\s+{alternation(TIME_QUESTION_NOUNS)})\b",
    re.IGNORECASE,
)
# "may" is left out: as a modal verb it would date every "may" question.
_WEEKDAYS_AND_MONTHS = re.compile(
    rf"\b(?:{alternation(WEEKDAY_STEMS)}day|"
    + "|".join((*RELATIVE_DAYS, *(month for month in MONTHS if month != "may")))
    + r")\b",
    re.IGNORECASE,
)


def time_slots(question: str, *, focus_words: int = 4) -> list[QuantitySlot]:
    """Every part of the question that asks when, with the words of what it asks about, in order:
    "When did the floods happen and how many people were evacuated?" -> one ("time", {"flood",
    "happen"}); [] when no part asks when."""
    return [_slot(question, match, "time", focus_words) for match in _TIME_QUESTION.finditer(question)]


def states_time(text: str) -> bool:
    """The text names a time: a year, decade or century, a month, a day of the week ("on
    Tuesday") or one near it ("by the weekend"). "May" is left out: it is a verb as often as a
    month."""
    return bool(year_spans(text) or _WEEKDAYS_AND_MONTHS.search(text))


def _slot(question: str, match: re.Match, kind: str, focus_words: int) -> QuantitySlot:
    """The slot a trigger opens: the focus is the first few content words after it, up to the next
    clause boundary."""
    trigger = re.sub(r"^[\s,]*(?:and\s+)?", "", match.group(0).lower())
    rest = question[match.end() :]
    end = _SLOT_END.search(rest)
    phrase = rest[: end.start()] if end else rest
    focus = [w for w in _ordered_content_words(phrase) if w not in _SLOT_FILLERS][:focus_words]
    if not focus:
        # "what was the exact defense budget in 2020": the counted thing is inside the trigger.
        focus = [w for w in _ordered_content_words(trigger) if w not in _SLOT_FILLERS][:focus_words]
    return QuantitySlot(trigger + phrase, kind, frozenset(focus))


def _ordered_content_words(text: str) -> list[str]:
    out = []
    for w in words(text):
        if w in STOPWORDS or w in META_WORDS or w[0].isdigit() or len(w) <= 1:
            continue
        if stem(w) not in out:
            out.append(stem(w))
    return out


_ID_PART = re.compile(r"(?:[Ss](?:entence)?\s*)?(\d+)")
_ID_RANGE = re.compile(r"(?:[Ss](?:entence)?\s*)?(\d+)\s*[-\u2013]\s*(?:[Ss](?:entence)?\s*)?(\d+)")


def id_tokens(group: str) -> list[tuple[str, int]]:
    """Parse a citation id list ("3, 5", "S3; S5", "2-4", "Sources: 1 and 2") into (raw, number).

    The raw form is kept so that ids the caller drops can be reported as the
    model wrote them.
    """
    group = re.sub(r"^\s*(?:sources?|refs?|citations?)\s*:?\s*", "", group, flags=re.IGNORECASE)
    out: list[tuple[str, int]] = []
    for part in re.split(r"\s*(?:[,;&]|\band\b)\s*", group.strip()):
        part = part.strip()
        span = _ID_RANGE.fullmatch(part)
        if span and 0 < int(span[2]) - int(span[1]) <= 10:
            out.extend((str(n), n) for n in range(int(span[1]), int(span[2]) + 1))
            continue
        single = _ID_PART.fullmatch(part)
        if single:
            out.append((part, int(single[1])))
    return out
