"""Answerability: can the retrieved passages answer the question, and how sure is that?

The answer kinds are defined here, once: ``answerable``, ``partial`` (some of
what is asked is stated, some is not), ``underspecified`` (the question is too
vague to search for) and ``unanswerable``. Conversations reuse them.

``SignalAnswerability`` combines cheap signals (``AnswerabilitySignals``: the
best question-sentence cosine, document and passage cosines, whether the
question's focus words and the kind of answer it needs occur in the evidence,
agreement between the lexical and dense retrievers) with a logistic regression
whose coefficients live in ``answerability_model.json`` beside this module,
with what data fitted them (bench/answerability.py writes it). Its probability
is calibrated on that data: among questions given p = 0.8, about 80% were
answerable. ``LLMAnswerability`` asks an LLM the same question instead.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from qa.pipeline.checks.llm_judge import JUDGE_NAMES, JudgeVerdict, PassageJudge, judge_inputs
from qa.pipeline.checks.reply_rules import (
    AMOUNT_UNSTATED,
    FIGURE_UNSTATED,
    OVERVIEW,
    PART_UNSTATED,
    TOO_LITTLE_NAMED,
)
from qa.pipeline.core.model_parts import PipelineModels, default_models
from qa.pipeline.core.protocols import LLM, PassageReading, ProbabilityModel
from qa.pipeline.core.text import (
    content_words,
    main_clause,
    quantity_slots,
    question_parts,
    years_named,
)
from qa.pipeline.core.types import ScoredPassage, SourceSentence
from qa.pipeline.reading.questions import (
    QuestionAnalysis,
    analyse_question,
    names_too_little,
    slot_states_amount,
    states_answer_type,
)

if TYPE_CHECKING:
    from qa.pipeline.dialogue.question_reading import QuestionReading

AnswerKind = Literal["answerable", "partial", "underspecified", "unanswerable"]
ANSWERABLE: AnswerKind = "answerable"
PARTIAL_ANSWER: AnswerKind = "partial"
UNDERSPECIFIED: AnswerKind = "underspecified"
UNANSWERABLE: AnswerKind = "unanswerable"
ANSWER_KINDS: tuple[AnswerKind, ...] = (ANSWERABLE, PARTIAL_ANSWER, UNDERSPECIFIED, UNANSWERABLE)

MODEL_PATH = Path(__file__).with_name("answerability_model.json")
# The answerability model with the LLM judge's P(yes) among its inputs (bench/llm_judge.py --write).
JUDGED_KEY = "answerability_llm_judge"


@dataclass(frozen=True)
class AnswerabilitySignals:
    """Per-question evidence about answerability, each a plain number (the model's inputs)."""

    best_sentence_cosine: float  # best question-sentence cosine among the top passages
    second_sentence_cosine: float  # the next passage's best: is the best one alone?
    document_cosine: float  # question vs the top passage's whole document
    dense_top: float  # best dense (pooled passage) cosine among the top passages
    focus_coverage: float  # share of focus words found in the top passages or their titles
    sentence_coverage: float  # best share of focus words found in one sentence (+ its title)
    residual_coverage: float  # best share, in one sentence, of the focus words the top title lacks
    type_missing: float  # 1 when the question needs a number/date/name no relevant sentence states
    slots_missing: float  # share of asked-for amounts no sentence states
    retriever_agreement: float  # the top document is also BM25's and dense's best (1, 0.5 or 0)
    focus_size: float  # how many focus words the question has (scaled by 1/10)
    # The trained passage reader's p(answerable) for the top passage (qa.pipeline.reading.reader); 0 when not
    # read.
    reader_answerable: float = 0.0

    def vector(self, names: Sequence[str] | None = None) -> np.ndarray:
        """The values in the order a model names them (all signals by default)."""
        return np.array([getattr(self, name) for name in names or SIGNAL_NAMES], dtype=np.float64)


SIGNAL_NAMES: tuple[str, ...] = tuple(AnswerabilitySignals.__dataclass_fields__)


def _best_sentences(
    analysis: QuestionAnalysis, sentences: Sequence[SourceSentence], k: int = 3
) -> list[tuple[float, SourceSentence]]:
    """The k sentences sharing most focus words with the question (their title counts)."""
    if not analysis.focus:
        return []
    scored = []
    seen: set[str] = set()
    for sentence in sentences:
        # Overlapping passages of one document repeat sentences; a repeat would take a place of the k.
        if sentence.text in seen:
            continue
        seen.add(sentence.text)
        bag = content_words(sentence.text) | content_words(sentence.document_title)
        scored.append((len(analysis.focus & bag) / len(analysis.focus), sentence))
    scored.sort(key=lambda pair: -pair[0])
    return scored[:k]


def _agreement(ranked: Sequence[ScoredPassage]) -> float:
    """Whether BM25 alone and dense alone would also have put the top passage's document first."""
    if not ranked:
        return 0.0
    top = ranked[0].passage.document_id
    votes = 0.0
    for stage in ("bm25", "dense"):
        scored = [hit for hit in ranked if stage in hit.scores]
        if scored and max(scored, key=lambda hit: hit.scores[stage]).passage.document_id == top:
            votes += 0.5
    return votes


def answerability_signals(
    question: str,
    ranked: Sequence[ScoredPassage],
    *,
    top: int = 5,
    analysis: QuestionAnalysis | None = None,
    reader: PassageReading | None = None,
    models: PipelineModels | None = None,
    reading: QuestionReading | None = None,
) -> AnswerabilitySignals:
    """The signals; ``reader`` (None: not read) reads the top passage for ``reader_answerable``;
    ``models`` gives the entity tagger (None: ``default_models()``); ``reading`` the question as
    read once (``qa.pipeline.dialogue.question_reading``), used only when it read this very ``question``."""
    reading = reading if reading is not None and reading.question == question else None
    analysis = analysis or (reading.analysis() if reading else analyse_question(question))
    head = list(ranked[:top])
    cosines = sorted(
        (hit.scores.get("sentence_similarity", hit.scores.get("dense", 0.0)) for hit in head), reverse=True
    )
    sentences = [s for hit in head[:3] for s in hit.passage.sentences]
    pool = set()
    for hit in head[:3]:
        pool |= content_words(hit.passage.text) | content_words(hit.passage.document_title)
    needs_type = analysis.answer_type != "other"
    # The type asked for is the first part's: in "What was the port's revenue and how many staff did
    # it have?" the sentences sharing most of the whole question's words were about ports and staff,
    # none stated the revenue ("Operating revenue reached 312 million dollars"), and the question was
    # refused for a figure no sentence states.
    if analysis.parts == 1:
        typed = analysis
    else:
        typed = reading.main_analysis() if reading else analyse_question(main_clause(question))
    typed_best = _best_sentences(typed, sentences)
    type_found = any(
        states_answer_type(typed, s.text, s.document_title, models=models) for _, s in typed_best
    )
    best = typed_best if typed is analysis else _best_sentences(analysis, sentences)
    slots = reading.amounts_asked() if reading else quantity_slots(question)
    missing = sum(
        not any(slot_states_amount(slot, s.text, s.document_title) for s in sentences) for slot in slots
    )
    document_cosine = head[0].scores.get("document_similarity", 0.0) if head else 0.0
    # What the title already names (the topic) says little; the rest of the question must be in a sentence.
    residual = analysis.focus - content_words(head[0].passage.document_title) if head else analysis.focus
    residual_coverage = (
        max((len(residual & content_words(s.text)) / len(residual) for s in sentences), default=0.0)
        if residual
        else 1.0
    )
    return AnswerabilitySignals(
        best_sentence_cosine=cosines[0] if cosines else 0.0,
        second_sentence_cosine=cosines[1] if len(cosines) > 1 else 0.0,
        document_cosine=document_cosine,
        dense_top=max((hit.scores.get("dense", 0.0) for hit in head), default=0.0),
        focus_coverage=len(analysis.focus & pool) / len(analysis.focus) if analysis.focus else 0.0,
        sentence_coverage=best[0][0] if best else 0.0,
        residual_coverage=residual_coverage,
        type_missing=float(needs_type and not type_found),
        slots_missing=missing / len(slots) if slots else 0.0,
        retriever_agreement=_agreement(ranked[:50]),
        focus_size=min(len(analysis.focus), 20) / 10,
        reader_answerable=read_top(reader, question, head) if reader is not None else 0.0,
    )


def read_top(reader: PassageReading, question: str, head: Sequence[ScoredPassage]) -> float:
    """The reader's p(answerable) for the top passage (one MiniLM pass; each other passage costs as much)."""
    if not head:
        return 0.0
    passage = head[0].passage
    return reader.read(question, [(passage.document_title, [s.text for s in passage.sentences])])[0]


# --- the learned combination ---------------------------------------------------------


@dataclass(frozen=True)
class LogisticModel:
    """p = sigmoid(intercept + coef . (x - mean) / scale), fitted by bench/answerability.py.

    ``trained_on`` says which data fitted it; ``threshold`` is the probability
    below which ``default`` refuses, chosen on that data.
    """

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float = 0.5
    trained_on: str = ""
    notes: dict = field(default_factory=dict, compare=False)

    def probability(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        z = self.intercept + ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef)
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    @classmethod
    def fit(
        cls, x: np.ndarray, y: np.ndarray, names: Sequence[str], *, l2: float = 1.0, steps: int = 500
    ) -> LogisticModel:
        """Maximum likelihood with an L2 penalty, by Newton's method (a handful of features)."""
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale[scale == 0] = 1.0
        design = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
        weights = np.zeros(design.shape[1])
        penalty = np.eye(design.shape[1]) * l2
        penalty[0, 0] = 0.0  # the intercept is not shrunk
        for _ in range(steps):
            p = 1.0 / (1.0 + np.exp(-np.clip(design @ weights, -30, 30)))
            gradient = design.T @ (p - y) + penalty @ weights
            hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
            step = np.linalg.solve(hessian + 1e-9 * np.eye(len(weights)), gradient)
            weights -= step
            if np.abs(step).max() < 1e-8:
                break
        return cls(tuple(names), tuple(mean), tuple(scale), tuple(weights[1:]), float(weights[0]))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> LogisticModel:
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**{k: v for k, v in fields.items() if k in cls.__dataclass_fields__})


