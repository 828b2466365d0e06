"""A real Celery worker process for benchmarks, on a private broker folder and the benchmark server.

``python -m bench.worker --vectors FILE.npz -- <celery worker args>`` runs the
worker with an embedder that looks vectors up instead of encoding them, which
isolates everything ingestion does besides the encoder (broker, claim,
progress updates, row building, inserts and HNSW maintenance).
``--bulk-create`` writes sentence and chunk rows with ``bulk_create``, as
ingestion did before binary COPY (``documents/copy_rows.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import BENCH_VAR_DIR, REPO, bench_environment, log


def private_broker() -> Path:
    """A fresh broker folder, configured in this process; workers get it through the environment."""
    from groundedqa_site.broker import folder_options
    from groundedqa_site.celery import app

    BENCH_VAR_DIR.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="broker-", dir=BENCH_VAR_DIR))
    app.conf.broker_url = "filesystem://"
    app.conf.broker_transport_options = folder_options(folder)
    return folder


def broker_environment(folder: Path, url: str | None = None) -> dict[str, str]:
    """The variables that point a web server or worker at the file-system broker ``folder``, or ``url``."""
    if url:
        return {"CELERY_BROKER_URL": url}
    return {"CELERY_BROKER_URL": "filesystem://", "CELERY_BROKER_DIR": str(folder)}


class Worker:
    """``with Worker(broker, queues="ingestion") as worker:`` runs `celery worker` until the block ends.

    Started the way ``make run`` starts the ingestion worker (prefork, ``-c 1``)
    unless told otherwise. ``vectors`` swaps in the look-up embedder; ``environment`` adds
    settings (``INGEST_WAVE_SENTENCES=0``). ``broker_url``
    (``redis://...``) replaces the file-system broker; ``broker`` then only holds the log.
    """

    def __init__(
        self,
        broker: Path,
        *,
        queues: str = "ingestion",
        concurrency: int = 1,
        vectors: Path | None = None,
        bulk_create: bool = False,
        name: str = "bench",
        database: str | None = None,
        broker_url: str | None = None,
        environment: dict[str, str] | None = None,
    ) -> None:
        self.broker, self.queues, self.concurrency, self.name = broker, queues, concurrency, name
        self.vectors, self.database, self.broker_url = vectors, database, broker_url
        self.bulk_create = bulk_create
        self.environment = environment or {}
        self.log_path = broker / f"{name}.log"

    def __enter__(self) -> Worker:
        celery_args = [
            "worker",
            "-Q",
            self.queues,
            "-c",
            str(self.concurrency),
            "-n",
            f"{self.name}@%h",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if self.vectors or self.bulk_create:
            options = ["--vectors", str(self.vectors)] if self.vectors else []
            options += ["--bulk-create"] if self.bulk_create else []
            cmd = [sys.executable, "-m", "bench.worker", *options, "--", *celery_args]
        else:
            cmd = [sys.executable, "-m", "celery", "-A", "groundedqa_site", *celery_args]
        env = bench_environment(**broker_environment(self.broker, self.broker_url))
        if self.database:
            env["GROUNDEDQA_DATABASE_NAME"] = self.database
        env.update(self.environment)
        started = time.perf_counter()
        with open(self.log_path, "wb") as out:
            self.process = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        while b"ready." not in self.log_path.read_bytes():
            if self.process.poll() is not None or time.perf_counter() - started > 180:
                self.stop()
                raise RuntimeError(f"the Celery worker did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.1)
        self.start_seconds = time.perf_counter() - started
        log(f"worker {self.name} ready in {self.start_seconds:.1f}s (pid {self.process.pid})")
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_TASK_LINE = re.compile(
    r"^(\S+ \S+),(\d{3}) INFO celery\.\S+: Task \S+\[(\S+)\] (received|succeeded in ([\d.]+)s)"
)


def task_gaps(log_path: Path, *, skip: int = 0) -> dict:
    """From a worker log: seconds spent in tasks, and idle between one task's end and the next's receipt.

    The idle part is the broker's polling: it does not shrink when the machine is less loaded.
    """
    received, finished = [], []
    for line in log_path.read_text(errors="replace").splitlines():
        match = _TASK_LINE.match(line)
        if not match:
            continue
        moment = time.mktime(time.strptime(match.group(1), "%Y-%m-%d %H:%M:%S")) + int(match.group(2)) / 1000
        if match.group(4) == "received":
            received.append(moment)
        else:
            finished.append((moment, float(match.group(5))))
    received, finished = received[skip:], finished[skip:]
    gaps = [nxt - done for (done, _), nxt in zip(finished, received[1:], strict=False)]
    return {
        "tasks": len(finished),
        "task_seconds": sum(d for _, d in finished),
        "idle_seconds": sum(gaps),
        "idle_per_task": sum(gaps) / len(gaps) if gaps else float("nan"),
    }


class LookupEmbedder:
    """Returns stored vectors for known texts: an encoder that costs nothing."""

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self._rows = {text: row for row, text in enumerate(texts)}
        self._vectors = np.asarray(vectors, dtype=np.float32)

    def encode(self, texts) -> np.ndarray:
        return self._vectors[[self._rows[t] for t in texts]]


def save_vectors(path: Path, texts: list[str], vectors: np.ndarray) -> Path:
    np.savez(path, texts=np.asarray(texts, dtype=object), vectors=vectors)
    return path


def load_lookup(path: Path) -> LookupEmbedder:
    data = np.load(path, allow_pickle=True)
    return LookupEmbedder(list(data["texts"]), data["vectors"])


@contextlib.contextmanager
def rows_by_bulk_create():
    """Within the block, ingestion in this process writes sentences and chunks as it did before
    binary COPY."""
    from documents import copy_rows
    from documents.models import Chunk, Sentence

    saved = copy_rows.copy_sentences, copy_rows.copy_chunks
    copy_rows.copy_sentences = lambda rows: Sentence.objects.bulk_create(rows, batch_size=2000)
    copy_rows.copy_chunks = lambda rows: Chunk.objects.bulk_create(rows, batch_size=2000)
    try:
        yield
    finally:
        copy_rows.copy_sentences, copy_rows.copy_chunks = saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vectors", type=Path)
    parser.add_argument("--bulk-create", action="store_true")
    parser.add_argument("celery_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    os.environ["GROUNDEDQA_BENCH_CHILD"] = "1"
    import django

    django.setup()
    import documents.tasks
    from groundedqa_site.celery import app

    if args.vectors:
        lookup = load_lookup(args.vectors)
        documents.tasks.get_embedder = lambda: lookup
    argv = [a for a in args.celery_args if a != "--"]
    with rows_by_bulk_create() if args.bulk_create else contextlib.nullcontext():
        app.worker_main(argv)


if __name__ == "__main__":
    main()
