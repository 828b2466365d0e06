"""Hybrid retrieval as the pipeline runs it, at scale: latency and the process's peak memory.

Each size runs in a fresh process (so peak RSS is that of retrieval alone)
against ``bench_scale_<size>`` (see bench/scale_db.py): the process loads the
embedder, builds ``qa.adapters.DjangoCorpusIndex`` for the corpus (the
snapshot every QA worker process keeps), then calls
``qa.pipeline.search.retrieval.retrieve`` with the default RetrievalConfig (chunks,
hybrid, min-max fusion, 50 candidates per retriever, no reranker) and with
sentence units. The first question of each unit is cold (it builds that
unit's BM25 index); the rest give p50/p95. Each retriever call is timed too,
to show where the time goes. Baseline: the query encoding inside the same
calls, which every dense or hybrid question pays.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from bench.common import (
    Stopwatch,
    latency_summary,
    log,
    peak_rss_mb,
    print_table,
    ratio,
    run_child,
    write_result,
)


class TimedIndex:
    """Delegates to a CorpusIndex and keeps the time spent in each search."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.spent = {"lexical": [], "dense": []}

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def lexical_search(self, *args):
        start = time.perf_counter()
        try:
            return self.inner.lexical_search(*args)
        finally:
            self.spent["lexical"].append(time.perf_counter() - start)

    def dense_search(self, *args):
        start = time.perf_counter()
        try:
            return self.inner.dense_search(*args)
        finally:
            self.spent["dense"].append(time.perf_counter() - start)


class TimedEmbedder:
    """Delegates to an Embedder and keeps the time of each encode call."""

    def __init__(self, inner) -> None:
        self.inner, self.spent = inner, []

    def encode(self, texts):
        start = time.perf_counter()
        try:
            return self.inner.encode(texts)
        finally:
            self.spent.append(time.perf_counter() - start)


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def child(size: int, n_queries: int) -> dict:
    from bench.common import setup_django

    setup_django(migrate=False)
    from bench.corpus import questions
    from documents.embedding import get_embedder
    from documents.models import Corpus
    from qa.adapters import DjangoCorpusIndex
    from qa.pipeline.search.retrieval import RetrievalConfig, retrieve

    out = {"size": size, "rss_mb": {"start": rss_mb()}}
    embedder = TimedEmbedder(get_embedder())
    asked = questions(n_queries)
    embedder.encode(asked[:1])
    encode = []
    for question in asked:
        start = time.perf_counter()
        embedder.encode([question])
        encode.append(time.perf_counter() - start)
    out["encode_query"] = latency_summary(encode)
    out["rss_mb"]["with_embedder"] = rss_mb()
    corpus = Corpus.objects.get(name=f"scale-{size}")
    with Stopwatch() as snapshot:
        index = TimedIndex(DjangoCorpusIndex(corpus))
    out["snapshot_seconds"] = snapshot.seconds
    out["rss_mb"]["with_snapshot"] = rss_mb()
    for unit in ("chunk", "sentence"):
        config = RetrievalConfig(unit=unit)
        with Stopwatch() as cold:
            retrieve(asked[0], index, embedder, config)
        index.spent, embedder.spent = {"lexical": [], "dense": []}, []
        latencies = []
        for question in asked[1:]:
            start = time.perf_counter()
            retrieve(question, index, embedder, config)
            latencies.append(time.perf_counter() - start)
        out[unit] = {
            "cold_seconds": cold.seconds,
            **latency_summary(latencies),
            "lexical": latency_summary(index.spent["lexical"]),
            "dense": latency_summary(index.spent["dense"]),
            "encode": latency_summary(embedder.spent),
        }
        out["rss_mb"][f"after_{unit}"] = rss_mb()
    out["rss_mb"]["peak"] = peak_rss_mb()
    return out


def run(args) -> dict:
    from bench.common import setup_django

    setup_django(migrate=False)
    from bench.corpus import load_documents, real_vectors, scaled_corpus
    from bench.scale_db import database_name, load

    base = load_documents()
    base_vectors = real_vectors([t for _, _, texts in base for t in texts])
    results = []
    for size in args.sizes:
        load(scaled_corpus(size, base, base_vectors))
        log(f"hybrid {size:,}: fresh process")
        results.append(
            run_child(
                "hybrid", ["bench.hybrid", "--child", str(size), str(args.queries)], size, database_name(size)
            )
        )
        # Saved after each size: a long run cut short keeps what it measured.
        write_result("hybrid", {"sizes": results, "partial": True}, quick=args.quick, sizes=args.sizes)
    rows = []
    for r in results:
        for unit in ("chunk", "sentence"):
            u = r[unit]
            base_ms = u["encode"]["p50_ms"]
            rows.append(
                (
                    f"{r['size']:,}",
                    unit,
                    u["p50_ms"],
                    u["p95_ms"],
                    ratio(u["p50_ms"], base_ms),
                    u["lexical"]["p50_ms"],
                    u["dense"]["p50_ms"],
                    base_ms,
                    u["cold_seconds"],
                    r["snapshot_seconds"],
                    r["rss_mb"]["peak"],
                )
            )
    print_table(
        f"Hybrid retrieval, qa.pipeline.search.retrieval.retrieve over DjangoCorpusIndex ({args.queries} "
        "questions; "
        "ratio = p50 / p50 of the query encoding inside those calls)",
        [
            "sentences",
            "unit",
            "p50 ms",
            "p95 ms",
            "ratio",
            "bm25 p50",
            "pgvector p50",
            "encode p50",
            "cold s",
            "snapshot s",
            "peak RSS MB",
        ],
        rows,
    )
    mem_rows = [
        (
            f"{r['size']:,}",
            *(
                r["rss_mb"][k]
                for k in ("start", "with_embedder", "with_snapshot", "after_chunk", "after_sentence", "peak")
            ),
        )
        for r in results
    ]
    print_table(
        "Memory of the retrieving process (RSS, MB)",
        ["sentences", "start", "+ embedder", "+ snapshot", "+ chunk BM25", "+ sentence BM25", "peak"],
        mem_rows,
    )
    result = {"queries": args.queries, "sizes": results}
    write_result("hybrid", result, quick=args.quick, sizes=args.sizes)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=2, type=int, metavar=("SIZE", "QUERIES"), required=True)
    size, queries = parser.parse_args().child
    os.environ["GROUNDEDQA_BENCH_CHILD"] = "1"
    print("RESULT " + json.dumps(child(size, queries)), flush=True)


if __name__ == "__main__":
    main()
