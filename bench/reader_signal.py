"""Held-out passage-reader scores for bench/answerability.py's rows.

A CLAPNQ question is read by the model of bench/train_reader.py trained without
its fold (``fold{k}.`` in the packed file; the folds are bench/answerability.py's
seed-0 split, as bench/reader_data.py assigned them); every other question by
the final model (``final.``), which saw no analyst-bench data. Scores are cached
beside the rows, keyed by the file's name.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from qa.pipeline.reading.reader import DEFAULT_THREADS, PassageReader  # noqa: E402

PASSAGES = 1  # the reader reads the top passage only: each passage costs a MiniLM pass on CPU


def row_key(row: dict) -> str:
    return f"{row['dataset']}|{row['case_id']}"


def held_out_readings(rows: list[dict], source: Path, folds, cache_dir: Path) -> list[float]:
    """p(answerable) of the top passage for each row, by a model that never saw the row's question.

    ``source``: bench/train_reader.py's packed models, or a .json of scores by "dataset|case_id"
    that an earlier run wrote (bench/results/reader_heldout.json holds the shipped reader's)."""
    cache = source if source.suffix == ".json" else cache_dir / f"reader_{source.stem}.json"
    if cache.exists():
        stored = json.loads(cache.read_text())
        missing = [row_key(row) for row in rows if row_key(row) not in stored]
        if source.suffix == ".json" and missing:
            raise SystemExit(f"{source} has no reader score for {missing[0]} (and {len(missing) - 1} more)")
        if not missing:
            return [stored[row_key(row)] for row in rows]
    clapnq = [i for i, row in enumerate(rows) if row["dataset"] == "clapnq-dev"]
    fold_of = dict(zip(clapnq, folds, strict=True))
    readers: dict[str, PassageReader] = {}
    scores = []
    for i, row in enumerate(rows):
        prefix = f"fold{fold_of[i]}." if i in fold_of else "final."
        if prefix not in readers:
            readers[prefix] = PassageReader(source, prefix=prefix)
        passages = [(p["title"], p["sentences"]) for p in row["passages"][:PASSAGES]]
        scores.append(max(readers[prefix].read(row["question"], passages), default=0.0))
    cache.write_text(json.dumps(dict(zip(map(row_key, rows), scores, strict=True)), indent=0) + "\n")
    return scores


def reader_seconds(rows: list[dict], sample: int = 60) -> tuple[list[float], list[float]]:
    """(wall, CPU) seconds the shipped reader takes for a question's top passage, every n-th row.

    On the reader's own thread count (QA_READER_THREADS, default 1: on this shared 2-core machine
    two torch threads wait on each other; bench/reader_threads.py); CPU time is what a quiet
    machine's wall time comes to."""
    reader = PassageReader(threads=DEFAULT_THREADS)
    step = max(1, len(rows) // sample)
    wall, cpu = [], []
    for row in rows[::step]:
        passages = [(p["title"], p["sentences"]) for p in row["passages"][:PASSAGES]]
        started, started_cpu = time.perf_counter(), time.process_time()
        reader.read(row["question"], passages)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return wall, cpu


def report_cost(rows: list[dict]) -> None:
    signals = statistics.median(r["seconds"]["signals"] for r in rows)
    wall, cpu = reader_seconds(rows)
    p50, p90 = statistics.median(wall) * 1000, sorted(wall)[int(0.9 * len(wall))] * 1000
    print(
        f"  reader per question (top passage, {len(wall)} questions, {DEFAULT_THREADS} thread(s)): "
        f"wall p50 {p50:.0f} ms (p90 {p90:.0f}), "
        f"CPU time p50 {statistics.median(cpu) * 1000:.0f} ms; signals p50 {signals * 1000:.1f} ms; "
        f"signals + reader {(signals * 1000 + p50) / (signals * 1000):.0f}x today's signals (wall)"
    )
