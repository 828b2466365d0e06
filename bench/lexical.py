"""BM25 at scale: qa.pipeline.search.bm25.BM25Index against rank-bm25's BM25Okapi on the same corpus and
queries.

Both get the same sentences (see bench/corpus.py for how 100k and 1M are made)
tokenised by ``qa.pipeline.search.bm25.tokenize`` and the same parameters (k1=1.5,
b=0.75, epsilon=0.25). Build time includes tokenising. Query latency is one
top-10 search; for rank-bm25 that is ``get_scores`` plus a top-10 selection
with the same tie-break (equal scores in index order). rank-bm25 scores every
document in Python per query term, so at large sizes it runs on a few queries
only; the speed-up compares both on exactly those queries. Agreement: the
share of those queries whose top-10 keys are identical in order, and the
largest score difference.
"""

from __future__ import annotations

import gc
import time

import numpy as np

from bench.common import Stopwatch, latency_summary, log, median, print_table, ratio, write_result
from bench.corpus import load_documents, questions, scaled_corpus

TARGET_SPEEDUP_AT_1M = 20.0


def rank_bm25_queries(size: int, available: int) -> int:
    """How many queries rank-bm25 can afford at a size (it is O(corpus) per query term in Python)."""
    if size <= 20_000:
        return available
    if size <= 200_000:
        return min(available, 30)
    return min(available, 6)


def top10_rank_bm25(model, query_tokens: list[str]) -> tuple[list[int], np.ndarray]:
    scores = model.get_scores(query_tokens)
    candidates = np.argpartition(-scores, 10)[:10] if len(scores) > 10 else np.arange(len(scores))
    cut = scores[candidates].min()
    tied = np.flatnonzero(scores >= cut)
    order = tied[np.lexsort((tied, -scores[tied]))][:10]
    return [int(i) for i in order if scores[i] > 0], scores[order]


def measure_size(size: int, base, asked: list[str], repeats: int) -> dict:
    from rank_bm25 import BM25Okapi

    from qa.pipeline.search.bm25 import BM25Index, tokenize

    corpus = scaled_corpus(size, base, None)
    items = [(str(i), text) for i, text in enumerate(t for _, _, texts in corpus.documents for t in texts)]
    builds = []
    for _ in range(repeats):
        index = None
        gc.collect()
        with Stopwatch() as build:
            index = BM25Index(items)
        builds.append(build.seconds)
    ours = []
    for query in asked:
        start = time.perf_counter()
        index.search(query, 10)
        ours.append(time.perf_counter() - start)

    log(f"lexical {size:,}: BM25Index built in {median(builds):.1f}s; building rank-bm25")
    with Stopwatch() as rank_build:
        model = BM25Okapi([tokenize(text) for _, text in items], k1=1.5, b=0.75, epsilon=0.25)
    subset = asked[: rank_bm25_queries(size, len(asked))]
    theirs, ours_subset, identical, max_diff = [], [], 0, 0.0
    for query in subset:
        tokens = tokenize(query)
        start = time.perf_counter()
        rank_ids, rank_scores = top10_rank_bm25(model, tokens)
        theirs.append(time.perf_counter() - start)
        start = time.perf_counter()
        hits = index.search(query, 10)
        ours_subset.append(time.perf_counter() - start)
        our_ids = [int(key) for key, _ in hits]
        identical += our_ids == rank_ids
        if hits:
            max_diff = max(
                max_diff, float(np.max(np.abs(np.array([s for _, s in hits]) - rank_scores[: len(hits)])))
            )
    del model
    gc.collect()
    result = {
        "size": size,
        "copies": corpus.copies,
        "vocabulary": len(index.vocabulary),
        "build_seconds": {"ours": median(builds), "ours_runs": builds, "rank_bm25": rank_build.seconds},
        "ours": latency_summary(ours),
        "ours_on_rank_queries": latency_summary(ours_subset),
        "rank_bm25": latency_summary(theirs),
        "rank_queries": len(subset),
        "top10_identical": identical / len(subset) if subset else float("nan"),
        "max_score_diff": max_diff,
    }
    result["speedup_p50"] = ratio(result["rank_bm25"]["p50_ms"], result["ours_on_rank_queries"]["p50_ms"])
    log(
        f"lexical {size:,}: rank-bm25 p50 {result['rank_bm25']['p50_ms']:.0f} ms, "
        f"ours {result['ours_on_rank_queries']['p50_ms']:.2f} ms"
    )
    return result


def run(args) -> dict:
    base = load_documents()
    asked = questions(args.queries)
    results = []
    for size in args.sizes:
        repeats = args.repeat or (3 if size <= 100_000 else 1)
        results.append(measure_size(size, base, asked, repeats))
        # Saved after each size: a long run cut short keeps what it measured.
        write_result("lexical", {"sizes": results, "partial": True}, quick=args.quick, sizes=args.sizes)
    rows = []
    for r in results:
        rows.append(
            (
                f"{r['size']:,}",
                r["vocabulary"],
                r["build_seconds"]["ours"],
                r["build_seconds"]["rank_bm25"],
                ratio(r["build_seconds"]["rank_bm25"], r["build_seconds"]["ours"]),
                r["ours"]["p50_ms"],
                r["ours"]["p95_ms"],
                r["rank_bm25"]["p50_ms"],
                r["rank_bm25"]["p95_ms"],
                r["speedup_p50"],
                f"{r['top10_identical']:.0%} of {r['rank_queries']}",
                r["max_score_diff"],
            )
        )
    print_table(
        f"BM25 top-10: BM25Index (ours) vs rank-bm25 BM25Okapi ({len(asked)} queries for ours; "
        f"speed-up = rank-bm25 p50 / ours p50 on the same queries; target >= {TARGET_SPEEDUP_AT_1M:.0f}x "
        "at 1M)",
        [
            "sentences",
            "vocab",
            "build s ours",
            "build s rank",
            "build x",
            "ours p50 ms",
            "ours p95 ms",
            "rank p50 ms",
            "rank p95 ms",
            "speed-up",
            "same top-10",
            "max |score diff|",
        ],
        rows,
    )
    result = {"queries": len(asked), "sizes": results, "target_speedup_at_1m": TARGET_SPEEDUP_AT_1M}
    write_result("lexical", result, quick=args.quick, sizes=args.sizes)
    return result
