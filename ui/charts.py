"""Inline SVG charts rendered on the server: no JavaScript, no chart library.

Pure functions from numbers to SVG markup. Every text is escaped here, so the
templates may mark the result safe. Each chart carries a <title> and <desc>
for screen readers; the pages also show the same numbers in a table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from html import escape

# Colour-blind-safe palette (Okabe-Ito), in a fixed order.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True)
class BarGroup:
    label: str  # e.g. a preset
    values: dict[str, float | None]  # metric -> value in [0, 1]
    reference: dict[str, float | None]  # metric -> the report's value, drawn as a tick


def _share_gridline(share: float, y: float, left: int | float, right_edge: int | float) -> list[str]:
    """A horizontal grid line at a share between 0 and 1, labelled on the left axis."""
    return [
        f'<line class="grid" x1="{left}" x2="{right_edge}" y1="{y:.1f}" y2="{y:.1f}"/>',
        f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{share:.1f}</text>',
    ]


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def grouped_bars(
    groups: list[BarGroup], metrics: list[tuple[str, str]], *, title: str, width: int = 720, height: int = 260
) -> str:
    """One group of bars per preset, one bar per metric; a black tick marks the report's value."""
    if not groups:
        return ""
    left, right, top, bottom = 40, 10, 12, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    group_w = plot_w / len(groups)
    bar_w = max(4.0, min(26.0, (group_w - 12) / max(1, len(metrics))))
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="chart-bars-title chart-bars-desc" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="chart-bars-title">{escape(title)}</title>',
        '<desc id="chart-bars-desc">'
        + escape(
            "; ".join(
                f"{g.label}: " + ", ".join(f"{name} {_fmt(g.values.get(key))}" for key, name in metrics)
                for g in groups
            )
        )
        + "</desc>",
    ]
    for tick in range(0, 11, 2):
        y = top + plot_h - plot_h * tick / 10
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick / 10:.1f}</text>')
    parts.append(
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
    )
    for gi, group in enumerate(groups):
        x0 = left + gi * group_w + (group_w - bar_w * len(metrics)) / 2
        for mi, (key, name) in enumerate(metrics):
            value = group.values.get(key)
            x = x0 + mi * bar_w
            if value is None:
                parts.append(
                    f'<text x="{x + bar_w / 2 - 1:.1f}" y="{top + plot_h - 4}" text-anchor="middle" '
                    f'font-size="10" fill="#6b7280">n/a</text>'
                )
            else:
                h = plot_h * max(0.0, min(1.0, value))
                parts.append(
                    f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
                    f'fill="{colour(mi)}">'
                    f"<title>{escape(group.label)} {escape(name)}: {_fmt(value)}</title></rect>"
                )
            reference = group.reference.get(key)
            if reference is not None:
                y = top + plot_h - plot_h * max(0.0, min(1.0, reference))
                parts.append(
                    f'<line x1="{x - 1:.1f}" x2="{x + bar_w - 1:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                    'stroke="#111" '
                    f'stroke-width="2.5"><title>report {escape(name)}: {_fmt(reference)}</title></line>'
                )
        label_x = left + gi * group_w + group_w / 2
        parts.append(
            f'<text x="{label_x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
            f"{escape(group.label)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Point:
    when: datetime
    value: float
    label: str  # shown on hover: run id, preset...


def lines_over_time(
    series: dict[str, list[Point]],
    *,
    title: str,
    width: int = 720,
    height: int = 240,
    colour_of: dict[str, int] | None = None,
) -> str:
    """One line per series (e.g. per preset) of a 0..1 metric over the runs' finishing times.

    ``colour_of`` maps a series to its palette position (default: its position in ``series``), so a
    legend drawn elsewhere uses the same colours.
    """
    points = [p for values in series.values() for p in values]
    if not points:
        return ""
    left, right, top, bottom = 40, 12, 12, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    start = min(p.when for p in points).timestamp()
    end = max(p.when for p in points).timestamp()
    span = end - start or 1.0

    def x_of(point: Point) -> float:
        return left + (plot_w * (point.when.timestamp() - start) / span if end > start else plot_w / 2)

    def y_of(value: float) -> float:
        return top + plot_h - plot_h * max(0.0, min(1.0, value))

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="chart-lines-title chart-lines-desc" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="chart-lines-title">{escape(title)}</title>',
        '<desc id="chart-lines-desc">'
        + escape(
            "; ".join(
                f"{name}: " + ", ".join(f"{p.label} {_fmt(p.value)}" for p in values)
                for name, values in series.items()
            )
        )
        + "</desc>",
    ]
    for tick in range(0, 11, 2):
        parts.extend(_share_gridline(tick / 10, y_of(tick / 10), left, width - right))
    parts.append(
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
    )
    first, last = min(points, key=lambda p: p.when), max(points, key=lambda p: p.when)
    parts.append(
        f'<text x="{left}" y="{height - 10}" text-anchor="start">'
        f"{escape(first.when.strftime('%d %b %H:%M'))}</text>"
    )
    if end > start:
        parts.append(
            f'<text x="{width - right}" y="{height - 10}" text-anchor="end">'
            f"{escape(last.when.strftime('%d %b %H:%M'))}</text>"
        )
    for position, (name, values) in enumerate(series.items()):
        index = (colour_of or {}).get(name, position)
        ordered = sorted(values, key=lambda p: p.when)
        path = " ".join(f"{x_of(p):.1f},{y_of(p.value):.1f}" for p in ordered)
        if len(ordered) > 1:
            parts.append(f'<polyline fill="none" stroke="{colour(index)}" stroke-width="2" points="{path}"/>')
        for p in ordered:
            parts.append(
                f'<circle cx="{x_of(p):.1f}" cy="{y_of(p.value):.1f}" r="4" fill="{colour(index)}">'
                f"<title>{escape(name)} · {escape(p.label)}: {_fmt(p.value)}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    count: int


def bins_of(values: list[float], *, count: int = 20, upper_quantile: float = 0.99) -> list[Bin]:
    """Equal-width bins from 0 to the ``upper_quantile`` value; the last bin also takes the tail."""
    if not values:
        return []
    ordered = sorted(values)
    top = ordered[min(len(ordered) - 1, int(upper_quantile * len(ordered)))] or ordered[-1] or 1.0
    width = top / count
    counts = [0] * count
    for value in ordered:
        counts[min(count - 1, int(value / width))] += 1
    return [Bin(i * width, (i + 1) * width, n) for i, n in enumerate(counts)]


def round_step(raw: float) -> float:
    """The smallest 1, 2 or 5 x 10^k at or above ``raw``: bin widths a reader can add up."""
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5):
        if multiple * power >= raw * (1 - 1e-9):
            return multiple * power
    return 10 * power