def load_model(path: Path | str = MODEL_PATH, key: str = "answerability") -> LogisticModel:
    with Path(path).open(encoding="utf-8") as handle:
        return LogisticModel.from_json(json.load(handle)[key])


@functools.cache
def judged_model(path: Path | str = MODEL_PATH) -> LogisticModel | None:
    """The answerability model that reads the LLM judge (read once), or None where none was fitted."""
    with Path(path).open(encoding="utf-8") as handle:
        stored = json.load(handle).get(JUDGED_KEY)
    return LogisticModel.from_json(stored) if stored else None


# --- the stage -----------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerabilityVerdict:
    """``probability``: that the passages answer the question (calibrated for the signal judge)."""

    kind: AnswerKind
    probability: float
    reason: str
    judge: str  # "signals" or "llm"
    signals: AnswerabilitySignals | None = None
    missing: tuple[str, ...] = ()  # what is asked and not stated (the parts of a partial answer)
    by_rule: bool = False  # a verdict rule decided (``rule``), not the model's probability
    rule: str = ""  # the verdict rule that decided (reply_rules.VERDICT_RULES), if one did
    llm_judge: JudgeVerdict | None = None  # the LLM judge's P(yes) per passage, when the model reads it

    @property
    def should_answer(self) -> bool:
        return self.kind == ANSWERABLE

    @property
    def plain_reason(self) -> str:
        """The reason in plain words, for the answer card: a verdict rule's reason already is one; the
        model's ("p(answerable) 0.027 < 0.139") is said without its figures, which stay in the trace."""
        if self.by_rule or self.judge != "signals":
            return self.reason
        if self.kind == ANSWERABLE:
            return "the passages found seem to answer it"
        return "none of the passages found seems to answer it"

    def to_trace(self) -> dict:
        return {
            "kind": self.kind,
            "probability": round(self.probability, 4),
            "reason": self.reason,
            "judge": self.judge,
            "signals": {k: round(v, 4) for k, v in asdict(self.signals).items()} if self.signals else None,
            "missing": list(self.missing),
            "by_rule": self.by_rule,
            **({"rule": self.rule} if self.rule else {}),
            **({"llm_judge": self.llm_judge.to_trace()} if self.llm_judge else {}),
        }


