"""The write-behind thread and the encoder sharing the cores (documents/services/write_behind.py)."""

from __future__ import annotations

import threading

import pytest

from documents.services.write_behind import WriteBehind

torch = pytest.importorskip("torch")


def test_the_encoder_leaves_a_core_to_a_running_swap_in_and_takes_it_back_after_it():
    threads = torch.get_num_threads()
    if threads < 2:
        pytest.skip("one core: nothing to leave to the writer")
    started, release = threading.Event(), threading.Event()

    def swap_in():
        started.set()
        release.wait(30)
        return "live"

    with WriteBehind() as writer:
        writer.submit("report", swap_in)
        assert started.wait(30)
        with writer.cores_shared() as shared:
            assert shared and torch.get_num_threads() == threads - 1
        # Ingestion after this wave, and every later encode in the process, runs at full speed again.
        assert torch.get_num_threads() == threads
        release.set()
    assert writer.results() == {"report": "live"}
    with writer.cores_shared() as shared:
        assert not shared and torch.get_num_threads() == threads
