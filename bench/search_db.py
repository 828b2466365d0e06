"""Search in PostgreSQL at scale: query latency and a worker's memory per corpus size, and BM25 exactness.

Each size runs in a fresh process against ``bench_scale_<size>`` (bench/scale_db.py,
which now also writes the BM25 postings the way ingestion does). The process loads
the embedder, as a QA worker does, then calls ``qa.pipeline.search.retrieval.retrieve``
over ``qa.adapters.DjangoCorpusIndex`` with BM25 alone, dense alone and hybrid
(min-max, 50 candidates per retriever, no reranker), at sentence and chunk units.
Vectors, of the corpus and of the questions, are hashed bag-of-words
(``HashingEmbedder``), not the encoder's: p50 is search plus passage reads,
without query encoding; the encoder is loaded anyway, so RSS is a worker's.
The first question of each configuration is a warm-up; the others give p50/p95.
RSS is read after each configuration; the peak is taken before the exactness
check, which reads every passage into an in-memory ``BM25Index`` (rank-bm25's
scores, tests/qa/pipeline/test_bm25.py) and compares its top-10 with the
database's on every question: same scores (1e-9 relative), same keys where no
two of the top-10 scores tie.
"""

from __future__ import annotations

import json
import os
import sys
import time

from bench.common import latency_summary, log, peak_rss_mb, print_table, run_child, write_result

CONFIGS = [(unit, method) for unit in ("sentence", "chunk") for method in ("bm25", "dense", "hybrid")]
EXACTNESS_MAX_SIZE = 100_000  # the in-memory reference index itself needs memory that grows with size


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def child(size: int, n_queries: int) -> dict:
    from bench.common import setup_django

    setup_django(migrate=False)
    from bench.corpus import questions
    from documents.embedding import get_embedder
    from documents.models import EMBEDDING_DIM, Corpus
    from qa.adapters import DjangoCorpusIndex
    from qa.pipeline.search.embedding import HashingEmbedder
    from qa.pipeline.search.retrieval import RetrievalConfig, retrieve

    out: dict = {"size": size, "rss_mb": {"start": rss_mb()}}
    asked = questions(n_queries)
    # Loaded and used once, for a worker's memory; questions are then encoded like the corpus was
    # (hashed, see run()), so dense search ranks consistently and p50 is search and reads alone.
    get_embedder().encode(asked[:1])
    out["rss_mb"]["with_embedder"] = rss_mb()
    # Loading the model peaks above what it keeps; the searches' own peak is what follows.
    out["rss_mb"]["peak_after_embedder"] = peak_rss_mb()
    embedder = HashingEmbedder(EMBEDDING_DIM)
    corpus = Corpus.objects.get(name=f"scale-{size}")
    for unit, method in CONFIGS:
        config = RetrievalConfig(unit=unit, method=method)
        retrieve(asked[0], DjangoCorpusIndex(corpus), embedder, config)
        latencies = []
        for question in asked[1:]:
            start = time.perf_counter()
            # A new index per question, as each stage of each question builds one.
            retrieve(question, DjangoCorpusIndex(corpus), embedder, config)
            latencies.append(time.perf_counter() - start)
        out[f"{unit}/{method}"] = latency_summary(latencies)
        out["rss_mb"][f"after {unit}/{method}"] = rss_mb()
        log(
            f"{size:,} {unit}/{method}: p50 {out[f'{unit}/{method}']['p50_ms']:.1f} ms, RSS {rss_mb():.0f} MB"
        )
    out["rss_mb"]["peak"] = peak_rss_mb()
    if size <= EXACTNESS_MAX_SIZE:
        out["exactness"] = {
            unit: exactness(DjangoCorpusIndex(corpus), unit, asked) for unit in ("sentence", "chunk")
        }
    return out


