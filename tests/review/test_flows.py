"""The four flows (issue 11, item 7) as presets, compared by `evaluate --preset flows` on a small
multi-turn benchmark: the rewrite flows search a follow-up with its conversation's subject, the
answerability flows run the intrinsics."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from qa.presets import FLOW_PRESETS
from review.models import EvaluationRun
from tests.review.test_mtrag_un import small_mtrag  # noqa: F401 - the fixture


@pytest.mark.django_db
def test_evaluate_flows_runs_the_four_flows_side_by_side(small_mtrag, analyst):  # noqa: F811
    call_command(
        "import_benchmark", str(small_mtrag), name="mt", format="mtrag-un", in_process=True, stdout=StringIO()
    )
    out = StringIO()
    call_command(
        "evaluate",
        user=analyst.username,
        benchmark="mt-fiqa",
        preset="flows",
        judge=None,
        stdout=out,
        stderr=StringIO(),
    )
    runs = {run.preset: run for run in EvaluationRun.objects.all()}
    assert set(runs) == set(FLOW_PRESETS)
    assert all(run.status == "done" for run in runs.values()), {r.preset: r.error for r in runs.values()}
    table = out.getvalue()
    assert all(name in table for name in FLOW_PRESETS)
    for name, run in runs.items():
        follow_up = run.case_results.get(gold_case__case_id="c1-2").question
        searched = follow_up.standalone_text.lower()
        if "rewrite" in name:
            assert "roth" in searched, name
        else:
            assert "roth" not in searched, name
        has_trust = follow_up.trace.get("trust") is not None
        assert has_trust == name.endswith("answerability"), name
