"""Shaping evaluation runs for the pages: metric tables beside the report's numbers, chart inputs.

Pure functions over loaded runs; no queries.
"""

from __future__ import annotations

from qa.pipeline.checks.reply import ReplyThresholds
from review.evaluation import glossary, ranking
from review.evaluation.evaluate import AGGREGATE_KEYS, confidence_outcomes
from review.evaluation.metrics import expected_calibration_error, reliability_bins
from review.evaluation.reference import (
    CONFIGURATION_LABELS,
    PRESET_CONFIGURATIONS,
    published_metrics,
)
from review.evaluation.selective import case_of, coverage_point, outcome_at, risk_coverage
from ui.charts import (
    BarGroup,
    Point,
    grouped_bars,
    histogram,
    lines_over_time,
    reliability_diagram,
    risk_coverage_chart,
    round_bins,
)

# One name per metric everywhere (tables, charts, the glossary page): review.evaluation.glossary.
METRIC_LABELS = {key: term.name for key, term in glossary.TERMS.items()}
CHART_METRICS = ("recall_at_1", "recall_at_5", "citation_f1", "combined")
LINE_METRICS = (
    "recall_at_1",
    "recall_at_5",
    "mrr",
    "citation_f1",
    "evidence_score",
    "combined",
    "answer_token_f1",
)


def reported(preset: str) -> dict[str, float | None]:
    """The report's published numbers for the configuration this preset reproduces, if any."""
    configuration = PRESET_CONFIGURATIONS.get(preset)
    return dict(published_metrics(configuration)) if configuration else {}


def metric_rows(metrics: dict, preset: str) -> list[dict]:
    """Every aggregate metric of a run, with the report's number and the difference where it has one;
    the headline metrics (glossary.HEADLINE_KEYS) first, each row saying what its metric measures."""
    report = reported(preset)
    rows = []
    for key in AGGREGATE_KEYS:
        value = metrics.get(key)
        theirs = report.get(key)
        rows.append(
            {
                "key": key,
                "label": METRIC_LABELS.get(key, key),
                "meaning": glossary.meaning_of(key),
                "better": glossary.TERMS[key].better if key in glossary.TERMS else "",
                "headline": key in glossary.HEADLINE_KEYS,
                "value": value,
                "report": theirs,
                "delta": None if value is None or theirs is None else value - theirs,
                "in_report": key in report,
            }
        )
    order = {key: index for index, key in enumerate(glossary.HEADLINE_KEYS)}
    return sorted(rows, key=lambda row: order.get(row["key"], len(order)))


def question_type_rows(case_metrics: list[dict]) -> tuple[list[str], list[dict]]:
    """Per question type: case count and the means of ``ranking.PER_TYPE_KEYS``.

    Runs stored before cases were typed have no ``question_type``: they give no rows.
    """
    typed = [row for row in case_metrics if row.get("question_type")]
    table = ranking.by_question_type(typed, ranking.PER_TYPE_KEYS)
    headers = [METRIC_LABELS.get(key, key) for key in ranking.PER_TYPE_KEYS]
    rows = [
        {"type": kind, "cases": int(values["cases"]), "values": [values[k] for k in ranking.PER_TYPE_KEYS]}
        for kind, values in table.items()
    ]
    return headers, rows


def stage_name(stage: str) -> str:
    """A pipeline stage's key as a heading: "answer_check" -> "Answer check"."""
    return stage.replace("_", " ").replace("-", " ").capitalize()


