"""Does a claim say something its citation does not: another figure, the other direction, a negation?

Content-word overlap and embeddings (``verification.LexicalVerifier``) cannot see the difference
between "ten times more slowly" and "at least three times as quickly": the words and the vectors
are nearly the same. A reader takes a `supported` badge to mean the source says *this*, so three
parts of a sentence that overlap cannot judge are compared here, each read from both sides:

- **figures**: numbers in digits or words with their unit ("ten times", "3x", "two-fold",
  "12 percent", "3.2 million", years) and their bound ("at least", "more than", "about", "up to");
  a claim's figure must follow from a figure of the same unit in its citation ("more than 3" from
  "over three", "five" from "5");
- **comparison direction**: the pole of each scale the two sides use (faster/slower,
  more/less, higher/lower, increase/decrease, ...), flipped when the two sides name the compared
  things in the other order ("A is faster than B" / "B is slower than A");
- **negation**: a negation word governing a word both sides share ("zlib handles dates" /
  "zlib doesn't handle dates").

A claim whose figure contradicts its citation, or whose direction or negation is the opposite,
is `contradicted`; a figure the citation does not state (its figure is weaker: "ten times" from
"at least three times") is `not_stated`. Either way the sentence is not `supported`, and
``Mismatch.describe`` says what differs in plain words. Pure: no Django, no models.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from qa.pipeline.checks.claims import NEGATIONS
from qa.pipeline.core.lexicon import (
    APPROXIMATE_BOUNDS,
    COMPARATIVE_BOUND_PHRASES,
    COMPARISON_SCALES,
    FIGURE_NUMBER_WORDS,
    FIGURE_SCALE_WORDS,
    FIGURE_UNIT_PATTERN,
    LOWER_BOUNDS,
    MULTIPLICATIVES,
    ORDINAL_SUFFIXES,
    UPPER_BOUNDS,
    alternation,
)
from qa.pipeline.core.text import STOPWORDS, stem, words

# --- figures ----------------------------------------------------------------------------------

Unit = Literal["times", "percent", "count"]
Bound = Literal["exact", "about", "lower", "upper"]
MismatchKind = Literal["figure", "direction", "negation"]
Verdict = Literal["contradicted", "not_stated"]

_NUMBER_WORD = "|".join(sorted(FIGURE_NUMBER_WORDS, key=len, reverse=True))
_FIGURE = re.compile(
    rf"(?<![\w.])(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|"
    rf"(?:{_NUMBER_WORD})(?:[- ](?:{_NUMBER_WORD}))?|{'|'.join(MULTIPLICATIVES)})(?![\w.]\d)"
    rf"(?P<scale>\s*(?:{'|'.join(FIGURE_SCALE_WORDS)})\b)?"
    rf"(?P<unit>\s*{FIGURE_UNIT_PATTERN})?",
    re.IGNORECASE,
)
# "zlib 1.2.11", "RFC 1950": identifiers, not figures.
_IDENTIFIER = re.compile(rf"\d+\.\d+\.\d+|\b[A-Z]{{2,}}[- ]?\d+\b|\b\d+{alternation(ORDINAL_SUFFIXES)}\b")


@dataclass(frozen=True)
class Figure:
    value: float
    unit: Unit
    bound: Bound
    shown: str  # as the text writes it, bound included: "at least three times"
    rounded: bool = False  # written with a scale word ("3.2 million"): a rounded figure


def _bound_before(text: str, start: int) -> tuple[Bound, int]:
    """The bound a phrase just before ``start`` puts on the figure there, and where it begins."""
    window = max(0, start - 24)
    before = text[window:start].lower().rstrip()
    for phrases, bound in ((LOWER_BOUNDS, "lower"), (UPPER_BOUNDS, "upper"), (APPROXIMATE_BOUNDS, "about")):
        for phrase in phrases:
            if re.search(rf"(?:^|[^\w]){re.escape(phrase)}$", before):
                return bound, window + before.rfind(phrase)  # type: ignore[return-value]
    return "exact", start


def _value(token: str) -> float | None:
    token = token.lower().replace(",", "")
    if token in MULTIPLICATIVES:
        return MULTIPLICATIVES[token]
    if token[0].isdigit():
        return float(token)
    parts = re.split(r"[- ]", token)
    values = [FIGURE_NUMBER_WORDS.get(p) for p in parts]
    if any(v is None for v in values):
        return None
    if len(values) == 2 and values[0] >= 20 and values[1] < 10:  # "twenty-five"
        return values[0] + values[1]
    if len(values) == 2 and values[1] == 100:  # "three hundred"
        return values[0] * 100
    return values[0] if len(values) == 1 else None


def figures(text: str) -> list[Figure]:
    """Every figure of ``text`` with its unit and bound ("ten times" -> 10 times, exact)."""
    masked = _IDENTIFIER.sub(lambda m: " " * len(m.group()), text)
    found = []
    for match in _FIGURE.finditer(masked):
        token, scale, unit = (
            match.group("num"),
            match.group("scale"),
            (match.group("unit") or "").strip().lower(),
        )
        value = _value(token)
        if value is None:
            continue
        if scale:
            value *= FIGURE_SCALE_WORDS[scale.strip().lower()]
        word = token.lower()
        if word in MULTIPLICATIVES:
            unit_kind: Unit = "times"
        elif unit in ("%", "percent") or unit.startswith("per"):
            unit_kind = "percent"
        elif unit in ("times", "x", "\u00d7") or unit.endswith("fold"):
            unit_kind = "times"
        else:
            unit_kind = "count"
        # "one" and "a dozen" alone are as often pronouns and idioms ("no one", "one of them").
        if unit_kind == "count" and not scale and word == "one":
            continue
        bound, start = _bound_before(masked, match.start())
        shown = text[start : match.end()].strip()
        found.append(Figure(round(value, 6), unit_kind, bound, shown, rounded=bool(scale)))
    return found


def _tolerance(a: Figure, b: Figure) -> float:
    # An approximate figure gets 10%; a rounded one 1% ("3.2 million" and "3,215,000" are one
    # figure); figures written out in full must be equal ("1995" is not "1996").
    if "about" in (a.bound, b.bound):
        return 0.1
    return 0.01 if a.rounded or b.rounded else 0.0


def _follows(claim: Figure, source: Figure) -> bool:
    """Whether the source's figure states (or implies) the claim's."""
    same = math.isclose(claim.value, source.value, rel_tol=_tolerance(claim, source), abs_tol=1e-9)
    if same and (
        claim.bound == source.bound or "about" in (claim.bound, source.bound) or claim.bound == "exact"
    ):
        return True
    if claim.bound == "lower":
        return source.bound in ("exact", "about", "lower") and source.value >= claim.value
    if claim.bound == "upper":
        return source.bound in ("exact", "about", "upper") and source.value <= claim.value
    return False


def _contradicts(claim: Figure, source: Figure) -> bool:
    """Whether the two figures cannot both be true of one thing (as opposed to merely not stated)."""
    if claim.bound in ("exact", "about") and source.bound in ("exact", "about"):
        return True
    if source.bound == "lower":
        return claim.bound in ("exact", "about", "upper") and claim.value < source.value
    if source.bound == "upper":
        return claim.bound in ("exact", "about", "lower") and claim.value > source.value
    if claim.bound == "lower":
        return source.value < claim.value
    return claim.bound == "upper" and source.value > claim.value


# --- comparison and negation ------------------------------------------------------------------

_CONTRACTED = re.compile(r"\b(\w+)n[\u2019']t\b", re.IGNORECASE)
_BOUND_WORDS = re.compile(
    r"\b" + alternation(p.replace(" ", r"\s+") for p in COMPARATIVE_BOUND_PHRASES) + r"\b", re.IGNORECASE
)


def _tokens(text: str) -> list[str]:
    return words(_CONTRACTED.sub(lambda m: f"{m.group(1)} not", text))


def _poles(tokens: list[str]) -> dict[str, tuple[int, str]]:
    """Per scale the text uses with one pole only: (pole 0 or 1, the word)."""
    found: dict[str, set[tuple[int, str]]] = {}
    for index, token in enumerate(tokens):
        for name, first, second in COMPARISON_SCALES:
            pole = 0 if token in first else 1 if token in second else None
            if pole is None:
                continue
            follower = tokens[index + 1] if index + 1 < len(tokens) else ""
            if name == "amount" and any(follower in a | b for n, a, b in COMPARISON_SCALES if n != "amount"):
                continue  # "more slowly": the speed scale speaks, "more" only grades it
            found.setdefault(name, set()).add((pole, token))
    return {name: min(hits) for name, hits in found.items() if len({pole for pole, _ in hits}) == 1}


def _compared_to(tokens: list[str]) -> str:
    """The first content word after "than" or "as ... as": what the comparison is measured against."""
    for index, token in enumerate(tokens):
        if token == "than" or (token == "as" and index >= 2 and tokens[index - 2] == "as"):
            rest = [t for t in tokens[index + 1 :] if t not in STOPWORDS]
            return rest[0] if rest else ""
    return ""


def _subject(tokens: list[str]) -> str:
    rest = [t for t in tokens if t not in STOPWORDS and not t[0].isdigit()]
    return rest[0] if rest else ""


def _swapped(claim: list[str], source: list[str]) -> bool:
    """ "man-db is faster than man" / "man is slower than man-db": the compared things trade places,
    so the source's direction reads flipped."""
    claim_other, source_other = _compared_to(claim), _compared_to(source)
    return bool(
        claim_other
        and source_other
        and claim_other != source_other
        and claim_other == _subject(source)
        and source_other == _subject(claim)
    )