def hard_rule(
    question: str,
    ranked: Sequence[ScoredPassage],
    analysis: QuestionAnalysis,
    signals: AnswerabilitySignals,
    *,
    models: PipelineModels | None = None,
    reading: QuestionReading | None = None,
    rules_off: frozenset[str] = frozenset(),
) -> tuple[str, AnswerKind, str, tuple[str, ...]] | None:
    """(rule, kind, reason, missing parts) when a verdict rule decides without the model, else None.

    A question that asks for an amount no retrieved sentence states ("what
    was the population of Dominica in 2020") is not answerable whatever the
    cosines say: unanswerable when nothing asked for is stated, partial when
    some amounts are. ``reading``: the question as read once, used only when it read ``question``.
    The rules are reply_rules.VERDICT_RULES; one named in ``rules_off`` is skipped.
    """
    reading = reading if reading is not None and reading.question == question else None
    slots = reading.amounts_asked() if reading else quantity_slots(question)
    sentences = [s for hit in ranked[:5] for s in hit.passage.sentences]
    missing = tuple(
        slot.phrase.strip()
        for slot in slots
        if not any(slot_states_amount(slot, s.text, s.document_title) for s in sentences)
    )
    if missing and AMOUNT_UNSTATED not in rules_off:
        # Partial while something else is asked: another amount, or another part ("When did the
        # terminal open and how much did it cost?" was refused whole for want of the cost).
        kind = PARTIAL_ANSWER if len(missing) < max(len(slots), analysis.parts) else UNANSWERABLE
        return AMOUNT_UNSTATED, kind, "no passage states " + "; ".join(repr(m) for m in missing), missing
    if PART_UNSTATED not in rules_off:
        top = [s for hit in ranked[:3] for s in hit.passage.sentences]
        unstated = _parts_unstated(question, top, models)
        if unstated and len(unstated) < analysis.parts:
            # A part's person or figure is stated nowhere; the other parts may still be answered.
            reason = "; ".join(
                f"no relevant sentence states the {wanted} of {part!r}" for part, wanted in unstated
            )
            return PART_UNSTATED, PARTIAL_ANSWER, reason, tuple(part for part, _ in unstated)
    if signals.type_missing and analysis.measure and FIGURE_UNSTATED not in rules_off:
        measure = ", ".join(sorted(analysis.measure))
        reason = f"the question asks for a figure ({measure}) no relevant sentence states"
        return FIGURE_UNSTATED, UNANSWERABLE, reason, (measure,)
    return None


