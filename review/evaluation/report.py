"""A fixed-width comparison with the report's results table.

Per configuration, in the report's row order, up to three lines: the numbers
the report published, the report's own outputs re-scored by this package, and
ours (from the preset that reproduces that configuration). Columns default to
the report's: R@1, R@5, citation F1, answer /5, combined. ``results_table``
decides, for a benchmark and split, whether that layout applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from review.evaluation.reference import (
    CONFIGURATION_LABELS,
    CONFIGURATIONS,
    PRESET_CONFIGURATIONS,
    REPORTED_RESULTS,
    ReportedResult,
    published_metrics,
    rescore_reference,
)
from review.evaluation.types import EvaluationResult

MetricsLike = Mapping[str, float | None] | EvaluationResult
Formatter = Callable[[float], str]


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def _decimals(places: int) -> Formatter:
    return lambda value: f"{value:.{places}f}"


COLUMNS: dict[str, tuple[str, Formatter]] = {
    "recall_at_1": ("R@1", _percent),
    "recall_at_5": ("R@5", _percent),
    "mrr": ("MRR", _decimals(3)),
    "citation_precision": ("cite P", _decimals(3)),
    "citation_recall": ("cite R", _decimals(3)),
    "citation_f1": ("citation F1", _decimals(3)),
    "answer_score": ("answer /5", _decimals(2)),
    "combined": ("combined", _decimals(2)),
    "evidence_score": ("evidence", _decimals(3)),
    "answer_token_f1": ("token F1", _decimals(3)),
    "rouge_l": ("ROUGE-L", _decimals(3)),
    "refusal_precision": ("refuse P", _decimals(3)),
    "refusal_recall": ("refuse R", _decimals(3)),
    "refusal_f1": ("refuse F1", _decimals(3)),
    "jafs": ("JAFS", _decimals(3)),
}

REPORT_COLUMNS = ("recall_at_1", "recall_at_5", "citation_f1", "answer_score", "combined")
# For benchmarks the report never scored: our own numbers, with the metrics it lacked.
WIDE_COLUMNS = (
    "recall_at_1",
    "recall_at_5",
    "mrr",
    "citation_f1",
    "evidence_score",
    "answer_token_f1",
    "refusal_f1",
    "jafs",
    "answer_score",
    "combined",
)
MISSING = "-"


def _metrics(value: MetricsLike | None) -> Mapping[str, float | None] | None:
    if isinstance(value, EvaluationResult):
        return value.metrics
    return value


def _cell(metrics: Mapping[str, float | None] | None, key: str) -> str:
    value = None if metrics is None else metrics.get(key)
    if value is None:
        return MISSING
    _, formatter = COLUMNS.get(key, (key, _decimals(3)))
    return formatter(value)


def format_comparison_table(
    rescored: Mapping[str, MetricsLike] | None = None,
    ours: Mapping[str, MetricsLike] | None = None,
    *,
    columns: Sequence[str] = REPORT_COLUMNS,
    published: Mapping[str, ReportedResult] = REPORTED_RESULTS,
    title: str = "",
) -> str:
    """Plain-text table; ``rescored`` is keyed by report configuration, ``ours`` by preset.

    A source that is not given is left out; a metric a source lacks prints "-".
    Presets that map to no report configuration follow the report's rows.
    """
    rescored = rescored or {}
    ours = ours or {}
    preset_for = {configuration: preset for preset, configuration in PRESET_CONFIGURATIONS.items()}
    blocks: list[tuple[str, list[tuple[str, Mapping[str, float | None] | None]]]] = []
    for configuration in CONFIGURATIONS:
        preset = preset_for.get(configuration)
        lines: list[tuple[str, Mapping[str, float | None] | None]] = []
        if configuration in published:
            lines.append(("published", published_metrics(configuration)))
        if configuration in rescored:
            lines.append(("re-scored", _metrics(rescored[configuration])))
        if preset is not None and preset in ours:
            lines.append(("ours", _metrics(ours[preset])))
        label = CONFIGURATION_LABELS[configuration]
        if preset is not None:
            label = f"{label} ({preset})"
        blocks.append((label, lines))
    for preset, metrics in ours.items():
        if preset not in PRESET_CONFIGURATIONS:
            blocks.append((preset, [("ours", _metrics(metrics))]))

    headers = [COLUMNS.get(key, (key, None))[0] for key in columns]
    rows = [
        [label if index == 0 else "", source, *(_cell(metrics, key) for key in columns)]
        for label, lines in blocks
        for index, (source, metrics) in enumerate(lines)
    ]
    table = [["configuration", "source", *headers], *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]

    def render(row: list[str]) -> str:
        left = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        right = [cell.rjust(width) for cell, width in zip(row[2:], widths[2:], strict=True)]
        return "  ".join(left + right).rstrip()

    out = [title] if title else []
    out.append(render(table[0]))
    out.append("-" * len(render(table[0])))
    out.extend(render(row) for row in rows)
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class ResultsTable:
    text: str
    warnings: tuple[str, ...] = ()


def results_table(
    ours: Mapping[str, MetricsLike],
    *,
    title: str,
    source_format: str = "",
    source_path: str = "",
    split: str | None = None,
) -> ResultsTable:
    """Our runs' metrics (keyed by preset) as the table to print for a benchmark and split.

    Analyst-bench's train split is the one the report published: its layout,
    with the report's own outputs re-scored from the benchmark's source folder
    (the shared copy when the benchmark came from elsewhere). A re-scoring that
    cannot read those files leaves its rows out and says why in ``warnings``.
    """
    if source_format != "analyst-bench" or split != "train":
        wide = format_comparison_table(ours=ours, published={}, columns=WIDE_COLUMNS, title=title)
        return ResultsTable(wide)
    source = Path(source_path)
    data_dir = source.parent if source.name == "analyst-bench" else None
    warnings: tuple[str, ...] = ()
    try:
        rescored: Mapping[str, MetricsLike] = rescore_reference("train", data_dir=data_dir)
    except (OSError, ValueError) as exc:
        rescored, warnings = {}, (f"the report's outputs could not be re-scored: {exc}",)
    text = format_comparison_table(rescored, ours, title=f"{title} (the report's table layout)")
    return ResultsTable(text, warnings)
