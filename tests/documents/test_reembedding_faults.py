"""A corpus re-embedding whose worker is SIGKILLed mid-job.

A real `celery worker` on the ``ingestion-bulk`` queue (where re-embeddings run, one process, as
``make run``'s bulk worker) with short leases and no beat or maintenance worker: the worker's
own reclaim timer, once it is started again, is all that puts the job back. The kill lands at a
random count of documents re-embedded, from none (the model still loading) to all but one; the
whole worker is frozen before the check that the job still runs under its lease, so the kill
cannot miss it by a moment (bench/fault_jobs.py). A try that the job outran is started again.
"""

from __future__ import annotations

import pytest

from bench.cluster import Cluster, WorkerSpec
from bench.fault_jobs import REEMBED_WORKER, reembedding_corpus, reembedding_round

pytestmark = [
    pytest.mark.faults,
    pytest.mark.recovery,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def test_a_re_embedding_whose_worker_is_killed_ends_active_with_each_vector_once(
    corpus, embedder, short_lease_cluster, tmp_path
):
    reembedding_corpus(corpus, embedder, documents=6, sentences=30)
    workers = [WorkerSpec(REEMBED_WORKER, "ingestion-bulk", 1)]
    with Cluster(tmp_path, short_lease_cluster, workers, beat=False) as cluster:
        result = reembedding_round(broker="filesystem", cluster=cluster, corpus=corpus, seed=0, timeout=240)
    assert result.kill is not None, result.problems
    assert result.lost == 0, "the re-embedding never ended"
    assert result.status == "active", f"ended {result.status}: {result.error}"
    # The corpus now searches the new model, with one vector for every sentence, chunk and document.
    assert result.problems == []
    assert (result.duplicated_rows, result.missing_rows) == (0, 0)
    assert result.rows == result.expected_rows > 0
    assert result.kill.picked_up_after is not None and result.kill.ended_after is not None
