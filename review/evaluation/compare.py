"""Compare two evaluation results: per-metric deltas and the cases that got worse.

Pure functions over the stored numbers (``EvaluationResult.metrics`` and its
per-case rows). A case's quality for ranking is the mean of the per-case
numbers it has (reciprocal rank, citation F1, evidence score, answer token F1,
ROUGE-L, JAFS, judge score / 5) plus 1 or 0 for refusing exactly when it should;
the cases whose quality fell are listed first, largest fall first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from review.evaluation.evaluate import AGGREGATE_KEYS

CASE_KEYS = (
    "reciprocal_rank",
    "citation_f1",
    "evidence_score",
    "answer_token_f1",
    "rouge_l",
    "jafs",
    "answer_score",
)
_EPSILON = 1e-9


@dataclass(frozen=True)
class MetricDelta:
    name: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass(frozen=True)
class CaseDelta:
    case_id: str
    a: float | None
    b: float | None
    changes: tuple[tuple[str, object, object], ...]  # (metric, value in a, value in b)

    @property
    def delta(self) -> float:
        return (self.b or 0.0) - (self.a or 0.0)


@dataclass(frozen=True)
class Comparison:
    metrics: tuple[MetricDelta, ...]
    worse: tuple[CaseDelta, ...]
    better: tuple[CaseDelta, ...]
    unchanged: int
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]


def case_quality(row: Mapping) -> float | None:
    values = []
    for key in CASE_KEYS:
        value = row.get(key)
        if value is not None:
            values.append(value / 5.0 if key == "answer_score" else float(value))
    if "refused" in row and "answerable" in row:
        values.append(1.0 if bool(row["refused"]) != bool(row["answerable"]) else 0.0)
    return sum(values) / len(values) if values else None


def _differs(a, b) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return abs(a - b) > _EPSILON
    return a != b


def compare_results(
    metrics_a: Mapping[str, float | None],
    metrics_b: Mapping[str, float | None],
    cases_a: Mapping[str, Mapping],
    cases_b: Mapping[str, Mapping],
) -> Comparison:
    """``cases_*`` map a case id to its per-case row (as review.evaluation.score_case returns)."""
    extra = sorted((set(metrics_a) | set(metrics_b)) - set(AGGREGATE_KEYS))
    names = [key for key in AGGREGATE_KEYS if key in metrics_a or key in metrics_b] + extra
    metric_deltas = tuple(MetricDelta(name, metrics_a.get(name), metrics_b.get(name)) for name in names)
    worse, better, unchanged = [], [], 0
    for case_id in [case_id for case_id in cases_a if case_id in cases_b]:
        row_a, row_b = cases_a[case_id], cases_b[case_id]
        changes = tuple(
            (key, row_a.get(key), row_b.get(key))
            for key in (*CASE_KEYS, "refused", "gold_rank")
            if _differs(row_a.get(key), row_b.get(key))
        )
        case = CaseDelta(case_id, case_quality(row_a), case_quality(row_b), changes)
        if case.delta < -_EPSILON:
            worse.append(case)
        elif case.delta > _EPSILON:
            better.append(case)
        else:
            unchanged += 1
    return Comparison(
        metrics=metric_deltas,
        worse=tuple(sorted(worse, key=lambda c: (c.delta, c.case_id))),
        better=tuple(sorted(better, key=lambda c: (-c.delta, c.case_id))),
        unchanged=unchanged,
        only_in_a=tuple(case_id for case_id in cases_a if case_id not in cases_b),
        only_in_b=tuple(case_id for case_id in cases_b if case_id not in cases_a),
    )


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def _case_line(case: CaseDelta) -> str:
    details = ", ".join(f"{key} {_number(a)} -> {_number(b)}" for key, a, b in case.changes)
    return f"  {case.case_id}  {_number(case.a)} -> {_number(case.b)} ({_signed(case.delta)})  {details}"


def format_comparison(comparison: Comparison, label_a: str = "A", label_b: str = "B") -> str:
    width = max([len("metric"), *(len(m.name) for m in comparison.metrics)])
    head_a, head_b = label_a[:24], label_b[:24]
    col = max(10, len(head_a), len(head_b))
    lines = [f"{'metric'.ljust(width)}  {head_a.rjust(col)}  {head_b.rjust(col)}  {'delta'.rjust(8)}"]
    lines.append("-" * len(lines[0]))
    for metric in comparison.metrics:
        lines.append(
            f"{metric.name.ljust(width)}  {_number(metric.a).rjust(col)}  {_number(metric.b).rjust(col)}  "
            f"{_signed(metric.delta).rjust(8)}"
        )
    lines.append("")
    lines.append(f"Cases that got worse ({len(comparison.worse)}), worst first:")
    lines.extend(_case_line(case) for case in comparison.worse)
    if not comparison.worse:
        lines.append("  none")
    lines.append(f"Cases that got better ({len(comparison.better)}):")
    lines.extend(_case_line(case) for case in comparison.better)
    if not comparison.better:
        lines.append("  none")
    lines.append(f"Unchanged: {comparison.unchanged}")
    if comparison.only_in_a or comparison.only_in_b:
        lines.append(
            f"Only in {label_a}: {len(comparison.only_in_a)}; only in {label_b}: {len(comparison.only_in_b)}"
        )
    return "\n".join(lines) + "\n"


# --- several runs side by side (the comparison page) -------------------------------------

# Metrics where a smaller number is the better one.
LOWER_IS_BETTER = frozenset({"confidence_ece"})


@dataclass(frozen=True)
class GridRow:
    """One metric across the compared runs, and which of them did best."""

    metric: str
    values: tuple[float | None, ...]  # one per run, in the runs' order
    best: frozenset[int] = frozenset()  # the runs' positions; empty when they tie or only one has it


def metric_grid(metrics: Sequence[Mapping[str, float | None]]) -> tuple[GridRow, ...]:
    """Every metric some run has a number for, runs as columns, in AGGREGATE_KEYS order then the rest."""
    present = {key for run in metrics for key, value in run.items() if value is not None}
    names = [key for key in AGGREGATE_KEYS if key in present] + sorted(present - set(AGGREGATE_KEYS))
    rows = []
    for name in names:
        values = tuple(run.get(name) for run in metrics)
        numbers = [value for value in values if value is not None]
        best: frozenset[int] = frozenset()
        if len(numbers) > 1 and max(numbers) - min(numbers) > _EPSILON:
            target = min(numbers) if name in LOWER_IS_BETTER else max(numbers)
            best = frozenset(
                i for i, value in enumerate(values) if value is not None and abs(value - target) <= _EPSILON
            )
        rows.append(GridRow(name, values, best))
    return tuple(rows)


@dataclass(frozen=True)
class GoldCaseView:
    """What a comparison shows of a gold case."""

    case_id: str
    question: str
    reference_answer: str
    answerable: bool
    gold_evidence: tuple[str, ...]  # evidence keys, "document#label"
    evidence_texts: Mapping[str, str]


@dataclass(frozen=True)
class CitedSentence:
    key: str
    text: str
    gold: bool  # one of the case's gold evidence sentences


@dataclass(frozen=True)
class CaseAnswer:
    """One run's answer to one case; ``missing`` when the run has no result for it."""

    answer: str = ""
    refused: bool = False
    cited: tuple[CitedSentence, ...] = ()
    quality: float | None = None
    gold_rank: int | None = None  # rank of the first gold document among those retrieved
    error: str = ""
    missing: bool = False


