"""Both ingestion workers SIGKILLed while a document is being parsed or embedded.

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
from django.db import connection

from bench.cluster import Cluster, WorkerSpec, cluster_environment, use_broker
from bench.fault_ingestion import ingestion_round
from groundedqa_site.broker import folder_options
from tests.factories import CorpusFactory

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LEASE, HEARTBEAT, RECLAIM = 6, 2, 1


@pytest.fixture(autouse=True)
def short_leases(settings):
    settings.JOB_LEASE_SECONDS, settings.JOB_HEARTBEAT_SECONDS = LEASE, HEARTBEAT


def test_ingestion_workers_killed_mid_document_leave_every_document_ready_once(corpus, embedder, tmp_path):
    broker = tmp_path / "broker"
    env = cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url="filesystem://",
        broker_dir=broker,
        lease=LEASE,
        heartbeat=HEARTBEAT,
        reaper=RECLAIM,
        worker_reclaim=RECLAIM,
    )
    # Two 40-sentence documents to a claim: a killed claim takes a companion down with it.
    env["INGEST_ENCODE_SENTENCES"] = "80"
    workers = [WorkerSpec("ingestion", "ingestion", 1), WorkerSpec("bulk", "ingestion-bulk", 1)]
    with (
        use_broker("filesystem://", folder_options(broker), "groundedqa_site.broker:Transport"),
        Cluster(tmp_path, env, workers, beat=False) as cluster,
    ):
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
