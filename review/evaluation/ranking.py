"""Ranking, answer and class metrics for the retrieval lab: pure functions, no I/O.

Relevance is binary: a retrieved document is relevant when it is one of the case's
gold documents. Rankings are collapsed to distinct documents first (a chunk retriever
reaches the same document several times; its first position counts), as the
existing R@k and MRR do. Definitions follow the usual IR conventions:

- P@k: relevant documents among the first k, divided by k.
- Recall@k (``gold_recall_at_k``): the share of the gold documents found among the
  first k. (``recall_at_k`` in the evaluation rows is the report's R@k: any gold
  document among the first k, which is Hit@k.)
- Hit@k: 1 when any gold document is among the first k.
- AP@k: the mean of P@i over the ranks i <= k holding a relevant document, divided
  by min(k, number of gold documents); MAP@k is its mean over cases.
- nDCG@k: DCG with gain 1 and discount log2(rank + 1), over the ideal DCG of the
  gold documents placed first.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from review.evaluation.metrics import PRF, mean_or_none, normalize_answer, unique_in_order

RANK_CUTOFFS = (1, 5, 10, 20)
RANKING_KEYS = (
    *(f"{name}_at_{k}" for name in ("precision", "gold_recall", "hit") for k in RANK_CUTOFFS),
    "map_at_10",
    "ndcg_at_10",
)
CLASS_KEYS = tuple(
    f"{kind}_{measure}"
    for kind in ("answerable", "unanswerable")
    for measure in ("precision", "recall", "f1")
)
PER_TYPE_KEYS = ("recall_at_1", "recall_at_5", "ndcg_at_10", "citation_f1", "exact_match", "answer_token_f1")


def _top(retrieved: Sequence[str], k: int) -> tuple[str, ...]:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return unique_in_order(retrieved)[:k]


def precision_at_k(retrieved: Sequence[str], gold: Collection[str], k: int) -> float:
    gold_set = set(gold)
    return sum(1 for doc in _top(retrieved, k) if doc in gold_set) / k


def recall_fraction_at_k(retrieved: Sequence[str], gold: Collection[str], k: int) -> float | None:
    """Share of the gold documents among the first k; None without gold documents."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return sum(1 for doc in _top(retrieved, k) if doc in gold_set) / len(gold_set)


def hit_at_k(retrieved: Sequence[str], gold: Collection[str], k: int) -> float:
    gold_set = set(gold)
    return 1.0 if any(doc in gold_set for doc in _top(retrieved, k)) else 0.0


def average_precision_at_k(retrieved: Sequence[str], gold: Collection[str], k: int) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    found, total = 0, 0.0
    for rank, doc in enumerate(_top(retrieved, k), start=1):
        if doc in gold_set:
            found += 1
            total += found / rank
    return total / min(k, len(gold_set))


def ndcg_at_k(retrieved: Sequence[str], gold: Collection[str], k: int = 10) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    dcg = sum(1.0 / math.log2(rank + 1) for rank, doc in enumerate(_top(retrieved, k), 1) if doc in gold_set)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(gold_set)) + 1))
    return dcg / ideal


def ranking_row(retrieved: Sequence[str], gold: Collection[str]) -> dict[str, float | None]:
    """Every ranking metric of one case; None throughout for a case without gold documents."""
    if not gold:
        return dict.fromkeys(RANKING_KEYS)
    row: dict[str, float | None] = {}
    for k in RANK_CUTOFFS:
        row[f"precision_at_{k}"] = precision_at_k(retrieved, gold, k)
        row[f"gold_recall_at_{k}"] = recall_fraction_at_k(retrieved, gold, k)
        row[f"hit_at_{k}"] = hit_at_k(retrieved, gold, k)
    row["map_at_10"] = average_precision_at_k(retrieved, gold, 10)
    row["ndcg_at_10"] = ndcg_at_k(retrieved, gold, 10)
    return row


# --- answers -----------------------------------------------------------------------


def exact_match(prediction: str | None, reference: str | None) -> float:
    """1.0 when the normalised texts are equal. A null answer (refusal, no reference)
    matches only a null reference, as SQuAD 2.0 scores unanswerable questions."""
    predicted = normalize_answer(prediction or "")
    expected = normalize_answer(reference or "")
    return 1.0 if predicted == expected else 0.0


# --- answerable / unanswerable as two classes ---------------------------------------------


@dataclass(frozen=True)
class ClassScores:
    answerable: PRF | None
    unanswerable: PRF | None


def _prf(true_positive: int, predicted: int, actual: int) -> PRF | None:
    if predicted == 0 and actual == 0:
        return None
    precision = true_positive / predicted if predicted else 0.0
    recall = true_positive / actual if actual else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(precision, recall, f1)


def class_metrics(scores: ClassScores) -> dict[str, float | None]:
    """``CLASS_KEYS`` -> value, None where a class had nothing to measure."""
    values: dict[str, float | None] = {}
    for kind, prf in (("answerable", scores.answerable), ("unanswerable", scores.unanswerable)):
        for measure in ("precision", "recall", "f1"):
            values[f"{kind}_{measure}"] = getattr(prf, measure) if prf else None
    return values


def class_scores(outcomes: Iterable[tuple[bool, bool]]) -> ClassScores:
    """From (answered, answerable) pairs: P/R/F1 of each class.

    A refused case is predicted unanswerable; an answered one, answerable.
    """
    pairs = list(outcomes)
    answered_and_answerable = sum(1 for answered, answerable in pairs if answered and answerable)
    refused_and_unanswerable = sum(1 for answered, answerable in pairs if not answered and not answerable)
    answered = sum(1 for answered, _ in pairs if answered)
    answerable = sum(1 for _, is_answerable in pairs if is_answerable)
    return ClassScores(
        answerable=_prf(answered_and_answerable, answered, answerable),
        unanswerable=_prf(refused_and_unanswerable, len(pairs) - answered, len(pairs) - answerable),
    )


# --- question types ------------------------------------------------------------------------

_TYPE_PATTERNS = (
    ("quantity", r"\b(how (many|much|long|far|old|large|big)|what (percentage|proportion|share|number))\b"),
    ("date", r"\b(when|what year|which year|what date|since when)\b"),
    ("person", r"\b(who|whom|whose)\b"),
    ("place", r"\b(where|which (country|city|region|state))\b"),
    ("reason", r"\b(why|what caused|what led)\b"),
    ("yes/no", r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b"),
    ("description", r"\b(what|which|how)\b"),
)


def question_type(question: str) -> str:
    """A coarse type from the question's wording, for per-type breakdowns ("other" if none fits)."""
    text = question.strip().lower()
    for name, pattern in _TYPE_PATTERNS:
        if re.search(pattern, text):
            return name
    return "other"


def by_question_type(rows: Sequence[Mapping], keys: Sequence[str]) -> dict[str, dict[str, float | None]]:
    """Mean of each key per ``question_type`` row value, with the count of cases as ``cases``."""
    groups: dict[str, list[Mapping]] = defaultdict(list)
    for row in rows:
        groups[row["question_type"]].append(row)
    return {
        kind: {
            "cases": float(len(members)),
            **{key: mean_or_none(r[key] for r in members if r.get(key) is not None) for key in keys},
        }
        for kind, members in sorted(groups.items())
    }