def _subject_named(
    analysis: QuestionAnalysis, signals: AnswerabilitySignals, ranked: Sequence[ScoredPassage]
) -> bool:
    """Whether a top sentence names every word of the subject, or, for a subject that is only a
    year ("What happened in 1994?"), a top passage names the year."""
    if analysis.focus:
        return signals.sentence_coverage == 1.0
    return any(analysis.years & years_named(hit.passage.text) for hit in ranked[:3])


def _parts_unstated(
    question: str, sentences: Sequence[SourceSentence], models: PipelineModels | None
) -> list[tuple[str, str]]:
    """(part, what it asks for) for each part of a question in parts that asks for a person or a
    named figure no relevant sentence states ("who is its prime minister" over a country profile
    naming none); [] for a question of one part, which the model and the answer check judge."""
    parts = question_parts(question)
    unstated = []
    for part in parts if len(parts) > 1 else ():
        typed = analyse_question(part)
        if typed.answer_type != "person" and not typed.measure:
            continue
        # Only a sentence sharing a word with the part can state what it asks for.
        best = [s for share, s in _best_sentences(typed, sentences) if share > 0]
        if not any(states_answer_type(typed, s.text, s.document_title, models=models) for s in best):
            unstated.append((part.rstrip("?. "), ", ".join(sorted(typed.measure)) or "person"))
    return unstated


