"""An evaluation run whose worker is SIGKILLed mid-run.

A real `celery worker` on the ``evaluation`` queue (one process) with short leases and no beat
or maintenance worker: the worker's own reclaim timer, once it is started again, puts the run
back. The kill lands after a random count of cases answered (bench/fault_jobs.py freezes the
worker before checking that the run still holds its lease, so it cannot miss by a moment); a
try the run outran is started again. The run resumes where it stopped: one result and one
question per case.
"""

from __future__ import annotations

import pytest

from bench.cluster import Cluster, WorkerSpec
from bench.fault_jobs import EVALUATION_WORKER, evaluation_benchmark, evaluation_round
from review.models import EvaluationRun
from tests.qa.conftest import COUNTRY_PROFILE, PORT_REPORT, ingest_texts

pytestmark = [
    pytest.mark.faults,
    pytest.mark.recovery,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def test_an_evaluation_run_whose_worker_is_killed_ends_done_with_one_result_per_case(
    corpus, embedder, analyst, short_lease_cluster, tmp_path
):
    ingest_texts(corpus, embedder, {"port-report": PORT_REPORT, "country-profile": COUNTRY_PROFILE})
    benchmark = evaluation_benchmark(corpus, name="evaluation-faults", cases=6)
    workers = [WorkerSpec(EVALUATION_WORKER, "evaluation", 1)]
    with Cluster(tmp_path, short_lease_cluster, workers, beat=False) as cluster:
        result = evaluation_round(
            broker="filesystem", cluster=cluster, benchmark=benchmark, user=analyst, seed=0, timeout=240
        )
    assert result.kill is not None, result.problems
    assert result.lost == 0, "the run never ended"
    assert result.status == "done", f"ended {result.status}: {result.error}"
    assert result.problems == []
    # Every case scored once: none lost with the killed process, none stored twice after the resume.
    assert (result.duplicated_rows, result.missing_rows) == (0, 0)
    assert result.rows == result.expected_rows == 6
    # The case the kill interrupted adopted the question it had asked, or replaced it: one each.
    assert result.re_asked == 0
    run = EvaluationRun.objects.get(pk=result.kill.pk)
    assert (run.progress_done, run.progress_total) == (6, 6)
    assert result.kill.picked_up_after is not None and result.kill.ended_after is not None
