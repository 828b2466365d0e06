"""The passage reader's cost per question, by torch thread count, quiet and with the cores contended.

    nice -n 10 .venv/bin/python -m bench reader_threads [--queries 60] [--busy 2]

The reader (qa/pipeline/reading/reader.py) reads each question's top passage: one
MiniLM pass over "question [SEP] title. passage". Here each CLAPNQ-dev question
is read with its own passage (as retrieval would rank it first for most), once
per thread count, the counts interleaved question by question so that the load
of a shared machine falls on all of them alike. Each count is measured twice:
as the machine is, and with ``--busy`` extra processes spinning on the CPU (a
stand-in for the other QA pool process, an ingestion worker or the neighbours
on a shared host). Printed: wall p50 / p95 and CPU-time p50 per read, and the ratio
of each count's wall p50 to one thread's, the QA_READER_THREADS default.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time

from bench.common import latency_summary, log, median, print_table, ratio, write_result
from review.evaluation.reference import default_data_dir

DATA = default_data_dir()
THREAD_COUNTS = (1, 2)  # this machine has 2 cores; 2 is torch's default here


def passages(limit: int) -> list[tuple[str, str, list[str]]]:
    """(question, title, sentences) of CLAPNQ-dev, answerable and unanswerable alternating."""
    from qa.pipeline.core.segment import segment

    kinds = []
    for kind in ("answerable", "unanswerable"):
        path = DATA / "clapnq-dev" / f"clapnq_dev_{kind}.jsonl"
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        kinds.append(records)
    mixed = [r for pair in zip(*kinds, strict=False) for r in pair][:limit]
    out = []
    for record in mixed:
        passage = record["passages"][0]
        text = passage["text"]
        out.append((record["input"], passage["title"], [text[a:b] for a, b in segment(text)]))
    return out


def _spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


def measure(reader, asked, counts) -> dict[int, dict]:
    wall: dict[int, list[float]] = {n: [] for n in counts}
    cpu: dict[int, list[float]] = {n: [] for n in counts}
    for question, title, sentences in asked:
        for n in counts:
            reader.threads = n
            started, started_cpu = time.perf_counter(), time.process_time()
            reader.read(question, [(title, sentences)])
            wall[n].append(time.perf_counter() - started)
            cpu[n].append(time.process_time() - started_cpu)
    return {n: {"wall": latency_summary(wall[n]), "cpu_p50_ms": median(cpu[n]) * 1000} for n in counts}


def run(args) -> dict:
    import torch

    from qa.pipeline.reading.reader import PassageReader

    queries = min(args.queries, 60) if args.queries else 60
    busy = getattr(args, "busy", 2)
    asked = passages(queries)
    reader = PassageReader()
    reader.read(*asked[0][:1], [asked[0][1:]])  # warm up: first call allocates
    default_threads = torch.get_num_threads()
    results = {}
    for condition, spinners in (("as is", 0), (f"+{busy} busy processes", busy)):
        stop = multiprocessing.Event()
        workers = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(spinners)]
        for worker in workers:
            worker.start()
        load = os.getloadavg()[0]
        try:
            log(f"reader_threads: {condition}, {len(asked)} reads per thread count, load {load:.1f}")
            results[condition] = {"load_at_start": load, "threads": measure(reader, asked, THREAD_COUNTS)}
        finally:
            stop.set()
            for worker in workers:
                worker.join(timeout=5)
    rows = []
    for condition, result in results.items():
        one = result["threads"][1]["wall"]["p50_ms"]
        for n, summary in result["threads"].items():
            wall = summary["wall"]
            rows.append(
                (
                    condition,
                    n,
                    wall["p50_ms"],
                    wall["p95_ms"],
                    summary["cpu_p50_ms"],
                    ratio(wall["p50_ms"], one),
                )
            )
    print_table(
        f"Passage reader, one top passage per question ({len(asked)} CLAPNQ-dev questions; "
        f"torch default here {default_threads} threads)",
        ("condition", "threads", "wall p50 ms", "wall p95 ms", "CPU p50 ms", "wall p50 / 1 thread"),
        rows,
    )
    payload = {"questions": len(asked), "torch_default_threads": default_threads, "conditions": results}
    write_result("reader_threads", payload, quick=args.quick)
    return payload
