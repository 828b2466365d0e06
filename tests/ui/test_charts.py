"""The server-side SVG charts: pure functions, no database."""

from datetime import UTC, datetime, timedelta

from ui.charts import BarGroup, Point, grouped_bars, lines_over_time


def test_bars_escape_labels_and_mark_missing_values():
    svg = grouped_bars(
        [BarGroup("<script>", {"a": 0.5, "b": None}, {"a": 0.25})],
        [("a", "Recall@1"), ("b", "Combined")],
        title="t & u",
    )
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "t &amp; u" in svg
    assert "n/a" in svg  # a metric without a value says so instead of drawing nothing
    assert 'role="img"' in svg and "<desc" in svg


def test_lines_place_later_runs_further_right():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    svg = lines_over_time(
        {"default": [Point(start, 0.2, "run 1"), Point(start + timedelta(days=1), 0.8, "run 2")]}, title="F1"
    )
    xs = [float(x) for x in __import__("re").findall(r'<circle cx="([\d.]+)"', svg)]
    assert xs == sorted(xs) and xs[0] < xs[1]


def test_no_data_no_chart():
    assert grouped_bars([], [("a", "A")], title="x") == ""
    assert lines_over_time({}, title="x") == ""


def test_line_colours_follow_the_given_legend_order_not_the_data_order():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    series = {"hybrid": [Point(start, 0.5, "run 2")], "default": [Point(start, 0.4, "run 1")]}
    svg = lines_over_time(series, title="F1", colour_of={"default": 0, "hybrid": 1})
    from ui.charts import colour

    assert f'fill="{colour(0)}"><title>default' in svg
    assert f'fill="{colour(1)}"><title>hybrid' in svg


def test_reliability_diagram_draws_a_bar_per_filled_bin_with_its_count():
    from review.evaluation.metrics import reliability_bins
    from ui.charts import reliability_diagram

    bins = reliability_bins([(0.15, True), (0.15, False), (0.85, True)])
    svg = reliability_diagram(bins, title="Reliability")
    assert svg.count("<rect") == 2  # the two filled bins; empty bins draw no bar
    assert "perfect calibration" in svg
    assert "0.1-0.2: 2 cases, predicted 0.150, right 0.500" in svg
    assert reliability_diagram(reliability_bins([]), title="x") == ""