class SignalAnswerability:
    """The no-LLM judge: signals, a logistic model, and two hard rules.

    The rules need no learning: a question that asks for an amount no
    retrieved sentence states ("what was the population of Dominica in 2020")
    is not answerable whatever the cosines say, and a question that names
    nothing to search for (no focus word, or one the best passages lack) is
    underspecified.
    """

    def __init__(
        self,
        model: ProbabilityModel | None = None,
        *,
        threshold: float | None = None,
        reader: PassageReading | None = None,
        models: PipelineModels | None = None,
        llm_judge: PassageJudge | None = None,
        rules_off: Iterable[str] = (),
    ) -> None:
        """``models``: the pipeline's models (None: ``default_models()``); ``model`` and ``reader``
        replace its answerability model and passage reader. ``llm_judge`` is asked only when the
        model reads its probability (``JUDGE_NAMES``), which a model fitted without it does not.
        ``rules_off``: the preset's ``answer.rules_off``; the verdict rules named there are skipped."""
        self.rules_off = frozenset(rules_off)
        self.models = models or default_models()
        self.model = model or self.models.answerability
        self.threshold = self.model.threshold if threshold is None else threshold
        self._reader = reader if reader is not None else self.models.reader
        self.llm_judge = llm_judge if set(JUDGE_NAMES) & set(self.model.names) else None

    @property
    def reader(self) -> PassageReading | None:
        """The passage reader when the model uses its signal (QA_READER_WEIGHTS on a site)."""
        if "reader_answerable" not in self.model.names:
            return None
        return self._reader

    def judge(
        self, question: str, ranked: Sequence[ScoredPassage], *, reading: QuestionReading | None = None
    ) -> AnswerabilityVerdict:
        """``reading``: the question as read once (``qa.pipeline.dialogue.question_reading``); it is used
        only when it
        read this very ``question`` (a part of a question is read here)."""
        reading = reading if reading is not None and reading.question == question else None
        analysis = reading.analysis() if reading else analyse_question(question)
        if TOO_LITTLE_NAMED not in self.rules_off and names_too_little(question, ranked, analysis=analysis):
            reason = "the question names too little to look for"
            return AnswerabilityVerdict(
                UNDERSPECIFIED, 0.0, reason, "signals", by_rule=True, rule=TOO_LITTLE_NAMED
            )
        if not ranked:
            return AnswerabilityVerdict(UNANSWERABLE, 0.0, "retrieval returned no passages", "signals")
        signals = answerability_signals(
            question, ranked, analysis=analysis, reader=self.reader, models=self.models, reading=reading
        )
        judged = self.llm_judge.judge(question, ranked) if self.llm_judge is not None else None
        # A judged model without an LLM to ask reads the judge as undecided (P(yes) 0.5).
        values = {**asdict(signals), **judge_inputs(judged)}
        inputs = np.array([values[name] for name in self.model.names], dtype=np.float64)
        probability = float(self.model.probability(inputs)[0])
        ruled = hard_rule(
            question, ranked, analysis, signals, models=self.models, reading=reading, rules_off=self.rules_off
        )
        if ruled is not None:
            rule, kind, reason, missing = ruled
            return AnswerabilityVerdict(
                kind,
                min(probability, 0.05),
                reason,
                "signals",
                signals,
                missing,
                by_rule=True,
                rule=rule,
                llm_judge=judged,
            )
        if OVERVIEW not in self.rules_off and analysis.overview and _subject_named(analysis, signals, ranked):
            # "Tell me about the port": the model, fitted on questions asking for one fact, reads a
            # question of one subject word as vague; a source sentence naming the subject answers it.
            reason = f"an overview of a subject a source sentence names (p(answerable) {probability:.3f})"
            return AnswerabilityVerdict(
                ANSWERABLE,
                probability,
                reason,
                "signals",
                signals,
                by_rule=True,
                rule=OVERVIEW,
                llm_judge=judged,
            )
        kind = ANSWERABLE if probability >= self.threshold else UNANSWERABLE
        reason = f"p(answerable) {probability:.3f} {'>=' if kind == ANSWERABLE else '<'} {self.threshold:.3f}"
        if judged is not None and judged.p_yes is not None:
            reason += f" (LLM judge P(yes) {judged.p_yes:.3f})"
        return AnswerabilityVerdict(kind, probability, reason, "signals", signals, llm_judge=judged)