def latency_histograms(case_metrics: list[dict]) -> list[dict]:
    """Per stage, a histogram of the cases' times in milliseconds (stage_latency of each case), with
    the stage's name and median for a visible caption; bins are round widths (ui.charts.round_bins)."""
    by_stage: dict[str, list[float]] = {}
    for row in case_metrics:
        for stage, seconds in (row.get("stage_latency") or {}).items():
            by_stage.setdefault(stage, []).append(seconds * 1000)
    charts = []
    for stage, values in by_stage.items():
        if len(values) < 2:
            continue
        ordered = sorted(values)
        name = stage_name(stage)
        charts.append(
            {
                "stage": stage,
                "name": name,
                "cases": len(values),
                "median_ms": ordered[len(ordered) // 2],
                "svg": histogram(round_bins(values), title=f"{name}: milliseconds per case", unit="ms"),
            }
        )
    return charts


def calibration(case_metrics: list[dict]) -> dict | None:
    """The reliability diagram of the run's answer confidence (10 bins) and its ECE; None when no
    case carries a confidence (a preset without the confidence model, or a run stored before it)."""
    outcomes = confidence_outcomes(case_metrics)
    if not outcomes:
        return None
    bins = reliability_bins(outcomes, 10)
    return {
        "svg": reliability_diagram(
            bins, title="Reliability of answer confidence: predicted (x) against observed share right (y)"
        ),
        "ece": expected_calibration_error(outcomes, 10),
        "cases": len(outcomes),
        "bins": [b for b in bins if b.count],
    }


def selective_answering(case_metrics: list[dict], preset_config: dict) -> dict | None:
    """The risk-coverage curve of the run's confidence (bench/reply_thresholds.py draws the same), with
    the row at the run preset's ``answer_confidence`` marked; None when no case has a confidence."""
    if not any(row.get("confidence") is not None for row in case_metrics):
        return None
    cases = [case_of(row) for row in case_metrics]
    threshold = ReplyThresholds.of_stored(preset_config).answer_confidence
    points = risk_coverage(cases)
    return {
        "threshold": threshold,
        "at_threshold": coverage_point(cases, threshold),
        "points": points,
        "svg": risk_coverage_chart(
            points,
            title="Selective answering: share of questions shown as answers (x) against the share right (y)",
            marked=threshold,
        ),
    }


def case_rows(results: list, preset_config: dict) -> list[dict]:
    """Each case result with what its analyst saw at the run preset's ``answer_confidence``
    (``selective.outcome_at``): the cases table's "Shown as" column."""
    threshold = ReplyThresholds.of_stored(preset_config).answer_confidence
    return [{"result": result, "outcome": outcome_at(result.metrics, threshold)} for result in results]


def latency_rows(metrics: dict) -> list[dict]:
    return [
        {"stage": key.removeprefix("latency_"), "seconds": value}
        for key, value in metrics.items()
        if key.startswith("latency_") and value is not None
    ]


def configuration_label(preset: str) -> str:
    configuration = PRESET_CONFIGURATIONS.get(preset)
    return CONFIGURATION_LABELS.get(configuration, "") if configuration else ""


def presets_chart(runs: list) -> str:
    """The latest finished run of each preset, metrics as bars, the report's values as ticks."""
    latest = {}
    for run in sorted(runs, key=lambda r: r.finished_at or r.created_at):
        latest[run.preset] = run
    groups = [
        BarGroup(preset, {k: run.metrics.get(k) for k in CHART_METRICS}, reported(preset))
        for preset, run in sorted(latest.items())
    ]
    return grouped_bars(
        groups,
        [(k, METRIC_LABELS[k]) for k in CHART_METRICS],
        title="Metrics by preset (latest run of each); black ticks: the report's values",
    )


def runs_chart(runs: list, metric: str) -> str:
    """One line per preset, in name order (the order of ``chart_presets``, which the legend follows)."""
    series: dict[str, list[Point]] = {preset: [] for preset in chart_presets(runs)}
    for run in runs:
        value = run.metrics.get(metric)
        if value is not None:
            series[run.preset].append(Point(run.finished_at or run.created_at, float(value), f"run {run.pk}"))
    series = {preset: points for preset, points in series.items() if points}
    if not series:
        return ""
    # Colours go by position in the full preset list, so a preset without this metric keeps its colour.
    return lines_over_time(
        series,
        title=f"{METRIC_LABELS.get(metric, metric)} across runs over time, by preset",
        colour_of={preset: index for index, preset in enumerate(chart_presets(runs))},
    )


def chart_presets(runs: list) -> list[str]:
    return sorted({run.preset for run in runs})


def legend(labels: list[str]) -> list[dict]:
    from ui.charts import colour

    return [{"label": label, "colour": colour(index)} for index, label in enumerate(labels)]


def gold_agreement(results) -> dict:
    """How far annotators agreed on the gold a run scored against, from the gold cases' provenance.

    Counts the cases whose gold came from an annotation task (adjudicated or agreed), and only
    where the run scored the gold's current revision (an earlier one was not the task's). Their
    agreement is what the annotators reached before any reviewer decided: the ceiling a system
    can be expected to reach against this gold.
    """
    annotated = [
        (r.gold_case.provenance, r.gold_case.metadata.get("annotation"))
        for r in results
        if r.gold_case.provenance in ("adjudicated", "agreed") and r.gold_case.revision == r.gold_revision
    ]
    annotated = [(kind, a) for kind, a in annotated if a and a.get("agreement")]
    summary = {"cases": len(results), "annotated": len(annotated)}
    if not annotated:
        return summary
    figures = [a["agreement"] for _, a in annotated]
    f1s = [f["evidence_f1"] for f in figures if f.get("evidence_f1") is not None]
    summary.update(
        adjudicated=sum(kind == "adjudicated" for kind, _ in annotated),
        agreed=sum(kind == "agreed" for kind, _ in annotated),
        evidence_f1=sum(f1s) / len(f1s) if f1s else None,
        labels_agree=sum(bool(f.get("labels_agree")) for f in figures) / len(figures),
        annotators=sorted({name for _, a in annotated for name in a.get("annotators", ())}),
        candidate_set=figures[0].get("candidate_set", ""),
    )
    return summary
