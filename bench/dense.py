"""Dense search at scale: pgvector HNSW against an exact scan of the same table, same queries.

Per size (sentences, see bench/corpus.py): the sentence table of
``bench_scale_<size>`` with the app's HNSW index (m=16, ef_construction=64,
cosine). Truth = exact similarities by numpy over the same float32 vectors; the
exact scan in PostgreSQL (``SET enable_indexscan = off``: parallel sequential
scan and sort) gives the baseline latency on a subset of queries, and its ids
are checked against the numpy truth. HNSW runs at several ``hnsw.ef_search``
values; the app's query shape (corpus join, ``iterative_scan = relaxed_order``,
ef_search 100, as qa/adapters.py runs it) is timed too. Every latency is a
median over ``repeats`` passes per query after one warm-up pass. ``--hnsw-grid``
rebuilds the index with other (m, ef_construction) pairs to compare build time,
recall and latency; the app's index is rebuilt afterwards.
"""

from __future__ import annotations

import time

import numpy as np

from bench.common import latency_summary, log, median, print_table, ratio, write_result
from bench.corpus import load_documents, questions, real_vectors, scaled_corpus
from bench.scale_db import APP_INDEXES, build_hnsw, connect, database_name, index_parameters, load

EF_SEARCH = (40, 100, 200, 400, 1000)  # 1000 is pgvector's maximum
# ann-benchmarks' k-nn recall counts a returned neighbour whose distance is within 1e-3 of the true
# k-th distance; the strict figure below counts exact ties only (1e-5, float32 rounding).
TIE_TOLERANCE, ANN_BENCHMARKS_EPSILON = 1e-5, 1e-3
# The planner picks a sequential scan over a small table; HNSW figures are of the index, always.
HNSW_SETTINGS = {"enable_seqscan": "off"}
TARGET_RECALL, TARGET_SPEEDUP_AT_1M = 0.95, 10.0
RAW_QUERY = "SELECT id FROM documents_sentence ORDER BY embedding <=> %s LIMIT 10"
# What DjangoCorpusIndex.dense_search sends for unit="sentence", k=10 (Django's SQL, parameters inlined).
APP_QUERY = (
    "SELECT s.id, s.embedding <=> %s AS distance FROM documents_sentence s "
    "JOIN documents_document d ON s.document_id = d.id WHERE d.corpus_id = 1 AND d.status = 'ready' "
    "ORDER BY distance LIMIT 10"
)


def exact_queries(size: int, available: int) -> int:
    return available if size <= 100_000 else min(available, 30)


def timed_queries(
    conn, sql: str, vectors: np.ndarray, repeats: int, settings: dict
) -> tuple[list, list[float]]:
    """Ids per query (from the last pass) and each query's median latency over ``repeats`` passes."""
    results, latencies = [], [[] for _ in vectors]
    for rep in range(repeats + 1):  # pass 0 warms caches and is not timed
        for i, vector in enumerate(vectors):
            with conn.transaction():
                for name, value in settings.items():
                    conn.execute(f"SET LOCAL {name} = {value}")
                start = time.perf_counter()
                rows = conn.execute(sql, [vector]).fetchall()
                if rep:
                    latencies[i].append(time.perf_counter() - start)
            if rep == repeats:
                results.append([r[0] for r in rows])
    return results, [median(per_query) for per_query in latencies]


def uses_hnsw(conn, sql: str, vector: np.ndarray, settings: dict) -> bool:
    with conn.transaction():
        for name, value in settings.items():
            conn.execute(f"SET LOCAL {name} = {value}")
        plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, [vector]).fetchall())
    return "sentence_embedding_hnsw" in plan


def app_ef_search() -> int:
    from django.conf import settings

    return settings.QA_HNSW_EF_SEARCH


def recall_at_10(found: list[list[int]], sims: np.ndarray, tolerance: float = TIE_TOLERANCE) -> float:
    """Share of returned ids at least as similar as the true 10th neighbour (ties count as found).

    analyst-bench repeats sentences verbatim (72k distinct texts in 89k), so several ids share the
    10th similarity; which of them a search returns is arbitrary and not a miss.
    """
    tenth = np.partition(sims, -10, axis=1)[:, -10] - tolerance
    hits = [sum(sims[i, j - 1] >= tenth[i] for j in ids) / 10 for i, ids in enumerate(found)]
    return float(np.mean(hits))


def sweep(conn, vectors, truth, repeats: int) -> list[dict]:
    rows = []
    for ef in EF_SEARCH:
        found, lat = timed_queries(conn, RAW_QUERY, vectors, repeats, HNSW_SETTINGS | {"hnsw.ef_search": ef})
        rows.append(
            {
                "ef_search": ef,
                "recall@10": recall_at_10(found, truth),
                "recall@10_ann_benchmarks": recall_at_10(found, truth, ANN_BENCHMARKS_EPSILON),
                **latency_summary(lat),
            }
        )
    return rows


