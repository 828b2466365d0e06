"""The question read once: one frozen value every later stage reads instead of parsing it again.

``read_question`` runs the question analysers that already exist (``questions``,
``dates``, ``text``, ``decompose``) over the question as searched (a follow-up's
rewrite, else the question as asked) and keeps what they found: the kind of
answer asked for, the words an answer must be about, its parts, the amounts
and the period it names, the names in it, the references a follow-up made to
earlier turns and the words that only frame it. It holds no word list of its
own: those live in ``qa.pipeline.core.lexicon``.

The value is stored in the run (``PipelineRun.reading``), so it is JSON-ready:
sets are kept as sorted tuples and dates as ISO strings, and ``analysis()``,
``period()`` and ``amounts_asked()`` give back the analysers' own values, equal
to what re-parsing would give. ``with_reading`` sets it on a run once, where
retrieval starts; ``reading_of`` is for code that may meet a run stored before
the field existed.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from qa.pipeline.core import lexicon
from qa.pipeline.core.text import (
    META_WORDS,
    QuantitySlot,
    capitalised_names,
    main_clause,
    quantity_slots,
    question_parts,
    stem,
    words,
)
from qa.pipeline.dialogue.conversation import Rewrite
from qa.pipeline.dialogue.decompose import framing
from qa.pipeline.reading.dates import Period, question_period
from qa.pipeline.reading.questions import AnswerType, QuestionAnalysis, analyse_question, overview_subject

if TYPE_CHECKING:
    from qa.pipeline.flow.run import PipelineRun

# Words that frame a question without naming what it is about: the question words, the source-talk
# words, and the focus words gaps.py treats as the question's own framing (each list's source is in
# the lexicon).
_FRAMING_WORDS = frozenset(lexicon.QUESTION_WORDS) | META_WORDS | frozenset(lexicon.FOCUS_FRAMING_WORDS)


@dataclass(frozen=True)
class ClauseReading:
    """``questions.QuestionAnalysis`` in stored form (sets as sorted tuples)."""

    text: str
    answer_type: AnswerType = "other"
    focus: tuple[str, ...] = ()
    measure: tuple[str, ...] = ()
    clauses: int = 1  # clauses joined by "and"/"or" that each ask something
    years: tuple[float, ...] = ()
    overview: bool = False

    @classmethod
    def of(cls, analysis: QuestionAnalysis) -> ClauseReading:
        return cls(
            analysis.question,
            analysis.answer_type,
            tuple(sorted(analysis.focus)),
            tuple(sorted(analysis.measure)),
            analysis.parts,
            tuple(sorted(analysis.years)),
            analysis.overview,
        )

    def analysis(self) -> QuestionAnalysis:
        """The analysis ``analyse_question(text)`` gives."""
        return QuestionAnalysis(
            self.text,
            self.answer_type,
            frozenset(self.focus),
            frozenset(self.measure),
            self.clauses,
            frozenset(self.years),
            self.overview,
        )


@dataclass(frozen=True)
class NamedPeriod:
    """``dates.Period`` in stored form: the span of days the question names, and the words naming it."""

    start: str  # ISO date
    end: str
    mentions: tuple[str, ...] = ()

    def period(self) -> Period:
        return Period(
            datetime.date.fromisoformat(self.start), datetime.date.fromisoformat(self.end), self.mentions
        )

    def shown(self) -> str:
        """As the trace shows it: "2022-05-01 to 2022-08-31 (mid-2022)"."""
        return f"{self.start} to {self.end} ({', '.join(self.mentions)})"


@dataclass(frozen=True)
class AmountAsked:
    """``text.QuantitySlot`` in stored form: one amount the question asks for."""

    phrase: str
    kind: str  # "percent" or "amount"
    focus: tuple[str, ...] = ()  # stemmed words naming what is counted

    def slot(self) -> QuantitySlot:
        return QuantitySlot(self.phrase, self.kind, frozenset(self.focus))


@dataclass(frozen=True)
class TurnReferences:
    """What a follow-up pointed back at, as its rewrite (``conversation.Rewrite``) resolved it."""

    resolved: tuple[tuple[str, str], ...] = ()  # (words in the question, what they stand for)
    unresolved: tuple[str, ...] = ()  # references nothing earlier names
    definite: tuple[str, ...] = ()  # "the X" phrases nothing earlier names
    open: tuple[str, ...] = ()  # definite phrases nothing pins down (qa.pipeline.dialogue.references)
    carried: tuple[str, ...] = ()  # subjects added from earlier turns


@dataclass(frozen=True)
class QuestionReading:
    """One question as read. ``question`` is the text read: a follow-up's standalone rewrite, else
    the question as asked (``asked``)."""

    question: str
    asked: str = ""
    answer_type: AnswerType = "other"
    focus: tuple[str, ...] = ()  # stemmed content words an answer must be about
    measure: tuple[str, ...] = ()  # the measure a number answer must mention ("population")
    clauses: int = 1  # ``QuestionAnalysis.parts``
    years: tuple[float, ...] = ()
    subject: str = ""  # what an overview question asks about ("the port"); "" for a particular ask
    overview: bool = False
    parts: tuple[str, ...] = ()  # each part of a question in parts (``text.question_parts``)
    # The first part read alone, when there are several: the kind of answer asked for is its kind.
    main: ClauseReading | None = None
    amounts: tuple[AmountAsked, ...] = ()
    period: NamedPeriod | None = None
    names: tuple[str, ...] = ()  # capitalised words likely to name a place, person or body (lower-cased)
    references: TurnReferences | None = None  # None: a first question
    framing: str = ""  # an opening such as "According to the article, "
    framing_words: tuple[str, ...] = ()  # the question's words that only frame it, in order

    def analysis(self) -> QuestionAnalysis:
        """What ``analyse_question(self.question)`` gives."""
        return ClauseReading(
            self.question,
            self.answer_type,
            self.focus,
            self.measure,
            self.clauses,
            self.years,
            self.overview,
        ).analysis()

    def main_analysis(self) -> QuestionAnalysis:
        """The first part's analysis (``analyse_question(main_clause(question))``); the whole
        question's for a question in one part."""
        return self.main.analysis() if self.main is not None else self.analysis()

    def named_period(self) -> Period | None:
        """What ``dates.question_period(self.question)`` gives."""
        return self.period.period() if self.period is not None else None

    def amounts_asked(self) -> list[QuantitySlot]:
        """What ``text.quantity_slots(self.question)`` gives."""
        return [amount.slot() for amount in self.amounts]


