"""Corpus analysis and latency charts: what an analyst sees about a corpus and a run."""

from __future__ import annotations

import pytest

from ui.charts import bins_of, histogram

pytestmark = pytest.mark.django_db


def test_bins_cover_every_value_and_the_tail_lands_in_the_last_bin():
    values = [1, 2, 2, 3, 10, 10, 10, 1000]
    bins = bins_of(values, count=5, upper_quantile=0.8)
    assert sum(b.count for b in bins) == len(values)
    assert bins[-1].count >= 1  # 1000 is past the 80th percentile and still counted
    assert histogram(bins, title="Words", unit="words").count("<rect") == 5


def test_the_analysis_page_shows_length_histograms_and_an_embedding_map(
    client, analyst, demo_documents, corpus
):
    client.force_login(analyst)
    page = client.get(f"/corpora/{corpus.pk}/analysis/").content.decode()
    assert 'data-unit="sentences"' in page and 'data-unit="chunks"' in page
    assert "median" in page and "words per sentence" in page.lower()
    # One point per sampled sentence, titled with its document.
    assert 'id="embedding-map"' in page and page.count("<circle") >= 10
    assert "Westmere" in page  # a demo document's title on a point


def test_other_teams_cannot_see_a_corpus_analysis(client, outsider, corpus):
    client.force_login(outsider)
    assert client.get(f"/corpora/{corpus.pk}/analysis/").status_code == 404


def test_an_evaluation_run_gets_a_latency_histogram_per_stage():
    from ui.evaluation import latency_histograms

    rows = [{"stage_latency": {"retrieval": 0.010 * n, "generation": 0.2}} for n in range(1, 9)]
    rows.append({"stage_latency": {"rerank": 0.05}})  # one case only: no distribution to draw
    charts = latency_histograms(rows)
    assert [c["stage"] for c in charts] == ["retrieval", "generation"]
    # 8 cases of 10-80 ms: 4 bins of 20 ms, named by the stage (tests/ui/test_metric_glossary.py has more).
    assert "Retrieval: milliseconds per case" in charts[0]["svg"] and charts[0]["svg"].count("<rect") == 4
