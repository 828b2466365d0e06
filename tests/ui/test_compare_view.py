"""The run comparison page: choosing runs, the metric grid, answers side by side, bounded queries."""

from __future__ import annotations

import re

import pytest

from bench.comparison import count_queries, seed_runs
from review.models import EvaluationCaseResult
from tests.factories import CorpusFactory, TeamFactory
from tests.ui.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(client, analyst):
    assert client.login(username=analyst.username, password=PASSWORD)
    return client


def compare_url(runs, **extra) -> str:
    query = "&".join([f"runs={run.pk}" for run in runs] + [f"{k}={v}" for k, v in extra.items()])
    return f"/evaluate/compare/?{query}"


def test_the_evaluation_list_offers_finished_runs_for_comparison(browser, analyst, corpus):
    runs = seed_runs(user=analyst, corpus=corpus, runs=2, cases=3)
    page = browser.get("/evaluate/").content.decode()
    assert 'action="/evaluate/compare/"' in page
    for run in runs:
        assert f'name="runs" value="{run.pk}"' in page
    assert "Compare selected" in page


def test_the_grid_and_each_questions_answers_side_by_side(browser, analyst, corpus):
    runs = seed_runs(user=analyst, corpus=corpus, runs=3, cases=30)
    page = browser.get(compare_url(runs)).content.decode()
    # One column per run, one row per metric, the best of each row marked.
    grid = page[page.index('id="metric-grid"') : page.index("</table>", page.index('id="metric-grid"'))]
    for run in runs:
        assert f"Run {run.pk}</a>" in grid
    assert "Recall@1" in grid and "Citation F1" in grid
    recall = [run.metrics["recall_at_1"] for run in runs]
    assert len(set(recall)) > 1  # the seeded runs retrieve at different rates
    row = grid[grid.index("Recall@1") : grid.index("</tr>", grid.index("Recall@1"))]
    assert row.count("(best)") == recall.count(max(recall))

    # Answers per question: the most disagreed-on case first, the gold evidence marked in each answer.
    cases = re.findall(r'data-case="(dev/q\d+)"', page)
    assert len(cases) == 25  # a page of cases
    shown = EvaluationCaseResult.objects.filter(
        run__in=runs, gold_case__case_id__in=[c.split("/")[1] for c in cases]
    ).select_related("gold_case")
    cited = [(key, key in r.gold_case.gold_evidence) for r in shown for key in r.prediction["cited_evidence"]]
    assert any(gold for _, gold in cited) and not all(gold for _, gold in cited)
    for key, gold in cited:
        if gold:
            assert f'<mark class="gold">{key}</mark>' in page
        else:
            assert f'<span class="mono">{key}</span>' in page
    second_page = browser.get(compare_url(runs, page=2)).content.decode()
    assert len(re.findall(r'data-case="dev/q\d+"', second_page)) == 5


def test_only_differing_cases_and_case_order(browser, analyst, corpus):
    runs = seed_runs(user=analyst, corpus=corpus, runs=2, cases=20)
    by_case = browser.get(compare_url(runs, order="case")).content.decode()
    assert re.findall(r'data-case="(dev/q\d+)"', by_case)[:3] == ["dev/q000", "dev/q001", "dev/q002"]
    differ = browser.get(compare_url(runs, show="differ")).content.decode()
    shown = re.findall(r'data-case="(dev/q\d+)"', differ)
    assert 0 < len(shown) <= 20
    assert re.search(r"(\d+) cases?\.", differ).group(1) == str(len(shown))


def test_the_page_reads_a_bounded_number_of_queries_whatever_the_runs_and_cases(browser, analyst, corpus):
    small = seed_runs(user=analyst, corpus=corpus, name="small", runs=2, cases=5)
    large = seed_runs(user=analyst, corpus=corpus, name="large", runs=5, cases=60)
    counts = []
    for runs in (small, large):
        response, queries = count_queries(browser, compare_url(runs))
        assert response.status_code == 200 and 'id="metric-grid"' in response.content.decode()
        counts.append(queries)
    # Session, user, runs, every case's scores, then the shown page's results and gold cases.
    assert counts == [6, 6], counts


def test_another_teams_runs_are_not_compared(browser, analyst, corpus):
    other = CorpusFactory(team=TeamFactory())
    theirs = seed_runs(user=analyst, corpus=other, name="theirs", runs=2, cases=3)
    page = browser.get(compare_url(theirs)).content.decode()
    assert "Choose two to" in page and 'id="metric-grid"' not in page