def _negated(tokens: list[str], shared: set[str]) -> str:
    """The negation word of a negated shared word ("" for none): only a negation of what both sides
    say counts, so an aside ("doesn't handle dates, so ...") says nothing against the claim."""
    for index, token in enumerate(tokens):
        following = tokens[index + 1 : index + 4]
        governed = [t for t in following if stem(t) in shared]
        if token in NEGATIONS and governed:
            return " ".join(tokens[index : tokens.index(governed[0], index) + 1])
    return ""


# --- the check --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    kind: MismatchKind
    verdict: Verdict
    claim: str  # what the claim says, as written ("about ten times", "slowly", "not")
    source: str  # what the source says ("" for a figure it does not state)

    def describe(self) -> str:
        if self.kind == "negation":
            if self.claim:
                return f"the claim says '{self.claim}', the source does not"
            return f"the source says '{self.source}', the claim does not"
        if not self.source:
            return f"the claim says '{self.claim}', the source states no such figure"
        return f"the claim says '{self.claim}', the source says '{self.source}'"


@dataclass(frozen=True)
class MismatchCheck:
    mismatches: tuple[Mismatch, ...] = ()

    @property
    def contradicted(self) -> bool:
        return any(m.verdict == "contradicted" for m in self.mismatches)

    @property
    def verdict(self) -> Verdict | None:
        if not self.mismatches:
            return None
        return "contradicted" if self.contradicted else "not_stated"

    def describe(self) -> str:
        return "; ".join(m.describe() for m in self.mismatches)

    def __bool__(self) -> bool:
        return bool(self.mismatches)