def tenth_gaps(truth: np.ndarray) -> dict:
    """How crowded the 10th place is: similarity of the 10th minus the 11th and the 20th, per query."""
    top = -np.sort(-np.partition(truth, -20, axis=1)[:, -20:], axis=1)
    return {
        "median_gap_10_11": float(np.median(top[:, 9] - top[:, 10])),
        "median_gap_10_20": float(np.median(top[:, 9] - top[:, 19])),
        "median_sim_10": float(np.median(top[:, 9])),
    }


def iterative_scans(conn, vectors, truth, repeats: int) -> list[dict]:
    """The app's query (corpus join: a filter the index cannot apply) with each iterative-scan mode."""
    rows = []
    for mode in ("off", "relaxed_order", "strict_order"):
        for ef in (100, app_ef_search(), 1000):
            settings = {"hnsw.iterative_scan": mode, "hnsw.ef_search": ef}
            found, lat = timed_queries(conn, APP_QUERY, vectors, repeats, settings)
            rows.append(
                {
                    "iterative_scan": mode,
                    "ef_search": ef,
                    "recall@10": recall_at_10(found, truth),
                    "returned": float(np.mean([len(ids) for ids in found])),
                    **latency_summary(lat),
                }
            )
    return rows


def measure_size(size: int, base, base_vectors, query_vectors, args, grid) -> dict:
    corpus = scaled_corpus(size, base, base_vectors)
    load_timings = load(corpus, sentence_index=args.hnsw_index)
    truth = query_vectors @ corpus.vectors.T  # exact similarities; sentence ids are row + 1
    repeats = args.repeat or 3
    app_ef = app_ef_search()
    result = {
        "size": size,
        "copies": corpus.copies,
        "load": load_timings,
        "queries": len(query_vectors),
        "crowding": tenth_gaps(truth),
    }
    with connect(database_name(size)) as conn:
        result["index_parameters"] = index_parameters(conn, "sentence_embedding_hnsw")
        result["table_mb"] = conn.execute(
            "SELECT pg_total_relation_size('documents_sentence') / 1e6::float8"
        ).fetchone()[0]
        result["index_mb"] = conn.execute(
            "SELECT pg_relation_size('sentence_embedding_hnsw') / 1e6::float8"
        ).fetchone()[0]
        result["plans"] = {
            name: uses_hnsw(conn, sql, query_vectors[0], settings)
            for name, sql, settings in (
                ("raw", RAW_QUERY, HNSW_SETTINGS | {"hnsw.ef_search": app_ef}),
                ("app", APP_QUERY, {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": app_ef}),
                ("exact", RAW_QUERY, {"enable_indexscan": "off"}),
            )
        }
        if not (result["plans"]["raw"] and result["plans"]["app"]) or result["plans"]["exact"]:
            log(f"dense {size:,}: unexpected plans {result['plans']} (True = the HNSW index is used)")
        n_exact = exact_queries(size, len(query_vectors))
        log(f"dense {size:,}: exact scan on {n_exact} queries")
        exact_found, exact_lat = timed_queries(
            conn,
            RAW_QUERY,
            query_vectors[:n_exact],
            1 if size > 100_000 else repeats,
            {"enable_indexscan": "off"},
        )
        result["exact"] = {
            **latency_summary(exact_lat),
            "recall@10_vs_numpy": recall_at_10(exact_found, truth[:n_exact]),
        }
        log(f"dense {size:,}: HNSW ef_search sweep")
        result["hnsw"] = sweep(conn, query_vectors, truth, repeats)
        # Same-query comparison for the speed-up: HNSW latency on the exact subset.
        _, hnsw_subset = timed_queries(
            conn,
            RAW_QUERY,
            query_vectors[:n_exact],
            repeats,
            HNSW_SETTINGS | {"hnsw.ef_search": app_ef},
        )
        result["hnsw_on_exact_queries"] = latency_summary(hnsw_subset)
        result["speedup_p50"] = ratio(result["exact"]["p50_ms"], result["hnsw_on_exact_queries"]["p50_ms"])
        found, lat = timed_queries(
            conn,
            APP_QUERY,
            query_vectors,
            repeats,
            {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": app_ef},
        )
        result["app_query"] = {"recall@10": recall_at_10(found, truth), **latency_summary(lat)}
        log(f"dense {size:,}: iterative scans")
        result["iterative_scans"] = iterative_scans(conn, query_vectors, truth, repeats)
        result["grid"] = []
        # The app's parameters go last: that rebuild restores the index and times it in this same run.
        app_params = tuple(args.hnsw_index or APP_INDEXES["sentence_embedding_hnsw"][1:])
        for m, ef_construction in [*(g for g in grid if g != app_params), app_params] if grid else []:
            seconds = build_hnsw(conn, "sentence_embedding_hnsw", "documents_sentence", m, ef_construction)
            size_mb = conn.execute(
                "SELECT pg_relation_size('sentence_embedding_hnsw') / 1e6::float8"
            ).fetchone()[0]
            result["grid"].append(
                {
                    "m": m,
                    "ef_construction": ef_construction,
                    "build_seconds": seconds,
                    "index_mb": size_mb,
                    "sweep": sweep(conn, query_vectors, truth, repeats),
                }
            )
    return result


def parse_grid(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in pair.split(":")) for pair in text.split(",") if pair]


def run(args) -> dict:
    from bench.common import setup_django

    setup_django(migrate=False)
    base = load_documents()
    texts = [t for _, _, doc_texts in base for t in doc_texts]
    log(f"dense: real vectors for {len(texts):,} sentences (cached after the first run)")
    base_vectors = real_vectors(texts)
    query_vectors = real_vectors(questions(args.queries))
    sizes = args.sizes
    middle = sorted(sizes)[len(sizes) // 2]
    grid_spec = parse_grid(args.hnsw_grid) if args.hnsw_grid else [(16, 128), (32, 64)]
    results = []
    for size in sizes:
        grid = grid_spec if (args.hnsw_grid or (size == middle and len(sizes) > 1)) else []
        results.append(measure_size(size, base, base_vectors, query_vectors, args, grid))
        # Saved after each size: a long run cut short keeps what it measured.
        write_result("dense", {"sizes": results, "partial": True}, quick=args.quick, sizes=args.sizes)
    rows = []
    app_ef = app_ef_search()
    for r in results:
        default = next(s for s in r["hnsw"] if s["ef_search"] == app_ef)
        rows.append(
            (
                f"{r['size']:,}",
                r["load"].get("sentence_embedding_hnsw_build_seconds", float("nan")),
                r["index_mb"],
                r["exact"]["p50_ms"],
                r["exact"]["p95_ms"],
                r["exact"]["n"],
                default["p50_ms"],
                default["p95_ms"],
                default["recall@10"],
                r["speedup_p50"],
                r["app_query"]["p50_ms"],
                r["app_query"]["recall@10"],
            )
        )
    print_table(
        f"pgvector HNSW (m, ef_construction as built, ef_search={app_ef}) vs exact scan, top-10 "
        f"({len(query_vectors)} queries; speed-up = exact p50 / HNSW p50 on the exact-scan queries; "
        f"targets recall >= {TARGET_RECALL}, >= {TARGET_SPEEDUP_AT_1M:.0f}x at 1M)",
        [
            "sentences",
            "build s",
            "index MB",
            "exact p50",
            "exact p95",
            "exact n",
            "hnsw p50",
            "hnsw p95",
            "recall@10",
            "speed-up",
            "app query p50",
            "app recall",
        ],
        rows,
    )
    sweep_rows = [
        (
            f"{r['size']:,}",
            *r["index_parameters"],
            s["ef_search"],
            s["recall@10"],
            s["recall@10_ann_benchmarks"],
            s["p50_ms"],
            s["p95_ms"],
        )
        for r in results
        for s in r["hnsw"]
    ]
    sweep_rows += [
        (
            f"{r['size']:,} (rebuilt)",
            g["m"],
            g["ef_construction"],
            s["ef_search"],
            s["recall@10"],
            s["recall@10_ann_benchmarks"],
            s["p50_ms"],
            s["p95_ms"],
        )
        for r in results
        for g in r["grid"]
        for s in g["sweep"]
    ]
    print_table(
        "HNSW parameters: recall@10 and latency (ms)",
        ["sentences", "m", "ef_construction", "ef_search", "recall@10", "recall@10 (1e-3)", "p50", "p95"],
        sweep_rows,
    )
    print_table(
        "The app's query (corpus join) by iterative-scan mode: recall@10, rows returned, latency (ms)",
        ["sentences", "iterative_scan", "ef_search", "recall@10", "returned", "p50", "p95"],
        [
            (
                f"{r['size']:,}",
                i["iterative_scan"],
                i["ef_search"],
                i["recall@10"],
                i["returned"],
                i["p50_ms"],
                i["p95_ms"],
            )
            for r in results
            for i in r["iterative_scans"]
        ],
    )
    print_table(
        "How crowded the true top-10 is (similarities)",
        ["sentences", "median 10th", "median 10th - 11th", "median 10th - 20th"],
        [
            (
                f"{r['size']:,}",
                r["crowding"]["median_sim_10"],
                r["crowding"]["median_gap_10_11"],
                r["crowding"]["median_gap_10_20"],
            )
            for r in results
        ],
    )
    grid_rows = [
        (
            f"{r['size']:,}",
            g["m"],
            g["ef_construction"],
            g["build_seconds"],
            g["index_mb"],
            ratio(g["build_seconds"], r["grid"][-1]["build_seconds"]),
        )
        for r in results
        for g in r["grid"]
    ]
    if grid_rows:
        print_table(
            "HNSW build time by parameters (ratio against m=16, ef_construction=64 on the same table)",
            ["sentences", "m", "ef_construction", "build s", "index MB", "ratio"],
            grid_rows,
        )
    result = {
        "sizes": results,
        "targets": {"recall@10": TARGET_RECALL, "speedup_at_1m": TARGET_SPEEDUP_AT_1M},
    }
    write_result("dense", result, quick=args.quick, sizes=args.sizes)
    return result
