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
