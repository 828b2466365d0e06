"""Swap-ins run one after another on a thread of their own while the caller encodes the next wave.

A swap-in is mostly PostgreSQL's work, in PostgreSQL's own process: the HNSW
inserts of the new vectors, the postings and their indexes. Its thread spends
that time waiting on its connection, with the GIL released, so the encoder's
next wave runs meanwhile instead of after it (bench/README.md, ingestion).

Inside a caller's transaction each swap-in runs inline, at once, on the
caller's connection instead: a second connection would not see the caller's
uncommitted rows, and the caller asked for its writes to share its transaction.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import connection


class WriteBehind:
    """``with WriteBehind() as writer: writer.submit(key, fn, ...)``; then ``writer.results()``.

    Submitted calls run in submission order, one at a time, each on the writer
    thread's own database connection (closed when the block ends). Leaving the
    block waits for every submitted call: a swap-in already started is never
    abandoned half-way, whatever the caller's own failure.
    """

    def __init__(self) -> None:
        self.inline = connection.in_atomic_block
        self._executor = None if self.inline else ThreadPoolExecutor(1, thread_name_prefix="write-behind")
        self._futures: dict[object, Future] = {}

    def __enter__(self) -> WriteBehind:
        return self

    def __exit__(self, *exc) -> None:
        if self._executor is not None:
            self._executor.submit(connection.close)  # the writer thread's connection, not the caller's
            self._executor.shutdown(wait=True)

    def submit(self, key: object, fn: Callable[..., object], *args, **kwargs) -> None:
        future: Future = Future()
        if self._executor is not None:
            future = self._executor.submit(fn, *args, **kwargs)
        else:
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed back by results(), as the thread's would be
                future.set_exception(exc)
        self._futures[key] = future

    @property
    def busy(self) -> bool:
        """Whether a submitted call has yet to finish (read by the encoding thread between its calls)."""
        return any(not future.done() for future in self._futures.values())

    @contextlib.contextmanager
    def cores_shared(self) -> Iterator[bool]:
        """While a swap-in runs, torch work on the calling thread uses one core fewer; yields whether
        one does (the caller then keeps its calls short, to take the core back soon after).

        PostgreSQL's backend needs a core for the swap-in. A torch encoder holding
        every core meanwhile does not get more done: its threads meet at a barrier
        after each operation, so whichever thread shares a core with the backend
        holds the others back, and the swap-in runs at half speed too (bench/README.md,
        ingestion). torch's thread count belongs to the thread that sets it.
        """
        torch = sys.modules.get("torch")  # only an encoder that imported torch has threads to give up
        if not self.busy:
            yield False
            return
        threads = torch.get_num_threads() if torch is not None else 1
        if threads > 1:
            torch.set_num_threads(threads - 1)
        try:
            yield True
        finally:
            if threads > 1:
                torch.set_num_threads(threads)

    def results(self) -> dict[object, object]:
        """Every submitted call's result by key, once all have run; the first failure is raised."""
        return {key: future.result() for key, future in self._futures.items()}
