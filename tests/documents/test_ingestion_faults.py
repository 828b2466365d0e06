"""Ingestion workers SIGKILLed while a document is being parsed, embedded or swapped in.

Real `celery worker` processes as ``make run`` starts them (the upload worker on
``ingestion`` and the bulk worker on ``ingestion-bulk``, prefork, one process
each) on a private file-system broker, and no beat or maintenance worker: the
workers' own reclaim timers are all that puts a dead worker's documents back.
Each worker is frozen and killed, all its processes at once, at a moment its
process holds the lease of a document in flight (bench/fault_ingestion.py: the
freeze makes "still in flight" and "killed" the same moment, whatever the
machine's speed), then started again. Leases are short (6 s) to keep it brief.
"""

from __future__ import annotations

import pytest

from bench.cluster import Cluster, WorkerSpec
from bench.fault_ingestion import ingestion_round, swap_in_round
from tests.factories import CorpusFactory

pytestmark = [
    pytest.mark.faults,
    pytest.mark.recovery,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def test_ingestion_workers_killed_mid_document_leave_every_document_ready_once(
    corpus, embedder, short_lease_cluster, tmp_path
):
    env = short_lease_cluster
    # Two 40-sentence documents to a claim: a killed claim takes a companion down with it.
    env["INGEST_ENCODE_SENTENCES"] = "80"
    workers = [WorkerSpec("ingestion", "ingestion", 1), WorkerSpec("bulk", "ingestion-bulk", 1)]
    with Cluster(tmp_path, env, workers, beat=False) as cluster:
        result = ingestion_round(
            broker="filesystem",
            cluster=cluster,
            corpus=corpus,
            clean_corpus=CorpusFactory(team=corpus.team),
            embedder=embedder,
            documents_per_lane=4,
            timeout=150,
        )
    caught = sorted(k.worker for k in result.kills)
    assert caught == ["bulk", "ingestion"], f"only {caught} caught mid-document"
    assert {k.status for k in result.kills} <= {"parsing", "embedding"}
    assert result.lost == 0, f"{result.lost} document(s) never ended"
    assert result.failed == 0, result.failures
    assert all(k.ready_after is not None for k in result.kills), result.kills
    # Every document made live exactly once, with the rows a clean import gives it.
    assert result.swap_ins == result.ready == result.documents
    assert result.mismatched == []
    assert result.term_stat_differences == 0


def test_an_ingestion_worker_killed_inside_a_swap_in_leaves_the_document_ready_once(
    corpus, embedder, short_lease_cluster, tmp_path
):
    """The kill lands inside the swap-in's transaction, after its rows are written and before it
    commits: the swap-in waits on the corpus's term statistics, which the round holds (see
    ``bench.fault_ingestion.term_stats_held``). Nothing of it may stay; the document is re-queued,
    made live once, and ends with the rows a clean import gives it."""
    workers = [WorkerSpec("ingestion", "ingestion", 1)]
    with Cluster(tmp_path, short_lease_cluster, workers, beat=False) as cluster:
        result = swap_in_round(
            broker="filesystem",
            cluster=cluster,
            corpus=corpus,
            clean_corpus=CorpusFactory(team=corpus.team),
            embedder=embedder,
            timeout=180,
        )
    [kill] = result.kills
    assert kill.status.endswith("(in its swap-in)")
    assert result.left_by_kill == [], f"the killed swap-in left {result.left_by_kill}"
    assert (result.documents, result.ready, result.lost) == (2, 2, 0), result.failures
    assert kill.ready_after is not None
    assert result.swap_ins == 2  # each document made live once
    assert (result.mismatched, result.term_stat_differences) == ([], 0)