@dataclass(frozen=True)
class CaseComparison:
    case: GoldCaseView
    answers: tuple[CaseAnswer, ...]  # one per run, in the runs' order
    spread: float  # best minus worst case quality among the runs that answered: how much they disagree


def case_answer(case: GoldCaseView, stored: Mapping | None) -> CaseAnswer:
    """A run's stored result for the case (``prediction``, ``metrics``, ``error``) as the page shows it."""
    if stored is None:
        return CaseAnswer(missing=True)
    prediction, row = stored.get("prediction") or {}, stored.get("metrics") or {}
    keys = prediction.get("cited_evidence") or ()
    texts = prediction.get("cited_texts") or ()
    gold = set(case.gold_evidence)
    cited = tuple(
        CitedSentence(key, texts[i] if i < len(texts) else case.evidence_texts.get(key, ""), key in gold)
        for i, key in enumerate(keys)
    )
    return CaseAnswer(
        answer=prediction.get("answer", ""),
        refused=bool(prediction.get("refused", False)),
        cited=cited,
        quality=case_quality(row) if row else None,
        gold_rank=row.get("gold_rank"),
        error=stored.get("error", ""),
    )


def compare_cases(
    cases: Sequence[GoldCaseView], results: Sequence[Mapping[str, Mapping]]
) -> list[CaseComparison]:
    """Each case with every run's answer; ``results[i]`` maps a case id to run i's stored result."""
    compared = []
    for case in cases:
        answers = tuple(case_answer(case, run.get(case.case_id)) for run in results)
        qualities = [a.quality for a in answers if a.quality is not None]
        spread = max(qualities) - min(qualities) if len(qualities) > 1 else 0.0
        compared.append(CaseComparison(case, answers, spread))
    return compared


def disagreeing_first(compared: Sequence[CaseComparison]) -> list[CaseComparison]:
    """The cases the runs disagree on most first; ties in case id order."""
    return sorted(compared, key=lambda c: (-c.spread, c.case.case_id))


# The per-case numbers case_quality reads: all a page needs to order every case before it
# loads the few it shows.
QUALITY_KEYS = (*CASE_KEYS, "refused", "answerable")


def case_spreads(rows: Sequence[Mapping[str, Mapping]]) -> dict[str, float]:
    """Case id -> best minus worst quality across the runs; ``rows[i]`` maps a case id to run i's
    per-case numbers (QUALITY_KEYS are enough). Every case some run has, in case id order."""
    spreads = {}
    for case_id in sorted({case_id for run in rows for case_id in run}):
        qualities = [q for run in rows if case_id in run and (q := case_quality(run[case_id])) is not None]
        spreads[case_id] = max(qualities) - min(qualities) if len(qualities) > 1 else 0.0
    return spreads


def order_cases(spreads: Mapping[str, float], *, disagreement_first: bool, differ_only: bool) -> list[str]:
    """The case ids to show, in the order chosen."""
    ids = [case_id for case_id, spread in spreads.items() if spread > _EPSILON or not differ_only]
    if disagreement_first:
        ids.sort(key=lambda case_id: (-spreads[case_id], case_id))
    return ids
