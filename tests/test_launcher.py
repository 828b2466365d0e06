"""Stopping `make run`: Ctrl-C ends every process it started within one grace period, the ones
that do not stop when asked (a worker in the middle of embedding a corpus) included."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from groundedqa_site.launcher import stop_children

POLITE = "import time; print('up', flush=True); time.sleep(120)"
STUBBORN = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + POLITE


def start(code: str) -> subprocess.Popen:
    child = subprocess.Popen(
        [sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "up"  # its signal handling is in place
    return child


def test_ctrl_c_stops_every_process_within_one_grace_period():
    children = [start(POLITE)] + [start(STUBBORN) for _ in range(3)]
    started = time.monotonic()
    stop_children(children, grace=2.0)
    took = time.monotonic() - started
    assert children[0].returncode == -signal.SIGTERM  # asked, and it stopped
    assert [child.returncode for child in children[1:]] == [-signal.SIGKILL] * 3
    # Waiting the whole grace for each stubborn child in turn took 3 x 2 s.
    assert took < 2 * 2.0, f"stopping took {took:.1f} s"
