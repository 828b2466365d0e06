"""python -m bench [BENCHMARK ...] [--quick] [--repeat N] [--sizes 10000,100000,1000000]

``python -m bench faults`` (fault injection) and ``python -m bench busy``
(interactive work during a bulk import) are not in the default set: they run
worker processes for many minutes; name them to run them.

Runs every benchmark when none is named. Each prints its tables and writes
bench/results/<name>[-quick].json. --quick uses small samples (minutes, not
the better part of two hours).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from bench.common import DEFAULT_SIZES, QUICK_SIZES

BENCHMARKS = {
    "ingestion": "bench.ingestion",
    "encoder": "bench.encoder",
    "lexical": "bench.lexical",
    "dense": "bench.dense",
    "hybrid": "bench.hybrid",
    "search_db": "bench.search_db",
    "retrievers": "bench.retrievers",
    "e2e": "bench.e2e",
    "serving": "bench.serving",
    "faults": "bench.faults",
    "launcher_kills": "bench.launcher_kills",
    "comparison": "bench.comparison",
    "busy": "bench.busy",
    "reembed": "bench.reembed",
    "hnsw_insert": "bench.hnsw_insert",
    "reader_threads": "bench.reader_threads",
    "first_question": "bench.first_question",
    "annotation_time": "bench.annotation_time",
    "reply_rules": "bench.reply_rules",
    "default_latency": "bench.default_latency",
    "llm_judge": "bench.llm_judge",
}
# llm_judge needs the local GGUF model and runs for the better part of an hour on 2 cores.
ON_REQUEST = {
    "faults",
    "launcher_kills",
    "busy",
    "hnsw_insert",
    "annotation_time",
    "reply_rules",
    "default_latency",
    "llm_judge",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "benchmarks", nargs="*", metavar="BENCHMARK", help=f"any of {', '.join(BENCHMARKS)} (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="small samples, fewer repetitions")
    parser.add_argument(
        "--sample-every", type=int, default=0, help="ingestion: every Nth analyst-bench file (1; --quick 20)"
    )
    parser.add_argument(
        "--repeat", type=int, default=0, help="repetitions (default depends on the benchmark)"
    )
    parser.add_argument(
        "--sizes",
        default="",
        help="corpus sizes in sentences for lexical/dense/hybrid "
        "(default 10000,100000,1000000; --quick 10000)",
    )
    parser.add_argument(
        "--queries", type=int, default=0, help="queries per measurement (default 200; --quick 40)"
    )
    parser.add_argument(
        "--hnsw-grid",
        default="",
        help="m:ef_construction pairs to compare, e.g. 16:64,16:128,32:64 "
        "(default 16:128,32:64 at the middle size only)",
    )
    parser.add_argument(
        "--hnsw-index",
        default="",
        help="dense: m:ef_construction of the sentence index a load builds (default the app's, 16:64)",
    )
    parser.add_argument(
        "--questions",
        type=int,
        default=0,
        help="faults: questions per broker (default 100; --quick 20); busy: questions (default 50)",
    )
    parser.add_argument(
        "--documents", type=int, default=0, help="busy: analyst-bench documents to import (default all)"
    )
    parser.add_argument(
        "--import-wait",
        type=int,
        default=3600,
        help="busy: seconds to wait for the whole import after the questions (timed only if it ends)",
    )
    parser.add_argument(
        "--down",
        default="",
        help="faults: cluster processes SIGKILLed after the first question and left down, "
        "of maintenance,beat (default none)",
    )
    parser.add_argument(
        "--ingestion",
        action="store_true",
        help="faults: kill the ingestion and bulk workers mid-document instead of QA workers "
        "(--repeat rounds per broker, default 3; --quick 1)",
    )
    parser.add_argument(
        "--services",
        action="store_true",
        help="faults: restart Redis and kill a web worker mid-request while questions run "
        "(--repeat rounds, default 3; --quick 1)",
    )
    parser.add_argument(
        "--jobs",
        action="store_true",
        help="faults: kill the worker of a corpus re-embedding and of an evaluation run mid-job "
        "(--repeat rounds of each per broker, default 3; --quick 1)",
    )
    parser.add_argument(
        "--brokers", default="", help="faults, e2e: brokers to run on, of filesystem,redis (default both)"
    )
    parser.add_argument(
        "--corpus-vectors",
        choices=("real", "hashing"),
        default="real",
        help="e2e: the corpus's stored vectors, the encoder's (encoded once, cached) or hashed "
        "bag-of-words (no encoding; questions are still encoded by the model)",
    )
    parser.add_argument(
        "--busy",
        type=int,
        default=2,
        help="reader_threads: processes spinning on the CPU in the contended run",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.benchmarks if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    args.sizes = [int(s) for s in args.sizes.split(",") if s] or list(
        QUICK_SIZES if args.quick else DEFAULT_SIZES
    )
    args.hnsw_index = tuple(int(x) for x in args.hnsw_index.split(":")) if args.hnsw_index else None
    args.queries = args.queries or (40 if args.quick else 200)
    failed = []
    for name in args.benchmarks or [name for name in BENCHMARKS if name not in ON_REQUEST]:
        started = time.perf_counter()
        print(f"\n===== {name} =====", flush=True)
        try:
            importlib.import_module(BENCHMARKS[name]).run(args)
        except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others' results
            import traceback

            traceback.print_exc()
            failed.append(f"{name}: {exc}")
        print(f"({name}: {time.perf_counter() - started:.0f}s)", flush=True)
    for line in failed:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
