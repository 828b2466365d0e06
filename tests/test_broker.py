"""The file-system broker writes each message atomically, so a worker never reads half of one."""

from __future__ import annotations

import os

import pytest
from kombu import Connection
from kombu.exceptions import ChannelError

from groundedqa_site.broker import folder_options


def _connection(folder):
    return Connection(
        "filesystem://",
        transport="groundedqa_site.broker:Transport",
        transport_options=folder_options(folder),
    )


def test_every_message_round_trips_intact(tmp_path):
    with _connection(tmp_path) as connection:
        queue = connection.SimpleQueue("round-trip")
        payloads = [{"n": n, "text": "x" * (n * 97)} for n in range(60)]
        for payload in payloads:
            queue.put(payload)
        received = []
        for _ in payloads:
            message = queue.get(timeout=1)
            received.append(message.payload)
            message.ack()
        queue.close()
    # Order is by millisecond, as in kombu: messages put within one millisecond may swap.
    assert sorted(received, key=lambda p: p["n"]) == payloads
    assert not [name for name in os.listdir(tmp_path / "queue") if name.endswith((".msg", ".partial"))]


def test_a_message_that_cannot_be_written_is_an_error_and_leaves_nothing_behind(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise OSError("disk full")

    with _connection(tmp_path) as connection:
        # A queue name of its own: kombu remembers declared queues per process, not per folder.
        queue = connection.SimpleQueue("refused")
        monkeypatch.setattr(os, "replace", refuse)
        with pytest.raises(ChannelError, match="disk full"):
            queue.put({"n": 1})
        monkeypatch.undo()
        queue.close()
    # Neither a half-written message a worker could read nor a stray partial file.
    assert not [name for name in os.listdir(tmp_path / "queue") if ".msg" in name]


def test_the_site_uses_the_atomic_transport():
    from django.conf import settings

    if settings.CELERY_BROKER_URL != "filesystem://":
        pytest.skip("a network broker is configured")
    assert settings.CELERY_BROKER_TRANSPORT == "groundedqa_site.broker:Transport"


def _first_taken(connection, queue_names: list[str]) -> str:
    """The queue of the first message a consumer of ``queue_names`` (in that order) receives."""
    from kombu import Queue

    taken = []
    queues = [Queue(name, routing_key=name) for name in queue_names]
    with connection.Consumer(queues, callbacks=[lambda body, message: taken.append(body["queue"])]):
        while not taken:
            connection.drain_events(timeout=2)
    return taken[0]


def _backlog_then_requeued(connection, stage_queues: list[str]) -> None:
    from kombu import Queue

    with connection.Producer() as producer:
        for name in [*stage_queues, *stage_queues, "requeued"]:
            queue = Queue(name, routing_key=name)
            producer.publish({"queue": name}, routing_key=name, declare=[queue])


def test_a_stage_whose_worker_died_is_taken_before_the_backlog_of_other_questions(tmp_path):
    # The reaper sends a dead worker's stage to "requeued"; a worker with a free process
    # takes it before the stages of every question asked since, whatever order -Q lists.
    stage_queues = ["fs-retrieval", "fs-generation", "fs-verification"]
    with _connection(tmp_path) as connection:
        _backlog_then_requeued(connection, stage_queues)
        assert _first_taken(connection, [*stage_queues, "requeued"]) == "requeued"


def test_without_a_requeued_stage_the_other_queues_still_take_turns(tmp_path):
    from groundedqa_site.broker import RequeuedFirstCycle

    cycle = RequeuedFirstCycle()
    cycle.update(["retrieval", "generation", "requeued", "citation"])
    assert cycle.consume(4)[0] == "requeued"
    firsts = []
    for _ in range(3):
        order = [q for q in cycle.consume(4) if q != "requeued"]
        firsts.append(order[0])
        cycle.rotate(order[0])
    assert firsts == ["retrieval", "generation", "citation"]
