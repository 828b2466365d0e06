"""The evaluation pages explain themselves: every metric named once and defined in plain words, the
headline metrics first with the rest folded, the report named, latency charts with visible stage
names and round bins."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils.html import escape

from review.benchmark_files import ImportPlan
from review.evaluation import glossary
from review.evaluation.evaluate import AGGREGATE_KEYS
from review.models import EvaluationCaseResult, EvaluationRun, GoldCase
from review.services.benchmarks import benchmark_import
from tests.review.conftest import case
from tests.review.helpers import GDP, MUSCAT, OMAN, PORT, STAFF, make_document
from ui.charts import histogram, round_bins
from ui.evaluation import METRIC_LABELS, latency_histograms, metric_rows


def test_every_metric_a_run_stores_has_a_plain_definition():
    undefined = [key for key in AGGREGATE_KEYS if not glossary.meaning_of(key)]
    assert undefined == []
    assert METRIC_LABELS["confidence_ece"] == "Confidence ECE"  # was shown as "confidence_ece"
    assert len(set(METRIC_LABELS.values())) == len(METRIC_LABELS)  # no two metrics share a name


def test_a_run_lists_its_headline_metrics_first():
    rows = metric_rows({"recall_at_1": 0.5, "confidence_ece": 0.04}, "default")
    assert [row["key"] for row in rows[: len(glossary.HEADLINE_KEYS)]] == list(glossary.HEADLINE_KEYS)
    assert all(row["headline"] for row in rows[: len(glossary.HEADLINE_KEYS)])
    assert not any(row["headline"] for row in rows[len(glossary.HEADLINE_KEYS) :])
    ece = next(row for row in rows if row["key"] == "confidence_ece")
    assert ece["better"] == "lower" and "calibration" in ece["meaning"]


@pytest.mark.parametrize(
    ("milliseconds", "edges"),
    [
        ([0.1, 0.2, 0.2, 0.3, 0.4], ["0.0-0.1 ms", "0.1-0.2 ms", "0.2-0.3 ms", "0.3-0.4 ms"]),
        ([3, 7, 12, 18, 25, 31, 44, 50], ["0-10 ms", "10-20 ms", "40-50 ms"]),
        ([120, 900, 1500, 2300, 4100], ["0-1,000 ms", "4,000-5,000 ms"]),
    ],
)
def test_latency_bins_are_round_and_never_read_zero_to_zero(milliseconds, edges):
    bins = round_bins(milliseconds)
    width = bins[0].high - bins[0].low
    assert all(abs((b.high - b.low) - width) < 1e-9 for b in bins)
    assert sum(b.count for b in bins) == len(milliseconds)
    svg = histogram(bins, title="Retrieval", unit="ms")
    assert ">0-0 ms" not in svg and " 0-0 ms" not in svg
    for edge in edges:
        assert f"{edge}:" in svg


def test_each_latency_chart_names_its_stage_and_median():
    rows = [{"stage_latency": {"retrieval": 0.010 * n, "answer_check": 0.0002}} for n in range(1, 9)]
    rows.append({"stage_latency": {"rerank": 0.05}})  # one case only: no distribution to draw
    charts = latency_histograms(rows)
    assert [(c["stage"], c["name"]) for c in charts] == [
        ("retrieval", "Retrieval"),
        ("answer_check", "Answer check"),
    ]
    assert charts[0]["cases"] == 8 and charts[0]["median_ms"] == pytest.approx(50)
    # 0.2 ms each: bins of 0.05 ms, the last (which holds the top value) with every case.
    assert "0.15-0.20 ms: 8" in charts[1]["svg"]
    assert "0-0 ms" not in charts[1]["svg"]


@pytest.fixture
def finished_run(corpus):
    make_document(corpus, "oman", OMAN)
    make_document(corpus, "port", PORT)
    plan = ImportPlan(
        documents=(),
        cases=(
            case("c1", MUSCAT, "oman", ["S2"], [OMAN[1]], reference="The Portuguese, 1507-1650."),
            case("c2", STAFF, "port", ["S2"], [PORT[1]], reference="1,850 staff."),
            case("c3", GDP, "oman", [], [], answerable=False),
        ),
    )
    benchmark = benchmark_import(
        name="tiny", plan=plan, corpus_name=corpus.name, source_format="jsonl"
    ).benchmark
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        benchmark_version=benchmark.version,
        preset="rag",
        status="done",
        metrics={"recall_at_1": 0.667, "citation_f1": 0.5, "confidence_ece": 0.042, "jafs": 0.6},
    )
    for n, gold in enumerate(GoldCase.objects.filter(benchmark=benchmark)):
        EvaluationCaseResult.objects.create(
            run=run,
            gold_case=gold,
            gold_revision=gold.revision,
            metrics={"stage_latency": {"retrieval": 0.004 + 0.003 * n, "verification": 0.0003}},
        )
    return run


def _page(user, path: str) -> str:
    browser = Client()
    browser.force_login(user)
    response = browser.get(path)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
def test_the_run_page_defines_its_headline_metrics_and_folds_the_rest(finished_run, analyst):
    page = _page(analyst, f"/evaluate/runs/{finished_run.pk}/")
    headline = page.split('<table id="metrics-table">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'data-metric="([^"]+)"', headline) == list(glossary.HEADLINE_KEYS)
    assert "Share of questions whose gold document is the first document retrieved." in headline
    assert 'href="/evaluate/glossary/#confidence_ece"' in headline and "Lower is better." in headline
    assert escape(glossary.REPORT_TITLE) in headline  # the report is named, not "the report"
    folded = page.split('<details id="more-metrics">', 1)[1].split("</details>", 1)[0]
    assert f"Every other metric ({len(AGGREGATE_KEYS) - len(glossary.HEADLINE_KEYS)})" in folded
    assert re.search(
        r'<a class="metric-name" href="/evaluate/glossary/#jafs" title="Joint answerability', folded
    )


@pytest.mark.django_db
def test_the_run_page_captions_each_latency_chart_with_its_stage(finished_run, analyst):
    page = _page(analyst, f"/evaluate/runs/{finished_run.pk}/")
    captions = re.findall(r"<figcaption><strong>([^<]+)</strong> <span[^>]*>median ([^<]+)</span>", page)
    assert captions == [("Retrieval", "7.0 ms over 3 cases"), ("Verification", "0.3 ms over 3 cases")]
    assert "0-0 ms" not in page


@pytest.mark.django_db
def test_the_glossary_page_defines_every_metric_and_names_the_report(analyst):
    page = _page(analyst, "/evaluate/glossary/")
    for key in AGGREGATE_KEYS:
        assert f'<dt id="{key}">{glossary.name_of(key)}' in page.replace("&amp;", "&")
    assert '<dt id="risk_coverage">Risk-coverage curve' in page
    assert '<h2 id="the-report">The report</h2>' in page and escape(glossary.REPORT_TITLE) in page
    assert 'href="/evaluate/glossary/"' in _page(analyst, "/evaluate/")


def test_docs_benchmarks_defines_every_metric_the_pages_show():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md").read_text()
    section = text.split("## Metric glossary", 1)[1].split("\n## ", 1)[0]
    named = {term.name for term in glossary.TERMS.values()}
    # The @k families are defined once for every k.
    families = {"P@k", "Recall@k (share of gold documents)", "Hit@k"}
    missing = [
        name
        for name in named
        if f"**{name}**" not in section
        and not any(name.replace(digits, "k") in families for digits in ("1", "5", "10", "20"))
        and not (name.endswith(("precision", "recall", "F1")) and "class" in name)
    ]
    assert missing == []
    assert "**Answerable class precision / recall / F1**" in section
