"""What HNSW parameters cost ingestion: rows inserted into an indexed table, per (m, ef_construction).

A worker makes a document live by inserting its sentence rows into
``documents_sentence``, whose HNSW index pgvector updates row by row; a
denser graph (larger m, ef_construction) costs more per insert. Here, on a
table of ``--size`` analyst-bench sentence vectors (real ones from the bench
cache, repeated with bench/corpus.py's noise when the cache holds fewer), each
configuration builds its index (one process, timed) and then takes 2,000 more
rows in one transaction, as ``bulk_create`` sends them. Configurations are
measured in alternation, ``--repeat`` rounds, and the median kept, since the
machine is shared.

``python -m bench hnsw_insert --repeat 2 --sizes 30000``
"""

from __future__ import annotations

import time

import numpy as np

from bench.common import log, median, print_table, write_result
from bench.corpus import _cached_vectors, _perturb_vectors
from bench.scale_db import connect

CONFIGS = [(16, 64), (32, 128), (32, 256)]
INSERTS = 2000


def vectors(size: int) -> np.ndarray:
    known = np.stack(list(_cached_vectors().values())).astype(np.float32)
    if not len(known):
        raise SystemExit("no cached sentence vectors: run python -m bench dense --quick first")
    rng = np.random.default_rng(0)
    parts, total = [known], len(known)
    while total < size + INSERTS:
        parts.append(_perturb_vectors(known, rng))
        total += len(known)
    stacked = np.concatenate(parts)
    return stacked[rng.permutation(len(stacked))[: size + INSERTS]]


def one_round(conn, data: np.ndarray, size: int, m: int, ef_construction: int) -> dict:
    conn.execute("DROP TABLE IF EXISTS hnsw_insert")
    conn.execute("CREATE TABLE hnsw_insert (id bigint PRIMARY KEY, embedding vector(384))")
    with conn.cursor() as cur, cur.copy("COPY hnsw_insert FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "vector"])
        for row, vector in enumerate(data[:size], 1):
            copy.write_row((row, vector))
    conn.execute("SET maintenance_work_mem = '1GB'")
    conn.execute("SET max_parallel_maintenance_workers = 0")
    started = time.perf_counter()
    conn.execute(
        "CREATE INDEX hnsw_insert_index ON hnsw_insert USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )
    build = time.perf_counter() - started
    rows = [(size + i + 1, vector) for i, vector in enumerate(data[size:])]
    started = time.perf_counter()
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany("INSERT INTO hnsw_insert (id, embedding) VALUES (%s, %s)", rows)
    insert = time.perf_counter() - started
    return {"build_seconds": build, "insert_seconds": insert}


def run(args) -> dict:
    from bench.common import setup_django

    setup_django(migrate=False)
    size = args.sizes[0] if args.sizes else 30_000
    data = vectors(size)
    rounds: dict[tuple[int, int], list[dict]] = {config: [] for config in CONFIGS}
    with connect(vectors=False) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    with connect() as conn:
        for round_number in range(args.repeat or 2):
            for m, ef_construction in CONFIGS:
                measured = one_round(conn, data, size, m, ef_construction)
                rounds[(m, ef_construction)].append(measured)
                log(f"round {round_number}: m={m}, ef_construction={ef_construction}: {measured}")
        conn.execute("DROP TABLE IF EXISTS hnsw_insert")
    results = []
    for (m, ef_construction), runs in rounds.items():
        results.append(
            {
                "m": m,
                "ef_construction": ef_construction,
                "build_seconds": median([r["build_seconds"] for r in runs]),
                "insert_ms_per_row": 1000 * median([r["insert_seconds"] for r in runs]) / INSERTS,
                "runs": runs,
            }
        )
    base = results[0]
    print_table(
        f"HNSW on {size:,} sentence vectors: build (one process) and {INSERTS:,} inserted rows, median of "
        f"{args.repeat or 2} rounds",
        ["m", "ef_construction", "build s", "ratio", "insert ms/row", "ratio"],
        [
            (
                r["m"],
                r["ef_construction"],
                r["build_seconds"],
                r["build_seconds"] / base["build_seconds"],
                r["insert_ms_per_row"],
                r["insert_ms_per_row"] / base["insert_ms_per_row"],
            )
            for r in results
        ],
    )
    payload = {"size": size, "inserts": INSERTS, "configs": results}
    write_result("hnsw_insert", payload, quick=args.quick, sizes=[size])
    return payload
