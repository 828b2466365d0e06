"""One answer from the answers of a question's parts (``qa.pipeline.dialogue.decompose``).

Each part was retrieved and answered on its own, with its own citations, so
the combined answer's sentences cite whichever documents answered their part.
Before a part's sentences are used a self-check decides whether the sources
really answer it; a part they do not answer is not dropped silently but
refused in a sentence of its own ("The sources do not say ..."), and the
answer becomes ``partial`` with that part listed as missing. The answer keeps
to 2-4 sentences: each answered part gets an equal share of what the refusals
leave, at least one sentence, taking first the sentences that hold the words
only its own part asks about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from qa.pipeline.checks.answerability import ANSWERABLE, PARTIAL_ANSWER, UNANSWERABLE, UNDERSPECIFIED
from qa.pipeline.core.lexicon import COPULAS, HOW_DEGREE_WORDS, WH_WORDS, alternation
from qa.pipeline.core.text import STOPWORDS, content_words, stem, words
from qa.pipeline.core.types import SUPPORTED, UNSUPPORTED, Answer, AnswerSentence
from qa.pipeline.dialogue.decompose import Plan, framing
from qa.pipeline.reading.questions import analyse_question

MAX_SENTENCES = 4
PartOutcome = Literal["answered", "refused", "failed"]


@dataclass(frozen=True)
class PartAnswer:
    """One part as its own job left it: its answer, or the error it failed with."""

    question: str
    answer: Answer | None
    question_id: int = 0  # the part's own question (its trace), 0 when it has none
    error: str = ""


@dataclass(frozen=True)
class PartRecord:
    """What the trace shows of one part: its answer and whether the combined answer used it."""

    question: str
    outcome: PartOutcome
    reason: str = ""  # why the self-check refused it, or the part's error
    question_id: int = 0
    answer: Answer | None = None
    used_sentences: int = 0  # how many of its sentences the combined answer kept


@dataclass(frozen=True)
class DecompositionStep:
    """The plan (before the parts run) and each part's outcome (after they are combined)."""

    plan: Plan
    parts: tuple[PartRecord, ...] = ()


