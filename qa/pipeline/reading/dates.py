"""Dates and sources: which documents a question may read, and which time it names.

Two separate things, both pure:

- ``DocumentScope``: the analyst's filter (a publication date range and a set of
  sources). The corpus index applies it inside its searches (qa/adapters.py:
  in the SQL of BM25 and of the pgvector search), so a filtered question gets
  its k best passages among the documents in scope rather than whatever of a
  corpus-wide top k survives the filter.
- ``question_period`` and ``prefer_period``: a question that names a date or
  period ("in July 2022", "mid-2022", "on 21 July 2022") ranks documents
  published then above others that match as well. A soft preference, not a
  filter: an undated document (a reference entry) stays eligible, and one
  published well before the period (which cannot report it) drops.
"""

from __future__ import annotations

import calendar
import datetime
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from qa.pipeline.core.lexicon import (
    MONTH_PART_WORDS,
    MONTH_PATTERN,
    ORDINAL_SUFFIXES,
    YEAR_PARTS,
    alternation,
)
from qa.pipeline.core.types import ScoredPassage

MAX_SOURCES = 20


@dataclass(frozen=True)
class DocumentScope:
    """Documents a question may read: published in [published_from, published_to] and of one of
    ``sources``. An empty side is unbounded; with a date bound, undated documents are out."""

    published_from: datetime.date | None = None
    published_to: datetime.date | None = None
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "sources", tuple(dict.fromkeys(s.strip() for s in self.sources if s.strip()))
        )
        if self.published_from and self.published_to and self.published_from > self.published_to:
            raise ValueError(
                f"the date range is empty: {self.published_from.isoformat()} is after "
                f"{self.published_to.isoformat()}"
            )

    @property
    def dated(self) -> bool:
        return self.published_from is not None or self.published_to is not None

    def __bool__(self) -> bool:
        return self.dated or bool(self.sources)

    def admits(self, published: datetime.date | None, source: str) -> bool:
        """The same test the SQL applies (the in-memory index and the tests use this one)."""
        if self.sources and source not in self.sources:
            return False
        if not self.dated:
            return True
        if published is None:
            return False
        low = self.published_from or datetime.date.min
        high = self.published_to or datetime.date.max
        return low <= published <= high

    def describe(self) -> str:
        parts = []
        if self.dated:
            low = self.published_from.isoformat() if self.published_from else "any date"
            high = self.published_to.isoformat() if self.published_to else "any date"
            parts.append(f"published {low} to {high}")
        if self.sources:
            parts.append("sources " + ", ".join(self.sources))
        return "; ".join(parts)


# --- the time a question names ------------------------------------------------------

_MONTH_NAMES = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTH_NAMES |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}
_MONTH_NAMES["sept"] = 9
_MONTH = MONTH_PATTERN
_YEAR = r"((?:1[89]|20)\d\d)"
_DAY = rf"(\d{{1,2}}){alternation(ORDINAL_SUFFIXES)}?"
# Parts of a year, as months (first, last).
_PARTS = YEAR_PARTS
# Parts of a month ("early March"), captured.
_MONTH_PART = "(" + "|".join(MONTH_PART_WORDS) + ")"
_PART = "(" + "|".join(sorted((re.escape(p) for p in _PARTS), key=len, reverse=True)) + ")"
# Most specific first: a span one pattern consumed is not read again by a vaguer one.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(rf"\b{_YEAR}-(\d{{2}})-(\d{{2}})\b")),
    ("day-month", re.compile(rf"\b{_DAY} (?:of )?{_MONTH}\.?,? {_YEAR}\b", re.I)),
    ("month-day", re.compile(rf"\b{_MONTH}\.? {_DAY},? {_YEAR}\b", re.I)),
    ("part-month", re.compile(rf"\b{_MONTH_PART}[- ](?:in )?{_MONTH}\.?,? (?:of )?{_YEAR}\b", re.I)),
    ("month", re.compile(rf"\b{_MONTH}\.?,? (?:of )?{_YEAR}\b", re.I)),
    ("part", re.compile(rf"\b(?:the )?{_PART}[- ](?:of )?{_YEAR}\b", re.I)),
    ("year", re.compile(rf"(?<![\d$£€.,-]){_YEAR}(?![\d%,.]\d|s\b|-\d)")),
)


@dataclass(frozen=True)
class Period:
    """The time a question names: every date or period it mentions, as one span of days."""

    start: datetime.date
    end: datetime.date
    mentions: tuple[str, ...]  # the words that named it, as written

    def distance_days(self, day: datetime.date) -> int:
        """0 inside the period, else how many days outside it."""
        if day < self.start:
            return (self.start - day).days
        if day > self.end:
            return (day - self.end).days
        return 0


