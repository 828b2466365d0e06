"""An evaluation run's page can score the run again on the gold annotators agreed on or a reviewer
adjudicated, beside the scores over every case."""

from __future__ import annotations

import re

import pytest

from review.models import GoldCase
from review.services.evaluation import evaluation_run_create, evaluation_run_execute
from tests.review.conftest import tiny  # noqa: F401 - the fixture
from tests.review.helpers import SHIFTED, ScriptedAnswers


def metric(page: str, name: str) -> str:
    row = re.search(rf'<tr[^>]*data-metric="{name}".*?</tr>', page, re.S)
    assert row, f"no {name} row"
    return re.findall(r'<td class="num">([^<]*)</td>', row.group(0))[0].strip()


@pytest.mark.django_db
def test_the_run_page_scores_again_on_annotated_gold_only(tiny, analyst, client):  # noqa: F811
    # c2 (the system cites it right) came from an annotation task; c1 (cited wrongly) and c3 did not.
    GoldCase.objects.filter(benchmark=tiny, case_id="c2").update(provenance="agreed")
    run = evaluation_run_create(benchmark=tiny, preset="default", user=analyst, config={}, enqueue=False)
    evaluation_run_execute(run_id=run.pk, answer_fn=ScriptedAnswers(SHIFTED, analyst), judge=None)
    client.force_login(analyst)

    every = client.get(f"/evaluate/runs/{run.pk}/").content.decode()
    assert "<strong>all cases</strong>" in every
    annotated = client.get(f"/evaluate/runs/{run.pk}/?gold=annotated").content.decode()
    assert "only gold that annotators agreed on or a reviewer adjudicated: 1 case</strong>" in annotated
    # On c2 alone the citations are right; over all three, c1's wrong citation pulls them down.
    assert float(metric(annotated, "citation_f1")) == 1.0
    assert float(metric(every, "citation_f1")) < 1.0


@pytest.mark.django_db
def test_a_run_with_no_annotated_gold_says_the_filtered_table_is_empty(tiny, analyst, client):  # noqa: F811
    run = evaluation_run_create(benchmark=tiny, preset="default", user=analyst, config={}, enqueue=False)
    evaluation_run_execute(run_id=run.pk, answer_fn=ScriptedAnswers(SHIFTED, analyst), judge=None)
    client.force_login(analyst)
    page = client.get(f"/evaluate/runs/{run.pk}/?gold=annotated").content.decode()
    assert "0 cases</strong> (none: the table is empty)" in page