ANSWERABILITY_PROMPT = (
    "You judge whether numbered passages answer a question. Reply with exactly two lines:\n"
    "KIND: one of answerable, partial, underspecified, unanswerable\n"
    "PROBABILITY: a number from 0 to 1 that the passages answer the question\n"
    "answerable: the passages state the answer. partial: they state part of it. "
    "underspecified: the question is too vague to answer. unanswerable: the passages do not state it, "
    "even if they are about the same topic. Do not use outside knowledge."
)
_KIND_LINE = re.compile(r"kind\s*:\s*\**\s*(answerable|partial|underspecified|unanswerable)", re.IGNORECASE)
_PROBABILITY_LINE = re.compile(r"probability\s*:\s*\**\s*([01](?:\.\d+)?|\.\d+)", re.IGNORECASE)


def answerability_messages(
    question: str, ranked: Sequence[ScoredPassage], *, passages: int = 3
) -> list[dict]:
    blocks = [
        f"[{number}] {hit.passage.document_title}: {hit.passage.text}"
        for number, hit in enumerate(ranked[:passages], start=1)
    ]
    user = "Passages:\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}"
    return [{"role": "system", "content": ANSWERABILITY_PROMPT}, {"role": "user", "content": user}]


def parse_answerability(reply: str) -> tuple[AnswerKind, float] | None:
    """(kind, probability) from the reply; None when it names no kind. A missing probability
    reads as 0.9 for answerable, 0.5 for partial and 0.1 otherwise."""
    kind_match = _KIND_LINE.search(reply)
    if not kind_match:
        return None
    kind: AnswerKind = kind_match.group(1).lower()  # type: ignore[assignment]
    probability_match = _PROBABILITY_LINE.search(reply)
    if probability_match:
        probability = min(max(float(probability_match.group(1)), 0.0), 1.0)
    else:
        probability = {ANSWERABLE: 0.9, PARTIAL_ANSWER: 0.5}.get(kind, 0.1)
    return kind, probability


class LLMAnswerability:
    """The LLM judge. An unreadable reply falls back to ``fallback`` (the signal judge), never a guess."""

    def __init__(self, llm: LLM, *, fallback: SignalAnswerability | None = None, passages: int = 3) -> None:
        self.llm, self.fallback, self.passages = llm, fallback, passages

    def judge(
        self, question: str, ranked: Sequence[ScoredPassage], *, reading: QuestionReading | None = None
    ) -> AnswerabilityVerdict:
        if not ranked:
            return AnswerabilityVerdict(UNANSWERABLE, 0.0, "retrieval returned no passages", "llm")
        messages = answerability_messages(question, ranked, passages=self.passages)
        reply = self.llm.complete(messages, temperature=0.0, max_tokens=30)
        parsed = parse_answerability(reply)
        if parsed is None:
            if self.fallback is not None:
                return self.fallback.judge(question, ranked, reading=reading)
            return AnswerabilityVerdict(UNANSWERABLE, 0.0, f"unreadable LLM reply: {reply[:80]!r}", "llm")
        kind, probability = parsed
        return AnswerabilityVerdict(kind, probability, f"LLM: {kind} ({probability:.2f})", "llm")


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))
