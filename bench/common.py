"""What every benchmark shares: the benchmark's own server, timing statistics, tables, JSON results.

Benchmarks never touch the app's database: ``setup_django`` points
GROUNDEDQA_VAR_DIR at ``var/bench`` (override with GROUNDEDQA_BENCH_VAR_DIR)
before settings load, and starts a separate embedded PostgreSQL under
``var/bench/pg`` and use a broker folder under ``var/bench/broker``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "bench" / "results"
BENCH_VAR_DIR = Path(os.environ.get("GROUNDEDQA_BENCH_VAR_DIR", REPO / "var" / "bench")).resolve()
# Real sentence vectors of analyst-bench, shared with anyone using CachingEmbedder on the same
# namespace: encoding the 89k sentences takes several minutes on 2 cores, so it is done once.
EMBEDDING_CACHE_DIR = REPO / "var" / "cache"
EMBEDDING_CACHE_NAMESPACE = "all-MiniLM-L6-v2"

DEFAULT_SIZES, QUICK_SIZES = [10_000, 100_000, 1_000_000], [10_000]

_django_ready = False


# Settings that would point a benchmark at the app's own database or broker.
_UNSAFE = ("DATABASE_URL", "GROUNDEDQA_DATABASE_NAME", "CELERY_BROKER_URL", "CELERY_BROKER_DIR")


def bench_environment(**extra: str) -> dict[str, str]:
    """Environment for this process and the subprocesses it starts (workers, hybrid runs)."""
    env = {k: v for k, v in os.environ.items() if k not in _UNSAFE}
    env.update(
        GROUNDEDQA_VAR_DIR=str(BENCH_VAR_DIR),
        DJANGO_SETTINGS_MODULE="groundedqa_site.settings",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    env.setdefault("LOG_LEVEL", "WARNING")
    # The servers a bench starts speak plain HTTP, as `make run`'s does: without these, DEBUG's
    # default (off) would redirect every request to https (groundedqa_site.launcher.serve_plain_http).
    for name in ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"):
        env.setdefault(name, "0")
    env.update(extra)
    return env


def setup_django(*, migrate: bool = True) -> None:
    """Configure Django against the benchmark's own server and bring its schema up to date."""
    global _django_ready
    if _django_ready:
        return
    inherited = os.environ.get("GROUNDEDQA_BENCH_CHILD") == "1"  # a subprocess keeps what it was given
    if not inherited:
        for name in _UNSAFE:
            os.environ.pop(name, None)
        os.environ.update(bench_environment())
    import django

    django.setup()
    from groundedqa_site.embedded_db import start_configured_server

    start_configured_server()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        # Where workers record their reclaim passes (groundedqa_site/recovery.py), as in a release.
        call_command("createcachetable", verbosity=0)
    _django_ready = True


# --- statistics --------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50/p95/mean in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "mean_ms": float(np.mean(ms)),
        "n": len(ms),
    }


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.seconds``."""

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._start


def ratio(value: float, baseline: float) -> float:
    return value / baseline if baseline else float("nan")


# --- reporting ---------------------------------------------------------------


def machine() -> dict:
    import psutil

    info = {
        "nproc": os.cpu_count(),
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def fmt(value, digits: int = 2) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence]) -> None:
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    sys.stdout.flush()


def write_result(name: str, payload: dict, *, quick: bool, sizes: Sequence[int] = ()) -> Path:
    """Write bench/results/<name>[-<sizes>][-quick].json atomically and return its path.

    ``sizes`` other than the default set go into the name, so runs of single sizes side by side
    do not overwrite each other.
    """
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    suffix = "" if list(sizes) in ([], DEFAULT_SIZES, QUICK_SIZES) else "-" + "-".join(str(s) for s in sizes)
    path = RESULTS_DIR / f"{name}{suffix}{'-quick' if quick else ''}.json"
    partial = path.with_suffix(".json.tmp")
    document = {
        "benchmark": name,
        "quick": quick,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        **payload,
    }
    partial.write_text(json.dumps(document, indent=2, default=_json_default) + "\n")
    partial.replace(path)
    print(f"\nwrote {path.relative_to(REPO)}")
    return path


def _json_default(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def run_child(name: str, module_args: Sequence[str], size: int, database: str) -> dict:
    """Run ``python -m <module_args>`` in a fresh process on the bench database of ``size`` rows.

    A fresh process measures resident memory and cold caches for that size alone; the
    child prints its result as the last line starting with ``RESULT ``.
    """
    env = bench_environment(GROUNDEDQA_DATABASE_NAME=database, GROUNDEDQA_BENCH_CHILD="1")
    done = subprocess.run(
        [sys.executable, "-m", *module_args], cwd=REPO, env=env, capture_output=True, text=True
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{name} {size}: the child failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1].removeprefix("RESULT "))


def peak_rss_mb() -> float:
    """This process's highest resident memory so far, in MB (VmHWM).

    Not ``getrusage().ru_maxrss``: Linux carries the parent's peak into a child across the
    vfork/exec that ``subprocess`` uses, so a child of a benchmark holding a 1M-sentence corpus
    reported the parent's 3.4 GB as its own peak.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
