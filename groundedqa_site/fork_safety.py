"""What a pool process must not share with its siblings: tqdm's progress-bar lock.

tqdm guards its bars with a multiprocessing lock (a semaphore), created in the worker's main
process when it loads the encoder and inherited by every pool process it forks. Each pool
process takes it whenever transformers shows or even only creates a progress bar (loading a
model's weights on first use prints "Loading weights"), disabled bars included. A pool process
SIGKILLed while holding it never releases it, and from then on every sibling, and every process
forked in place of the dead one, blocks at its next progress bar for good, inside a task whose
lease its heartbeat thread keeps renewing: the question never finishes and is never reclaimed.
The fault test on Redis lost 2 of 6 questions that way once in a full CI run (two pool processes
stuck in their first retrieval); tests/test_fork_safety.py reproduces it with two forks.

Each pool process therefore takes a lock of its own, right after the fork, before any task.
"""

from __future__ import annotations

import threading

from tqdm import std as tqdm_std


def _bar_classes() -> list[type]:
    found, todo = [], [tqdm_std.tqdm]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def own_progress_bar_lock() -> None:
    """Give this process a progress-bar lock no other process holds.

    A subclass (tqdm.auto's) that created its lock before the base had one keeps it in its own
    class dict, so every class holding one gets the new lock, not just the base."""
    lock = threading.RLock()
    for cls in _bar_classes():
        if cls is tqdm_std.tqdm or "_lock" in vars(cls):
            cls.set_lock(lock)