def round_bins(values: list[float], *, most: int = 12, upper_quantile: float = 0.99) -> list[Bin]:
    """Bins of one round width (round_step) from 0 to the ``upper_quantile`` value, about as many as
    the square root of the number of values (5 to ``most``); the last bin also takes the tail."""
    if not values:
        return []
    ordered = sorted(values)
    top = ordered[min(len(ordered) - 1, int(upper_quantile * len(ordered)))] or ordered[-1] or 1.0
    wanted = min(most, max(5, math.ceil(math.sqrt(len(ordered)))))
    step = round_step(top / wanted)
    count = max(1, math.ceil(top / step - 1e-9))
    counts = [0] * count
    for value in ordered:
        counts[min(count - 1, int(value / step))] += 1
    return [Bin(i * step, (i + 1) * step, n) for i, n in enumerate(counts)]


def bin_number(value: float, width: float) -> str:
    """A bin edge with as many decimals as the bin width needs: 0.05-0.1 ms, never "0-0 ms"."""
    decimals = max(0, -math.floor(math.log10(width))) if 0 < width < 1 else 0
    return f"{value:,.{decimals}f}"


def histogram(bins: list[Bin], *, title: str, unit: str, width: int = 720, height: int = 220) -> str:
    """Bars of counts per bin; the x axis in ``unit`` (words, ms ...), each bin's edges on hover."""
    if not bins or not any(b.count for b in bins):
        return ""
    left, right, top, bottom = 48, 12, 12, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(b.count for b in bins)
    bar_w = plot_w / len(bins)
    step = bins[0].high - bins[0].low

    def edges(b: Bin) -> str:
        return f"{bin_number(b.low, step)}-{bin_number(b.high, step)} {unit}"

    chart_id = "hist-" + "".join(c if c.isalnum() else "-" for c in title.lower())[:40]
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{chart_id}-title {chart_id}-desc" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<desc id="{chart_id}-desc">{escape("; ".join(f"{edges(b)}: {b.count}" for b in bins))}</desc>',
        f'<text x="{left - 6}" y="{top + 8}" text-anchor="end">{peak}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end">0</text>',
    ]
    for index, b in enumerate(bins):
        bar_h = plot_h * b.count / peak
        x, y = left + index * bar_w, top + plot_h - bar_h
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{max(1.0, bar_w - 2):.1f}" height="{bar_h:.1f}" '
            f'fill="{colour(0)}"><title>{escape(edges(b))}: {b.count}</title></rect>'
        )
    parts.append(
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
    )
    # Every bin's lower edge when there is room for it (a dozen bins), else the start and the middle.
    ticks = range(len(bins)) if len(bins) <= 12 else (0, len(bins) // 2)
    for index in ticks:
        x = left + index * bar_w
        label = bin_number(bins[index].low, step)
        parts.append(f'<text x="{x:.1f}" y="{height - 12}" text-anchor="start">{label}</text>')
    last = f"{bin_number(bins[-1].high, step)}+ {escape(unit)}"
    parts.append(f'<text x="{width - right}" y="{height - 12}" text-anchor="end">{last}</text>')
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class ScatterPoint:
    x: float
    y: float
    group: str  # coloured by group (a document); groups past the palette are grey
    label: str  # shown on hover


def scatter(points: list[ScatterPoint], *, title: str, width: int = 720, height: int = 420) -> str:
    """A 2-D map: the first groups (by size) get palette colours, the rest grey."""
    if not points:
        return ""
    sizes: dict[str, int] = {}
    for p in points:
        sizes[p.group] = sizes.get(p.group, 0) + 1
    coloured = {
        g: colour(i) for i, g in enumerate(sorted(sizes, key=lambda g: -sizes[g])[: len(PALETTE) - 1])
    }
    xs, ys = [p.x for p in points], [p.y for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    pad = 10

    def at(value, low, high, size):
        return pad + (size - 2 * pad) * ((value - low) / ((high - low) or 1.0))

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-labelledby="scatter-title '
        'scatter-desc" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="scatter-title">{escape(title)}</title>',
        '<desc id="scatter-desc">'
        + escape(
            f"{len(points)} points; coloured groups: " + ", ".join(f"{g} ({sizes[g]})" for g in coloured)
        )
        + "</desc>",
    ]
    for p in points:
        fill = coloured.get(p.group, "#999999")
        parts.append(
            f'<circle cx="{at(p.x, x0, x1, width):.1f}" cy="{height - at(p.y, y0, y1, height):.1f}" r="2.5" '
            f'fill="{fill}" fill-opacity="0.75"><title>{escape(p.group)}: {escape(p.label)}</title></circle>'
        )
    parts.append("</svg>")
    return "".join(parts)


def reliability_diagram(bins: list, *, title: str, width: int = 420, height: int = 360) -> str:
    """Predicted probability (x) against how often it came true (y), one bar per bin.

    ``bins`` are ``review.evaluation.metrics.ReliabilityBin``s. A calibrated
    model's bars reach the dashed diagonal; each bar is drawn at its bin's
    observed share, a dot marks the bin's mean prediction, and the count sits
    under the bar, so a tall bar of two cases is not read as evidence.
    """
    if not any(b.count for b in bins):
        return ""
    left, right, top, bottom = 44, 12, 12, 52
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(value: float) -> float:
        return left + plot_w * value

    def y_of(value: float) -> float:
        return top + plot_h - plot_h * value

    parts = [
        f'<svg class="chart reliability" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="reliability-title reliability-desc" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="reliability-title">{escape(title)}</title>',
        '<desc id="reliability-desc">'
        + escape("; ".join(_bin_label(b) for b in bins if b.count))
        + "</desc>",
    ]
    for tick in range(0, 11, 2):
        parts.extend(_share_gridline(tick / 10, y_of(tick / 10), left, width - right))
        parts.append(
            f'<text x="{x_of(tick / 10):.1f}" y="{top + plot_h + 14}" text-anchor="middle">'
            f"{tick / 10:.1f}</text>"
        )
    parts.append(
        f'<line x1="{x_of(0):.1f}" y1="{y_of(0):.1f}" x2="{x_of(1):.1f}" y2="{y_of(1):.1f}" '
        'stroke="#6b7280" stroke-dasharray="4 3"><title>perfect calibration</title></line>'
    )
    for b in bins:
        x, w = x_of(b.low), plot_w * (b.high - b.low)
        centre = x + w / 2
        parts.append(
            f'<text class="count" x="{centre:.1f}" y="{top + plot_h + 28}" text-anchor="middle" '
            f'font-size="10">{b.count}</text>'
        )
        if not b.count:
            continue
        label = _bin_label(b)
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{y_of(b.observed):.1f}" width="{w - 2:.1f}" '
            f'height="{plot_h * b.observed:.1f}" fill="{colour(0)}" fill-opacity="0.8">'
            f"<title>{escape(label)}</title></rect>"
        )
        parts.append(
            f'<circle cx="{x_of(b.mean_probability):.1f}" cy="{y_of(b.mean_probability):.1f}" r="3" '
            f'fill="{colour(1)}"><title>{escape(label)}</title></circle>'
        )
    parts.append(
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle">'
        "predicted confidence (cases per bin under the axis)</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def _bin_label(b) -> str:
    predicted, right = _fmt(b.mean_probability), _fmt(b.observed)
    return f"{b.low:.1f}-{b.high:.1f}: {b.count} cases, predicted {predicted}, right {right}"


def risk_coverage_chart(points: list, *, title: str, marked: float | None = None, width: int = 420,
                        height: int = 360) -> str:  # fmt: skip
    """Share of questions shown as answers (x) against the share of those that are right (y), one
    dot per confidence threshold (``review.evaluation.selective.CoveragePoint``), joined from the
    lowest threshold (most shown) to the highest; ``marked`` rings the preset's threshold."""
    drawn = [p for p in points if p.right is not None]
    if not drawn:
        return ""
    left, right, top, bottom = 44, 12, 12, 40
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(value: float) -> float:
        return left + plot_w * value

    def y_of(value: float) -> float:
        return top + plot_h - plot_h * value

    def label(p) -> str:
        return f"threshold {p.threshold:.2f}: {p.shown:.0%} shown, {p.right:.0%} of them right ({p.count})"

    parts = [
        f'<svg class="chart risk-coverage" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="risk-coverage-title risk-coverage-desc" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="risk-coverage-title">{escape(title)}</title>',
        '<desc id="risk-coverage-desc">' + escape("; ".join(label(p) for p in drawn)) + "</desc>",
    ]
    for tick in range(0, 11, 2):
        parts.extend(_share_gridline(tick / 10, y_of(tick / 10), left, width - right))
        parts.append(
            f'<text x="{x_of(tick / 10):.1f}" y="{top + plot_h + 14}" text-anchor="middle">'
            f"{tick / 10:.1f}</text>"
        )
    path = " ".join(f"{x_of(p.shown):.1f},{y_of(p.right):.1f}" for p in drawn)
    parts.append(f'<polyline points="{path}" fill="none" stroke="{colour(0)}" stroke-width="1.5"/>')
    for p in drawn:
        ring = marked is not None and abs(p.threshold - marked) < 1e-9
        parts.append(
            f'<circle cx="{x_of(p.shown):.1f}" cy="{y_of(p.right):.1f}" r="{5 if ring else 3}" '
            f'fill="{colour(1) if ring else colour(0)}"><title>{escape(label(p))}</title></circle>'
        )
    parts.append(
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
    )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle">'
        "share of questions shown as answers</text>"
    )
    parts.append("</svg>")
    return "".join(parts)
