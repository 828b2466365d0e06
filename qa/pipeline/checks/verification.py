"""Label every answer sentence supported / partial / unsupported against what it cites.

It also holds the cross-document disagreement check (``find_conflicts``),
which is verification of the evidence itself rather than of one sentence.

``LexicalVerifier`` needs no LLM and is the default: it is deterministic, fast,
and strict about the facts that matter most to an analyst (numbers and names).
``LLMVerifier`` asks a model for SUPPORTED / PARTIAL / NOT_SUPPORTED and reads
its reply leniently; a sentence it gives no verdict for counts as unsupported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from qa.pipeline.checks.mismatch import MismatchCheck, check_claim, stated_values
from qa.pipeline.core.lexicon import (
    CONTRAST_CONJUNCTIONS,
    MONTH_ABBREVIATIONS,
    MONTHS,
    NUMBER_SPAN_UNITS,
    alternation,
)
from qa.pipeline.core.protocols import LLM, Embedder
from qa.pipeline.core.text import (
    capitalised_names,
    content_words,
    cosine_matrix,
    coverage,
    jaccard,
    name_present,
    number_mentions,
    numbers,
    unique_sentences,
    words,
    years_named,
)
from qa.pipeline.core.types import PARTIAL, SUPPORTED, UNSUPPORTED, Passage, SourceSentence, SupportLabel
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.drafting.prompts import verification_messages


@dataclass(frozen=True)
class AnswerSpan:
    """The exact answer inside an answer sentence, as an extractive reader found it
    (``qa.pipeline.checks.spans``).

    ``start``/``end`` are character offsets into the sentence's text; ``score`` is the span's
    start+end logit over the reader's no-answer logit (positive: the reader prefers the span).
    ``guess``: the reader only points at the likeliest words and does not judge whether the sentence
    holds an answer (the project's own span reader: docs/readers.md), so the score may be negative
    and the mark is shown as a guess."""

    start: int
    end: int
    text: str
    score: float
    guess: bool = False


@dataclass(frozen=True)
class Verdict:
    label: SupportLabel
    reason: str = ""
    coverage: float | None = None
    similarity: float | None = None
    # P(the cited text entails the sentence) from the NLI model named by QA_NLI_MODEL
    # (qa.pipeline.checks.nli).
    entailment: float | None = None
    # The exact answer in the sentence, from the reader named by QA_SPAN_READER_MODEL
    # (qa.pipeline.checks.spans).
    span: AnswerSpan | None = None
    # What the sentence says that its citation does not (qa.pipeline.checks.mismatch), in plain words;
    # ``contradicted``: the citation says otherwise (another figure, direction or negation).
    mismatch: str = ""
    contradicted: bool = False
    # The LLM judge's P(the cited text supports the sentence) (qa.pipeline.checks.judged_claims);
    # None where it was not asked or failed (the reason then says why).
    judge: float | None = None


def mismatch_reason(check: MismatchCheck) -> str:
    what = "contradicts its citation" if check.contradicted else "its citation does not state this"
    return f"{what}: {check.describe()}"


def checked_for_mismatch(verdict: Verdict, text: str, cited: str) -> Verdict:
    """``verdict`` made unsupported when the sentence's figures, comparison direction or negation
    differ from its cited text, whatever judged it: overlap and an LLM alike miss "ten times more
    slowly" against "three times as quickly"."""
    if verdict.mismatch or not cited.strip():
        return verdict
    check = check_claim(text, cited)
    if not check:
        return verdict
    return replace(
        verdict,
        label=UNSUPPORTED,
        reason=mismatch_reason(check),
        mismatch=check.describe(),
        contradicted=check.contradicted,
    )


@dataclass(frozen=True)
class VerificationResult:
    verdicts: tuple[Verdict, ...]
    prompt: tuple[dict[str, str], ...] = ()
    raw_output: str = ""


class Verifier(Protocol):
    def verify(self, question: str, sentences: Sequence[DraftSentence]) -> VerificationResult: ...


_NO_CITATIONS = Verdict(UNSUPPORTED, "no citations")


def _missing_numbers(claimed: set[float], cited: set[float]) -> list[float]:
    # 1% tolerance: "3.2 million" and "3,215,000" state the same figure.
    return [n for n in claimed if not any(math.isclose(n, m, rel_tol=0.01) for m in cited)]


class LexicalVerifier:
    """Covered when the cited text contains the sentence's numbers, names and most content words.

    A number missing from the evidence makes the sentence unsupported outright:
    a wrong figure is the worst thing a grounded answer can say. A missing name
    caps it at partial. Otherwise content-word coverage (and, with an embedder,
    similarity to the cited text, which forgives paraphrase) sets the label.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        supported_coverage: float = 0.75,
        partial_coverage: float = 0.5,
        supported_similarity: float = 0.8,
        partial_similarity: float = 0.6,
    ) -> None:
        self.embedder = embedder
        self.supported_coverage = supported_coverage
        self.partial_coverage = partial_coverage
        self.supported_similarity = supported_similarity
        self.partial_similarity = partial_similarity

    def verify(self, question: str, sentences: Sequence[DraftSentence]) -> VerificationResult:
        cited_texts = [" ".join(c.text for c in s.citations) for s in sentences]
        # A sentence of the Oman entry is about Oman even when it says "the country".
        titles = [" ".join(dict.fromkeys(c.document_title for c in s.citations)) for s in sentences]
        similarities: list[float | None] = [None] * len(sentences)
        with_citations = [i for i, s in enumerate(sentences) if s.citations]
        if self.embedder is not None and with_citations:
            texts = [sentences[i].text for i in with_citations] + [cited_texts[i] for i in with_citations]
            vectors = np.asarray(self.embedder.encode(texts))
            half = len(with_citations)
            pairwise = np.diagonal(cosine_matrix(vectors[:half], vectors[half:]))
            for i, value in zip(with_citations, pairwise, strict=True):
                similarities[i] = round(float(value), 4)
        verdicts = tuple(
            self._judge(s.text, cited, title, sim) if s.citations else _NO_CITATIONS
            for s, cited, title, sim in zip(sentences, cited_texts, titles, similarities, strict=True)
        )
        return VerificationResult(verdicts)

    def _judge(self, text: str, cited: str, title: str, similarity: float | None) -> Verdict:
        share = round(coverage(content_words(text), content_words(f"{cited} {title}")), 4)
        # Number words count as stated: "3x" is in "three times as quickly".
        missing = _missing_numbers(numbers(text), numbers(cited) | stated_values(cited))
        if missing:
            shown = ", ".join(f"{n:g}" for n in missing)
            return Verdict(UNSUPPORTED, f"numbers not in the cited text: {shown}", share, similarity)
        mismatch = check_claim(text, cited)
        if mismatch:
            return Verdict(
                UNSUPPORTED,
                mismatch_reason(mismatch),
                share,
                similarity,
                mismatch=mismatch.describe(),
                contradicted=mismatch.contradicted,
            )
        sim = similarity if similarity is not None else -1.0
        partial = share >= self.partial_coverage or sim >= self.partial_similarity
        pool = set(words(cited)) | set(words(title.replace("_", " ")))
        missing_names = sorted(n for n in capitalised_names(text) if not name_present(n, pool))
        if missing_names:
            label = PARTIAL if partial else UNSUPPORTED
            return Verdict(
                label, f"names not in the cited text: {', '.join(missing_names)}", share, similarity
            )
        if share >= self.supported_coverage or (
            sim >= self.supported_similarity and share >= self.partial_coverage
        ):
            return Verdict(
                SUPPORTED, "numbers, names and content words are in the cited text", share, similarity
            )
        if partial:
            return Verdict(PARTIAL, "only part of the sentence is in the cited text", share, similarity)
        return Verdict(UNSUPPORTED, "the cited text does not state this", share, similarity)


_LABELS = r"NOT[\s_-]*SUPPORTED|UNSUPPORTED|PARTIAL\w*(?:[\s_-]*SUPPORTED)?|SUPPORTED"
_INDEXED_LABEL = re.compile(rf"\bA?(\d+)\b[^A-Za-z0-9\n]{{1,6}}({_LABELS})", re.IGNORECASE)
_ANY_LABEL = re.compile(_LABELS, re.IGNORECASE)


def parse_labels(reply: str, count: int) -> list[SupportLabel | None]:
    """One label per answer sentence from a verifier reply; None where it gave none.

    Indexed lines ("A2: PARTIAL") win; without any, bare labels are taken in order.
    """
    labels: list[SupportLabel | None] = [None] * count
    indexed = [(int(m.group(1)), m.group(2)) for m in _INDEXED_LABEL.finditer(reply)]
    indexed = [(i, label) for i, label in indexed if 1 <= i <= count]
    if indexed:
        for index, label in indexed:
            if labels[index - 1] is None:
                labels[index - 1] = _normalise_label(label)
        return labels
    for index, match in enumerate(_ANY_LABEL.finditer(reply)):
        if index < count:
            labels[index] = _normalise_label(match.group())
    return labels


def _normalise_label(label: str) -> SupportLabel:
    label = label.upper()
    if label.startswith(("NOT", "UNSUPPORTED")):
        return UNSUPPORTED
    if label.startswith("PARTIAL"):
        return PARTIAL
    return SUPPORTED


class LLMVerifier:
    """Asks the LLM (temperature 0) to label each cited sentence; uncited ones never reach it."""

    def __init__(self, llm: LLM, *, max_tokens_per_sentence: int = 12) -> None:
        self.llm = llm
        self.max_tokens_per_sentence = max_tokens_per_sentence

    def verify(self, question: str, sentences: Sequence[DraftSentence]) -> VerificationResult:
        asked = [i for i, s in enumerate(sentences) if s.citations]
        verdicts: list[Verdict] = [_NO_CITATIONS] * len(sentences)
        if not asked:
            return VerificationResult(tuple(verdicts))
        messages = verification_messages(
            question, [(sentences[i].text, sentences[i].citations) for i in asked]
        )
        max_tokens = 20 + self.max_tokens_per_sentence * len(asked)
        raw = self.llm.complete(messages, temperature=0.0, max_tokens=max_tokens)
        for i, label in zip(asked, parse_labels(raw, len(asked)), strict=True):
            verdicts[i] = (
                Verdict(label, "LLM verdict") if label else Verdict(UNSUPPORTED, "no verdict in the reply")
            )
        return VerificationResult(tuple(verdicts), tuple(messages), raw)


# --- disagreement between documents ------------------------------------------------

_MONTHS = frozenset((*MONTHS, *MONTH_ABBREVIATIONS))
_CLAUSE_BREAK = re.compile(rf"[;:()]|,\s|\s{alternation(CONTRAST_CONJUNCTIONS)}\s")


@dataclass(frozen=True)
class Fact:
    """The numbers of one kind that one clause attaches to its key words."""

    key: frozenset[str]
    kind: str
    values: frozenset[float]
    qualifiers: frozenset[float]  # the sentence's other years: "in 2010" scopes a figure
    shown: str
    sentence: SourceSentence


def extract_facts(sentence: SourceSentence) -> list[Fact]:
    years = years_named(sentence.text)
    facts = []
    for clause in _CLAUSE_BREAK.split(sentence.text):
        mentions = number_mentions(clause or "")
        if not mentions:
            continue
        key = frozenset(content_words(_NUMBER_SPANS.sub(" ", clause)) - _MONTHS)
        if not key:
            continue
        for kind in dict.fromkeys(kind for _, kind, _, _ in mentions):
            of_kind = [m for m in mentions if m[1] == kind]
            values = frozenset(value for value, _, _, _ in of_kind)
            qualifiers = frozenset(years - values)
            shown = ", ".join(clause[start:end].strip() for _, _, start, end in of_kind)
            facts.append(Fact(key, kind, values, qualifiers, shown, sentence))
    return facts


_NUMBER_SPANS = re.compile(rf"[$\u20ac\u00a3]?\d[\d,.]*\s*(?:%|{'|'.join(NUMBER_SPAN_UNITS)})?")


@dataclass(frozen=True)
class Conflict:
    answer_fact: Fact
    other_fact: Fact

    @property
    def other(self) -> SourceSentence:
        return self.other_fact.sentence

    @property
    def about(self) -> tuple[str, ...]:
        """The key words both facts share: what they disagree about."""
        return tuple(sorted(self.answer_fact.key & self.other_fact.key))

    def describe(self) -> str:
        a, b = self.answer_fact, self.other_fact
        about = " ".join(self.about)
        return (
            f"{a.sentence.document_title or a.sentence.document_id} gives {a.shown} and "
            f"{b.sentence.document_title or b.sentence.document_id} gives {b.shown} ({about})."
        )


def facts_conflict(a: Fact, b: Fact, question_words: set[str], min_key_overlap: float = 0.5) -> bool:
    """Same measured thing, different value: the conservative test for a disagreement.

    Everything must line up: different documents, the same kind of number, the
    same scoping years, key words that overlap enough and include a word of the
    question (so it is the thing asked about), and no value in common. Years
    need a closer key match, because events recur in different years far more
    often than one quantity is reported with two values.
    """
    if a.sentence.document_id == b.sentence.document_id or a.kind != b.kind:
        return False
    if a.qualifiers != b.qualifiers or not (a.key & b.key & question_words):
        return False
    needed = max(min_key_overlap, 0.75) if a.kind == "year" else min_key_overlap
    if jaccard(set(a.key), set(b.key)) < needed:
        return False
    return not any(math.isclose(x, y, rel_tol=0.02) for x in a.values for y in b.values)


def find_conflicts(
    question: str,
    evidence: Sequence[SourceSentence],
    passages: Sequence[Passage],
    *,
    min_key_overlap: float = 0.5,
    max_conflicts: int = 2,
) -> list[Conflict]:
    """Conflicts between the answer's supporting sentences and the other top passages (or each other)."""
    question_words = content_words(question)
    evidence = unique_sentences([evidence])
    answer_facts = [f for s in evidence for f in extract_facts(s) if f.key & question_words]
    evidence_ids = {e.id for e in evidence}
    others = [s for s in unique_sentences([p.sentences for p in passages]) if s.id not in evidence_ids]
    candidates = answer_facts + [f for s in others for f in extract_facts(s)]
    conflicts: list[Conflict] = []
    seen: set[int] = set()
    for fact in answer_facts:
        for other in candidates:
            if other.sentence.id in seen or other.sentence.id == fact.sentence.id:
                continue
            if facts_conflict(fact, other, question_words, min_key_overlap):
                conflicts.append(Conflict(fact, other))
                seen.update({other.sentence.id, fact.sentence.id})
                break
        if len(conflicts) >= max_conflicts:
            break
    return conflicts