def question_period(question: str) -> Period | None:
    """The span of the dates and periods ``question`` names; None when it names none."""
    taken: list[tuple[int, int]] = []
    spans: list[tuple[datetime.date, datetime.date, str]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(question):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            found = _span(kind, match)
            if found is not None:
                taken.append((match.start(), match.end()))
                spans.append((*found, match.group(0)))
    if not spans:
        return None
    return Period(min(s for s, _, _ in spans), max(e for _, e, _ in spans), tuple(m for _, _, m in spans))


def _span(kind: str, match: re.Match[str]) -> tuple[datetime.date, datetime.date] | None:
    groups = match.groups()
    try:
        if kind == "iso":
            day = datetime.date(int(groups[0]), int(groups[1]), int(groups[2]))
            return day, day
        if kind in ("day-month", "month-day"):
            day_text, month_text = (groups[0], groups[1]) if kind == "day-month" else (groups[1], groups[0])
            day = datetime.date(int(groups[2]), _month(month_text), int(day_text))
            return day, day
        if kind == "month":
            return _months(int(groups[1]), _month(groups[0]), _month(groups[0]))
        if kind == "part-month":
            start, end = _months(int(groups[2]), _month(groups[1]), _month(groups[1]))
            first, last = {"early": (1, 10), "mid": (11, 20), "late": (21, end.day)}[groups[0].lower()]
            return start.replace(day=first), start.replace(day=last)
        if kind == "part":
            first, last = _PARTS[groups[0].lower()]
            return _months(int(groups[1]), first, last)
        year = int(groups[0])
        return datetime.date(year, 1, 1), datetime.date(year, 12, 31)
    except (ValueError, KeyError):
        return None


def _month(text: str) -> int:
    name = text.lower().rstrip(".")
    return _MONTH_NAMES.get(name) or _MONTH_NAMES[name[:3]]


def _months(year: int, first: int, last: int) -> tuple[datetime.date, datetime.date]:
    return datetime.date(year, first, 1), datetime.date(year, last, calendar.monthrange(year, last)[1])


# --- preferring documents of that time --------------------------------------------------


@dataclass(frozen=True)
class DatePreference:
    """How far the named period moves a ranking (tuned on analyst-bench train only).

    Ranks, not scores: rerankers' scores have no common scale (the evidence
    reranker normalises its features among the candidates, so near-equal
    passages can lie far apart), while "move up to ``rank_bonus`` places" means
    the same under every preset. A passage of a document published inside the
    period moves up ``rank_bonus`` places, an undated one ``undated`` times
    that, one published outside it less the further out it lies: the scale is
    a quarter of the period's length (at least ``min_scale_days``), halved
    before the period, since an article can look back on an event, not ahead.
    """

    rank_bonus: float = 3.0
    min_scale_days: float = 7.0
    undated: float = 0.5
    depth: int = 50  # how many of the best passages may move


def date_affinity(published: datetime.date | None, period: Period, preference: DatePreference) -> float:
    """In [0, 1]: 1 inside the period, decaying with the distance outside it."""
    if published is None:
        return preference.undated
    days = period.distance_days(published)
    scale = max(preference.min_scale_days, ((period.end - period.start).days + 1) / 4)
    if published < period.start:
        scale /= 2
    return math.exp(-days / scale)


def prefer_period(
    ranked: Sequence[ScoredPassage], period: Period | None, preference: DatePreference = DatePreference()
) -> tuple[ScoredPassage, ...]:
    """``ranked`` with its head reordered toward documents published in ``period``.

    Unchanged when no period is named or no passage in the head is dated (a
    corpus without dates ranks exactly as before). A moved passage's score
    becomes its date-adjusted rank score (head length + bonus - rank, so
    higher is still better); it keeps its earlier score as
    ``scores["before_date"]`` and its affinity as ``scores["date"]``.
    """
    head, tail = list(ranked[: preference.depth]), list(ranked[preference.depth :])
    if period is None or not any(hit.passage.published for hit in head):
        return tuple(ranked)
    rescored = []
    for rank, hit in enumerate(head):
        affinity = date_affinity(hit.passage.published, period, preference)
        score = len(head) + preference.rank_bonus * affinity - rank
        scores = {**hit.scores, "before_date": hit.score, "date": round(affinity, 6)}
        rescored.append(replace(hit, score=score, scores=scores))
    rescored.sort(key=lambda hit: -hit.score)  # stable: equal scores keep their order
    return tuple(rescored + tail)