def _figure_mismatches(claim: str, source: str) -> list[Mismatch]:
    claimed, cited = figures(claim), figures(source)
    out = []
    for figure in claimed:
        same_unit = [f for f in cited if f.unit == figure.unit]
        if any(_follows(figure, f) for f in same_unit):
            continue
        if not same_unit:
            # Any figure of the citation with the same value: "3" / "three times" is one statement
            # told with and without its unit; a bare year or count the citation lacks is the
            # verifier's missing-number rule, and not a contradiction.
            if any(math.isclose(figure.value, f.value, rel_tol=0.01) for f in cited):
                continue
            out.append(Mismatch("figure", "not_stated", figure.shown, ""))
            continue
        nearest = min(same_unit, key=lambda f: abs(math.log((f.value + 1e-9) / (figure.value + 1e-9))))
        verdict: Verdict = "contradicted" if all(_contradicts(figure, f) for f in same_unit) else "not_stated"
        out.append(Mismatch("figure", verdict, figure.shown, nearest.shown))
    return out


def check_claim(claim: str, source: str) -> MismatchCheck:
    """What ``claim`` says that ``source`` (its cited text, joined) does not, or says the other way."""
    mismatches = _figure_mismatches(claim, source)
    claim_tokens, source_tokens = _tokens(claim), _tokens(source)
    unbounded_claim, unbounded_source = (
        _tokens(_BOUND_WORDS.sub(" ", claim)),
        _tokens(_BOUND_WORDS.sub(" ", source)),
    )
    claim_poles, source_poles = _poles(unbounded_claim), _poles(unbounded_source)
    flip = _swapped(claim_tokens, source_tokens)
    for name, (pole, word) in claim_poles.items():
        if name in source_poles:
            other_pole, other_word = source_poles[name]
            if (pole != other_pole) != flip:
                mismatches.append(Mismatch("direction", "contradicted", word, other_word))
    shared = {stem(t) for t in claim_tokens if t not in STOPWORDS and t not in NEGATIONS} & {
        stem(t) for t in source_tokens if t not in STOPWORDS and t not in NEGATIONS
    }
    claim_not, source_not = _negated(claim_tokens, shared), _negated(source_tokens, shared)
    if bool(claim_not) != bool(source_not):
        mismatches.append(Mismatch("negation", "contradicted", claim_not, source_not))
    return MismatchCheck(tuple(mismatches))


def stated_values(text: str) -> set[float]:
    """The values of every figure of ``text``, number words included."""
    return {f.value for f in figures(text)}