def read_question(question: str, *, rewrite: Rewrite | None = None, standalone: str = "") -> QuestionReading:
    """``question`` as asked, read once. For a follow-up, ``rewrite`` is its standalone rewrite and
    ``standalone`` the question searched (the rewrite's, unless a caller named it alone): that is the
    text read, as retrieval searches it and answering answers it."""
    text = standalone or (rewrite.question if rewrite is not None else "") or question
    analysis = ClauseReading.of(analyse_question(text))
    main = ClauseReading.of(analyse_question(main_clause(text))) if analysis.clauses > 1 else None
    period = question_period(text)
    opening, _ = framing(text)
    references = None
    if rewrite is not None:
        references = TurnReferences(
            resolved=rewrite.resolved,
            unresolved=rewrite.unresolved,
            definite=rewrite.definite,
            open=rewrite.open_references,
            carried=rewrite.carried,
        )
    return QuestionReading(
        question=text,
        asked=question,
        answer_type=analysis.answer_type,
        focus=analysis.focus,
        measure=analysis.measure,
        clauses=analysis.clauses,
        years=analysis.years,
        subject=(overview_subject(text) or "") if analysis.overview else "",
        overview=analysis.overview,
        parts=tuple(question_parts(text)),
        main=main,
        amounts=tuple(AmountAsked(s.phrase, s.kind, tuple(sorted(s.focus))) for s in quantity_slots(text)),
        period=NamedPeriod(period.start.isoformat(), period.end.isoformat(), period.mentions)
        if period
        else None,
        names=tuple(sorted(capitalised_names(text))),
        references=references,
        framing=opening,
        framing_words=tuple(w for w in words(text) if w in _FRAMING_WORDS or stem(w) in _FRAMING_STEMS),
    )


_FRAMING_STEMS = frozenset(stem(w) for w in lexicon.FOCUS_FRAMING_WORDS)


def reading_of(run: PipelineRun) -> QuestionReading:
    """The run's reading; read now for a run stored before readings were kept."""
    if run.reading is not None:
        return run.reading
    return read_question(run.question, rewrite=run.conversation, standalone=run.standalone)


def with_reading(run: PipelineRun) -> PipelineRun:
    """The run with its question read (once: a run already read keeps its reading)."""
    if run.reading is not None:
        return run
    return replace(run, reading=reading_of(run))
