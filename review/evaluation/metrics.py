"""Per-case metric functions: pure, deterministic, no I/O.

Each function scores one case. :mod:`review.evaluation.evaluate` decides which
cases take part in which average; the choices for the analyst-bench quirks are
documented there.
"""

from __future__ import annotations

import re
import statistics
import string
import unicodedata
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def unique_in_order(items: Iterable[T]) -> tuple[T, ...]:
    """Drop repeats, keeping each item's first (best) position."""
    return tuple(dict.fromkeys(items))


# --- retrieval -------------------------------------------------------------


def gold_document_rank(retrieved: Sequence[str], gold_documents: Collection[str]) -> int | None:
    """1-based rank of the best-placed gold document in the document ranking.

    The ranking is ``retrieved`` with repeats collapsed to their first
    occurrence, so a retriever that returns chunks (the same document several
    times) is scored on the order in which it first reached each document.
    None when no gold document was retrieved.
    """
    gold = set(gold_documents)
    for rank, document_id in enumerate(unique_in_order(retrieved), start=1):
        if document_id in gold:
            return rank
    return None


def recall_at_k(retrieved: Sequence[str], gold_documents: Collection[str], k: int) -> float:
    """1.0 when any gold document is among the first k distinct documents, else 0.0."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    rank = gold_document_rank(retrieved, gold_documents)
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(retrieved: Sequence[str], gold_documents: Collection[str]) -> float:
    rank = gold_document_rank(retrieved, gold_documents)
    return 0.0 if rank is None else 1.0 / rank


# --- citations -------------------------------------------------------------


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def citation_prf(cited: Iterable[str], gold: Iterable[str]) -> PRF | None:
    """Precision, recall and F1 of cited against gold evidence keys, as sets.

    A key cited twice counts once. None when there is no gold evidence: the case
    has nothing to measure and stays out of the average (the report did the
    same: "questions_with_evidence"). With gold evidence, citing nothing scores
    P = R = F1 = 0, so an empty answer cannot look better than a wrong one.
    """
    gold_set = set(gold)
    if not gold_set:
        return None
    cited_set = set(cited)
    hits = len(cited_set & gold_set)
    precision = hits / len(cited_set) if cited_set else 0.0
    recall = hits / len(gold_set)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return PRF(precision, recall, f1)


# --- EvidenceScore ---------------------------------------------------------


def evidence_words(texts: Iterable[str]) -> frozenset[str]:
    """The report's "words": lowercased, whitespace-split, as a set.

    Punctuation stays attached ("Oman," and "oman" differ). This is what the
    authors' scorer did: with it every one of the 210 per-question evidence
    scores in reference-outputs/*_evaluation.json is reproduced exactly; regex
    word tokens or stripped punctuation reproduce about half.
    """
    words: set[str] = set()
    for text in texts:
        words.update(text.lower().split())
    return frozenset(words)


def evidence_score(cited_texts: Iterable[str], gold_texts: Iterable[str]) -> float:
    """|words(cited) ∩ words(gold)| / |words(gold)|, the report's EvidenceScore.

    With no gold words (a question without gold evidence) the score is 1.0 when
    the citations bring no words either, else 0.0. That is the report's "1.0 for
    an unanswerable question answered with no citations" as its scorer applied
    it: per case, on words, so citations of sentence labels that do not exist
    in the gold document also count as "no citations".
    """
    gold_words = evidence_words(gold_texts)
    cited_words = evidence_words(cited_texts)
    if not gold_words:
        return 0.0 if cited_words else 1.0
    return len(cited_words & gold_words) / len(gold_words)


def combined_score(answer_score: float | None, evidence: float) -> float | None:
    """0.5 × answer/5 + 0.5 × EvidenceScore; None without a judge score, never estimated."""
    if answer_score is None:
        return None
    return 0.5 * (answer_score / 5.0) + 0.5 * evidence


# --- answer text -----------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _is_punctuation(char: str) -> bool:
    return char in string.punctuation or unicodedata.category(char).startswith("P")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lowercase, drop punctuation and articles, squeeze spaces.

    One departure: all Unicode punctuation is dropped, not only ASCII, because
    the analyst-bench answers use typographic quotes ("Rwanda’s").
    """
    text = "".join(char for char in text.lower() if not _is_punctuation(char))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_token_f1(prediction: str, reference: str) -> float:
    """SQuAD token F1 between normalised answers, counting repeated tokens.

    When either side has no tokens the score is 1.0 if both are empty, else 0.0.
    """
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    if not predicted or not expected:
        return 1.0 if predicted == expected else 0.0
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision = common / len(predicted)
    recall = common / len(expected)
    return 2 * precision * recall / (precision + recall)


_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")


def rouge_tokens(text: str) -> list[str]:
    """The rouge-score package's default tokens: lowercase ASCII letters and digits, no stemming."""
    return _ROUGE_TOKEN.findall(text.lower())


def longest_common_subsequence(left: Sequence[str], right: Sequence[str]) -> int:
    if len(left) < len(right):
        left, right = right, left
    previous = [0] * (len(right) + 1)
    for token in left:
        current = [0]
        for j, other in enumerate(right, start=1):
            current.append(previous[j - 1] + 1 if token == other else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure (β = 1): LCS of the token sequences over their lengths.

    When either side has no tokens the score is 1.0 if both are empty, else 0.0.
    """
    predicted = rouge_tokens(prediction)
    expected = rouge_tokens(reference)
    if not predicted or not expected:
        return 1.0 if predicted == expected else 0.0
    lcs = longest_common_subsequence(predicted, expected)
    if lcs == 0:
        return 0.0
    precision = lcs / len(predicted)
    recall = lcs / len(expected)
    return 2 * precision * recall / (precision + recall)


# --- answerability ---------------------------------------------------------


@dataclass(frozen=True)
class RefusalScores:
    precision: float | None
    recall: float | None
    f1: float | None


def refusal_scores(outcomes: Iterable[tuple[bool, bool]]) -> RefusalScores:
    """Refusal as the positive class, from ``(refused, answerable)`` pairs.

    0/0 is None, never 0 or 1: precision is None when nothing was refused,
    recall is None when no case was unanswerable, and F1 (computed as
    2TP / (2TP + FP + FN), equal to the harmonic mean where both exist) is None
    only when there were neither refusals nor unanswerable cases. So a system
    that never refuses on a set with unanswerable cases gets recall 0, F1 0
    and precision None.
    """
    true_pos = false_pos = false_neg = 0
    for refused, answerable in outcomes:
        if refused and not answerable:
            true_pos += 1
        elif refused:
            false_pos += 1
        elif not answerable:
            false_neg += 1
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else None
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else None
    denominator = 2 * true_pos + false_pos + false_neg
    f1 = 2 * true_pos / denominator if denominator else None
    return RefusalScores(precision, recall, f1)


def jafs(*, refused: bool, answerable: bool, support_score: float | None) -> float | None:
    """Joint answerability-faithfulness for one case.

    1 for refusing an unanswerable case; the answer's support score for
    answering an answerable one (None when the answer was not verified, so the
    mean is not estimated from the verified part); 0 for refusing an answerable
    case or answering an unanswerable one.
    """
    if refused:
        return 0.0 if answerable else 1.0
    if not answerable:
        return 0.0
    return support_score


# --- averaging -------------------------------------------------------------


@dataclass(frozen=True)
class ReliabilityBin:
    """One equal-width bin of predicted probability: how many fell in it, what they predicted on
    average and how often what they predicted came true (both None for an empty bin)."""

    low: float
    high: float
    count: int
    mean_probability: float | None
    observed: float | None

    @property
    def gap(self) -> float | None:
        """|mean predicted - observed|: 0 for a perfectly calibrated bin."""
        return None if self.count == 0 else abs(self.mean_probability - self.observed)


def reliability_bins(pairs: Iterable[tuple[float, bool]], bins: int = 10) -> list[ReliabilityBin]:
    """The reliability diagram's data: (probability, outcome) pairs in ``bins`` equal-width bins
    of [0, 1]; a probability of exactly 1 falls in the last bin."""
    totals = [[0, 0.0, 0] for _ in range(bins)]  # count, sum of probabilities, outcomes that came true
    for probability, outcome in pairs:
        cell = totals[min(max(int(probability * bins), 0), bins - 1)]
        cell[0] += 1
        cell[1] += probability
        cell[2] += int(outcome)
    return [
        ReliabilityBin(i / bins, (i + 1) / bins, n, p / n if n else None, hits / n if n else None)
        for i, (n, p, hits) in enumerate(totals)
    ]


def expected_calibration_error(pairs: Iterable[tuple[float, bool]], bins: int = 10) -> float | None:
    """ECE of probabilities against outcomes: over ``bins`` equal-width bins of the probability,
    the size-weighted mean of |mean probability - share of outcomes that came true|. None for no pairs.
    """
    cells = reliability_bins(pairs, bins)
    total = sum(cell.count for cell in cells)
    if not total:
        return None
    return sum(cell.count * cell.gap for cell in cells if cell.count) / total


def confidence_correct(*, refused: bool, answerable: bool, citation_f1: float | None) -> bool:
    """What ``confidence`` predicts: a refusal of an unanswerable question, or an answer to an
    answerable one whose citations reach F1 >= 0.5 (no gold evidence: answering is enough)."""
    if not answerable:
        return refused
    return not refused and (citation_f1 is None or citation_f1 >= 0.5)


def mean_or_none(values: Iterable[float]) -> float | None:
    """Arithmetic mean; None for no values."""
    values = list(values)
    return sum(values) / len(values) if values else None


def strict_mean(values: Iterable[float | None]) -> float | None:
    """Mean that refuses to estimate: None if there are no values or any is None."""
    values = list(values)
    if not values or any(value is None for value in values):
        return None
    return sum(values) / len(values)


def median_or_none(values: Iterable[float]) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None
