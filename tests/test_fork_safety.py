"""A pool process killed while it shows a progress bar must not stall its siblings.

Runs the worker's own fork hook (groundedqa_site.celery.own_progress_bar_lock) in forked
processes of a fresh interpreter, which stands in for a worker's main process: it creates tqdm's
lock as loading the encoder does, forks a pool process that dies holding it, then forks another
that shows a progress bar, as loading a model's weights on its first question does.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCENARIO = textwrap.dedent(
    """
    import os, signal, sys
    from tqdm.auto import tqdm
    from groundedqa_site.celery import own_progress_bar_lock

    hooked = sys.argv[1] == "hooked"
    list(tqdm(range(3), disable=True))  # the main process loads a model: tqdm's lock now exists

    def pool_process():
        if hooked:
            own_progress_bar_lock()

    read, write = os.pipe()
    dying = os.fork()
    if dying == 0:
        pool_process()
        tqdm.get_lock().acquire()  # in the middle of drawing a bar
        os.write(write, b"x")
        signal.pause()
    os.read(read, 1)
    os.kill(dying, signal.SIGKILL)
    os.waitpid(dying, 0)

    sibling = os.fork()
    if sibling == 0:
        pool_process()
        signal.alarm(int(sys.argv[2]))  # a sibling that blocks is ended by SIGALRM
        list(tqdm(range(3), desc="Loading weights"))
        os._exit(0)
    _, status = os.waitpid(sibling, 0)
    print("sibling finished" if status == 0 else f"sibling blocked ({status})")
    """
)


def _run(mode: str, alarm_seconds: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCENARIO, mode, str(alarm_seconds)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_a_pool_process_killed_mid_progress_bar_leaves_its_siblings_working():
    assert _run("hooked", 60) == "sibling finished"


def test_without_the_hook_the_sibling_blocks_on_the_dead_process_lock():
    # The failure the hook prevents: without it the sibling waits for good (here, until its alarm).
    assert _run("plain", 3).startswith("sibling blocked")
