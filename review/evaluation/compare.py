"""Compare two evaluation results: per-metric deltas and the cases that got worse.

Pure functions over the stored numbers (``EvaluationResult.metrics`` and its
per-case rows). A case's quality for ranking is the mean of the per-case
numbers it has (reciprocal rank, citation F1, evidence score, answer token F1,
ROUGE-L, JAFS, judge score / 5) plus 1 or 0 for refusing exactly when it should;
the cases whose quality fell are listed first, largest fall first.
"""

from __future__ import annotations

from collections.abc import Mapping
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