def exactness(index, unit: str, asked: list[str]) -> dict:
    """How many questions get the in-memory rank-bm25-equivalent top-10 from the database."""
    from qa.pipeline.search.bm25 import BM25Index

    reference = BM25Index((p.key, p.text) for p in index.passages(unit))
    same, tied, worst = 0, 0, 0.0
    for question in asked:
        got, eleven = index.lexical_search(question, unit, 10), reference.search(question, 11)
        expected = eleven[:10]
        scores_got, scores_expected = [s for _, s in got], [s for _, s in expected]
        diff = float("inf")
        if len(scores_got) == len(scores_expected):
            pairs = zip(scores_got, scores_expected, strict=True)
            # Relative, but absolute near 0: a score of 0 (a term of idf 0) may come back as 1e-17.
            diff = max((abs(a - b) / max(abs(b), 1.0) for a, b in pairs), default=0.0)
            worst = max(worst, diff)
        # Tied scores, within the top-10 or between the 10th and the 11th, may come in either order.
        ties = len({round(s, 9) for _, s in eleven}) < len(eleven)
        equal_scores = diff <= 1e-9
        if equal_scores and ([k for k, _ in got] == [k for k, _ in expected] or ties):
            same += 1
            tied += ties
    return {
        "questions": len(asked),
        "same_top10": same,
        "of_which_tied": tied,
        "max_relative_score_diff": worst,
    }


def run(args) -> dict:
    from bench.common import setup_django

    setup_django()  # the bench server's own database gets the vector extension
    from bench.corpus import load_documents, scaled_corpus
    from bench.scale_db import database_name, load
    from documents.models import EMBEDDING_DIM
    from qa.pipeline.search.embedding import HashingEmbedder

    base = load_documents()
    # Hashed bag-of-words vectors stand in for the encoder's: encoding 89k sentences takes hours on
    # this loaded machine, and neither BM25 nor memory depends on them (dense recall: bench/dense.py).
    base_vectors = HashingEmbedder(EMBEDDING_DIM).encode([t for _, _, texts in base for t in texts])
    results = []
    for size in args.sizes:
        load(scaled_corpus(size, base, base_vectors), vectors="hashing")
        log(f"search_db {size:,}: fresh process")
        results.append(
            run_child(
                "search_db", ["bench.search_db", str(size), str(args.queries)], size, database_name(size)
            )
        )
        write_result("search_db", {"sizes": results, "partial": True}, quick=args.quick, sizes=args.sizes)
    report(results, args.queries)
    result = {"queries": args.queries, "sizes": results}
    write_result("search_db", result, quick=args.quick, sizes=args.sizes)
    return result


def report(results: list[dict], queries: int) -> None:
    print_table(
        f"retrieve() over DjangoCorpusIndex, {queries} questions (p50 / p95 ms)",
        ["sentences", *(f"{u} {m}" for u, m in CONFIGS)],
        [
            (
                f"{r['size']:,}",
                *(f"{r[f'{u}/{m}']['p50_ms']:.1f} / {r[f'{u}/{m}']['p95_ms']:.1f}" for u, m in CONFIGS),
            )
            for r in results
        ],
    )
    print_table(
        "RSS of the retrieving process (MB)",
        ["sentences", "start", "+ embedder", *(f"after {u} {m}" for u, m in CONFIGS), "peak"],
        [
            (
                f"{r['size']:,}",
                r["rss_mb"]["start"],
                r["rss_mb"]["with_embedder"],
                *(r["rss_mb"][f"after {u}/{m}"] for u, m in CONFIGS),
                r["rss_mb"]["peak"],
            )
            for r in results
        ],
    )
    print_table(
        "BM25 in PostgreSQL vs in memory (= rank-bm25): questions with the same top-10",
        [
            "sentences",
            "unit",
            "same top-10",
            "of which with tied scores",
            "max score diff (relative, absolute below 1)",
        ],
        [
            (
                f"{r['size']:,}",
                unit,
                f"{e['same_top10']} of {e['questions']}",
                e["of_which_tied"],
                e["max_relative_score_diff"],
            )
            for r in results
            for unit, e in r.get("exactness", {}).items()
        ],
    )


def exactness_only(size: int, n_queries: int) -> dict:
    """The exactness check alone (``python -m bench.search_db SIZE QUERIES exactness`` in a bench env)."""
    from bench.common import setup_django

    setup_django(migrate=False)
    from bench.corpus import questions
    from documents.models import Corpus
    from qa.adapters import DjangoCorpusIndex

    corpus = Corpus.objects.get(name=f"scale-{size}")
    asked = questions(n_queries)
    return {u: exactness(DjangoCorpusIndex(corpus), u, asked) for u in ("sentence", "chunk")}


if __name__ == "__main__":
    os.environ["GROUNDEDQA_BENCH_CHILD"] = "1"
    size, queries = int(sys.argv[1]), int(sys.argv[2])
    only = sys.argv[3:] == ["exactness"]
    print("RESULT " + json.dumps(exactness_only(size, queries) if only else child(size, queries)), flush=True)