def combine(plan: Plan, parts: Sequence[PartAnswer]) -> tuple[Answer, tuple[PartRecord, ...]]:
    """The combined answer and each part's record. A question that was not split keeps its one
    part's answer as it is: the self-check is for parts, the preset's own checks ran already."""
    if len(parts) == 1 and parts[0].answer is not None:
        only = parts[0]
        used = len(only.answer.sentences)
        outcome: PartOutcome = "refused" if only.answer.refused else "answered"
        return only.answer, (PartRecord(only.question, outcome, "", only.question_id, only.answer, used),)
    checked = [(part, *self_check(part)) for part in parts]
    answered = [part for part, outcome, _ in checked if outcome == "answered"]
    refusals = len(checked) - len(answered)
    share = max(1, (MAX_SENTENCES - refusals) // len(answered)) if answered else 0
    questions = [part.question for part in parts]
    sentences: list[AnswerSentence] = []
    records: list[PartRecord] = []
    for part, outcome, reason in checked:
        if outcome == "answered":
            # Two parts often find the same best sentence; it is said once, and the later part's
            # share goes to its next sentence.
            said = {s.text for s in sentences}
            unsaid = [s for s in _cited(part.answer) if s.text not in said]
            kept = _most_specific(unsaid, part.question, questions, share)
            sentences.extend(kept)
        else:
            kept = []
            sentences.append(AnswerSentence(sources_do_not_say(part.question), (), UNSUPPORTED))
        records.append(PartRecord(part.question, outcome, reason, part.question_id, part.answer, len(kept)))
    missing = tuple(r.question for r in records if r.outcome != "answered")
    answers = [part.answer for part in answered]
    documents = _interleaved([p.answer.retrieved_documents for p in parts if p.answer is not None])
    if not answers:
        answer = Answer.refusal(
            f"Refused: the sources answer none of the {len(parts)} parts of the question.",
            documents,
            kind=UNANSWERABLE,
            missing=missing,
        )
        return answer, tuple(records)
    confidences = [a.confidence for a in answers if a.confidence is not None]
    answer = Answer(
        sentences=tuple(sentences),
        disagreement=any(a.disagreement for a in answers),
        verified=all(a.verified for a in answers),
        note=_note(plan, records),
        retrieved_documents=documents,
        confidence=min(confidences) if confidences and not missing else None,
        # A part's own "partial" gap sentence is not kept (only cited sentences are), so the
        # answer is partial exactly when the self-check refused a part.
        kind=PARTIAL_ANSWER if missing else ANSWERABLE,
        missing=missing,
    )
    return answer, tuple(records)


def _most_specific(
    sentences: Sequence[AnswerSentence], question: str, questions: Sequence[str], share: int
) -> list[AnswerSentence]:
    """The ``share`` sentences holding most of the words only this part asks about, in reading
    order. "the port's revenue" beside "the port's staff": the revenue part's answer read the
    container and dredging sentences before "Operating revenue reached 312 million dollars", and
    kept those two."""
    others = set().union(*(analyse_question(q).focus for q in questions if q != question))
    own = analyse_question(question).focus - others
    ranked = sorted(range(len(sentences)), key=lambda i: -len(own & content_words(sentences[i].text)))
    return [sentences[i] for i in sorted(ranked[:share])]


def self_check(part: PartAnswer) -> tuple[PartOutcome, str]:
    """Whether the part's answer may be used: answered, not refused, its sentences supported by the
    text they cite, and every name the part asks about found in that text or its documents' titles."""
    answer = part.answer
    if answer is None:
        return "failed", part.error or "the part's job did not finish"
    if answer.refused or answer.kind in (UNANSWERABLE, UNDERSPECIFIED):
        return "refused", answer.note or "the part's answer was a refusal"
    supported = [s for s in _cited(answer) if s.support == SUPPORTED]
    if not supported:
        return "refused", "no sentence of the part's answer is supported by the text it cites"
    cited_text = " ".join(c.text + " " + c.document_title for s in supported for c in s.citations)
    found = {stem(w) for w in words(cited_text)}
    unnamed = [n for n in _names(part.question) if stem(n.lower()) not in found]
    if unnamed:
        return "refused", f"the cited sentences never mention {', '.join(unnamed)}"
    return "answered", ""


def _cited(answer: Answer) -> list[AnswerSentence]:
    """The answer's sentences that cite something (a partial answer's closing gap sentence cites nothing)."""
    return [s for s in answer.sentences if s.citations]


def _names(question: str) -> list[str]:
    """Capitalised words past the first, which name what the part is about ("Westmere", "Arlen")."""
    tokens = re.findall(r"[A-Za-z][A-Za-z'-]*", question)[1:]
    return [t.split("'")[0] for t in tokens if t[0].isupper() and t.lower() not in STOPWORDS]


_BE_QUESTION = re.compile(
    r"^(?P<wh>"
    + "|".join(w for w in WH_WORDS if w not in ("whom", "whose", "how"))
    + rf"|how(?:\s+{alternation(HOW_DEGREE_WORDS)})?)\s+"
    rf"(?P<aux>{'|'.join(COPULAS)})\s+(?P<rest>.+)$",
    re.IGNORECASE,
)


def sources_do_not_say(question: str) -> str:
    """The refusal of one part, as a sentence: "The sources do not say when Westmere was founded."
    Only "wh + be" questions are turned into an indirect question; others are quoted."""
    _, text = framing(question.strip())  # "According to the article, " is the analyst's, not the gap
    text = text.rstrip("?").strip()
    match = _BE_QUESTION.match(text)
    if match:
        rest = match["rest"].split()
        aux = match["aux"].lower()
        wh = match["wh"].lower()
        if len(rest) > 1 and re.search(r"(?:ed|en|wn|lt|ht)$", rest[-1]):  # "was ... founded"
            return f"The sources do not say {wh} {' '.join(rest[:-1])} {aux} {rest[-1]}."
        return f"The sources do not say {wh} {' '.join(rest)} {aux}."
    return f'The sources do not say: "{text}?"'


def _interleaved(rankings: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Each part's documents in turn (first of each, then second of each ...), without repeats."""
    merged: dict[str, None] = {}
    for position in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if position < len(ranking):
                merged.setdefault(ranking[position])
    return tuple(merged)


def _note(plan: Plan, records: Sequence[PartRecord]) -> str:
    answered = sum(r.outcome == "answered" for r in records)
    how = {"llm": "by the LLM", "rules": "by rules"}.get(plan.method, "")
    note = f"Answered in {len(records)} parts (split {how}): {answered} answered".replace(" (split )", "")
    refused = len(records) - answered
    return note + (f", {refused} not supported by the sources." if refused else ".")
