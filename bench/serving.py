"""Web server choice: Django's development server against gunicorn (what `make run` starts).

Both serve the same application on the benchmark's own database; a thread pool sends
the same requests to each in turn, several rounds alternating, so machine noise hits
both alike. Pages: /healthz (no I/O), /login/ (a template render), /readyz (two
database queries and a broker check). Reported: requests/s and p50/p95 latency, and
the ratio gunicorn/runserver measured in the same run.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from bench.common import (
    REPO,
    bench_environment,
    latency_summary,
    log,
    print_table,
    ratio,
    setup_django,
    write_result,
)

PAGES = ("/healthz", "/login/", "/readyz")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _servers(port_runserver: int, port_gunicorn: int) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "runserver": [python, "manage.py", "runserver", f"127.0.0.1:{port_runserver}", "--noreload"],
        "gunicorn": [
            python,
            "-m",
            "gunicorn",
            "groundedqa_site.wsgi:application",
            "--bind",
            f"127.0.0.1:{port_gunicorn}",
            "--workers",
            "2",
            "--threads",
            "4",
            "--no-control-socket",
        ],
    }


def _wait_up(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server for {url} exited with {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server for {url} did not answer within {timeout:.0f} s")


def _fetch(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as response:
        response.read()
    return time.perf_counter() - started


def _load(base: str, page: str, requests: int, clients: int) -> dict:
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = list(pool.map(_fetch, [base + page] * requests))
    wall = time.perf_counter() - started
    return {"requests_per_s": requests / wall, **latency_summary(latencies)}


def run(args) -> None:
    setup_django()
    from django.core.management import call_command

    call_command("createcachetable", verbosity=0)
    # As `make run` does: with DEBUG off the pages link the collected, content-hashed files.
    call_command("collectstatic", interactive=False, verbosity=0)
    requests = 60 if args.quick else 300
    clients = 8
    rounds = max(1, args.repeat or (1 if args.quick else 3))
    ports = {"runserver": _free_port(), "gunicorn": _free_port()}
    env = bench_environment()
    processes = {
        name: subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, cmd in _servers(ports["runserver"], ports["gunicorn"]).items()
    }
    try:
        for name, process in processes.items():
            _wait_up(f"http://127.0.0.1:{ports[name]}/healthz", process)
        results: dict[str, dict[str, list[dict]]] = {name: {p: [] for p in PAGES} for name in processes}
        for number in range(rounds):
            for page in PAGES:
                for name in processes:
                    log(f"round {number + 1}/{rounds} {name} {page}")
                    results[name][page].append(
                        _load(f"http://127.0.0.1:{ports[name]}", page, requests, clients)
                    )
    finally:
        for process in processes.values():
            process.terminate()
            process.wait(timeout=20)
    rows, payload = [], {"requests": requests, "clients": clients, "rounds": rounds, "pages": {}}
    for page in PAGES:
        best = {name: max(results[name][page], key=lambda r: r["requests_per_s"]) for name in processes}
        payload["pages"][page] = best
        rows.append(
            [
                page,
                f"{best['runserver']['requests_per_s']:.0f}",
                f"{best['gunicorn']['requests_per_s']:.0f}",
                f"{ratio(best['gunicorn']['requests_per_s'], best['runserver']['requests_per_s']):.2f}x",
                f"{best['runserver']['p50_ms']:.0f} / {best['gunicorn']['p50_ms']:.0f}",
            ]
        )
    print_table(
        f"Web servers, {requests} requests x {clients} clients, best of {rounds} round(s)",
        ["page", "runserver req/s", "gunicorn req/s", "gunicorn/runserver", "p50 ms (runserver / gunicorn)"],
        rows,
    )
    write_result("serving", payload, quick=args.quick)
