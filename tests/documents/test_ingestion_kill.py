"""An ingestion worker killed between two waves of a group loses nothing and duplicates nothing.

A real `celery worker` (prefork, -c 1, as ``make run`` starts it) embeds a
group of queued documents in waves of one document, each made live on its
write-behind thread; it is SIGKILLed (main process and child) as soon as the
first document is ready. Beat's reaper puts the others back in the queue once
their leases run out, and a new worker makes them live.
"""

from __future__ import annotations

import pytest
from django.db import connection

from bench.cluster import Cluster, WorkerSpec, cluster_environment, use_broker
from documents import services
from documents.models import Corpus, Document, LexicalTotals, LexicalUnit, Posting, Sentence, TermStat
from groundedqa_site.broker import folder_options
from qa.adapters import DjangoCorpusIndex
from tests.conftest import wait_for

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LEASE, HEARTBEAT, REAPER = 6, 2, 1
PORTS = ["Arden", "Belmar", "Corvo", "Dunmore", "Elsby", "Fennick", "Galloway", "Harrow"]


def port_report(name: str) -> bytes:
    """Forty sentences about one port; the last names its harbour master, found in no other report."""
    lines = [
        f"The port of {name} handled {1000 + i} ships in year {1900 + i} of its records." for i in range(39)
    ]
    lines.append(f"The harbour master of {name} is {name} Quayle.")
    return (f"{name} report\n\n" + " ".join(lines) + "\n").encode()


@pytest.fixture
def ingestion_cluster(tmp_path):
    broker = tmp_path / "broker"
    env = cluster_environment(
        database=connection.settings_dict["NAME"],
        broker_url="filesystem://",
        broker_dir=broker,
        lease=LEASE,
        heartbeat=HEARTBEAT,
        reaper=REAPER,
    )
    env["INGEST_WAVE_SENTENCES"] = "1"  # every document a wave of its own
    with use_broker("filesystem://", folder_options(broker), "groundedqa_site.broker:Transport"):
        with Cluster(tmp_path, env, [WorkerSpec("ingestion", "ingestion", 1)]) as cluster:
            yield cluster


def test_a_worker_killed_between_waves_loses_and_duplicates_nothing(ingestion_cluster, corpus):
    ids = [
        services.documents_submit(corpus=corpus, filename=f"{name}.txt", data=port_report(name))[
            0
        ].document.pk
        for name in PORTS
    ]

    def statuses():
        return list(Document.objects.filter(pk__in=ids).values_list("status", flat=True))

    wait_for(
        lambda: Document.Status.READY in statuses(),
        timeout=300,
        interval=0.02,
        message="the first wave to be made live",
    )
    ingestion_cluster.kill_worker("ingestion")
    at_kill = statuses()
    assert at_kill.count(Document.Status.READY) < len(PORTS), "the kill came after the last wave"
    ingestion_cluster.restart("ingestion")
    wait_for(
        lambda: all(status == Document.Status.READY for status in statuses()),
        timeout=300,
        message="the reaper to re-queue the rest and the new worker to make them live",
    )

    [parsed] = services.parse_upload(filename="Arden.txt", data=port_report("Arden"))
    for document in Document.objects.filter(pk__in=ids):
        assert document.error == ""
        assert Sentence.objects.filter(document=document).count() == len(parsed.sentences)
        assert LexicalTotals.objects.filter(document=document).count() == 3  # sentence, chunk, document
    # Term statistics count every live unit once: a document written twice would count twice.
    for term in ("harbour", "ships"):
        stat = TermStat.objects.get(corpus=corpus, unit=LexicalUnit.SENTENCE, term=term)
        assert stat.df == Posting.objects.filter(corpus=corpus, unit=LexicalUnit.SENTENCE, term=term).count()
        assert stat.df == (len(PORTS) if term == "harbour" else 39 * len(PORTS))
    index = DjangoCorpusIndex(Corpus.objects.get(pk=corpus.pk))
    for name in PORTS:
        [(key, _)] = index.lexical_search(f"Who is the harbour master of {name}?", "sentence", 1)
        assert index.passage(key).text == f"The harbour master of {name} is {name} Quayle."
