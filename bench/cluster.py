"""The fault-injection harness: real Celery workers, beat and brokers as separate processes.

``Cluster`` starts `celery worker` processes (prefork, as ``make run`` does)
and `celery beat` (the reaper), each in a process group of its own so that a
whole worker can be killed and started again; ``RedisServer`` runs a private
`redis-server` on a spare port; ``use_broker`` points this process's producer
at another broker. ``bench.faults`` measures with it; tests/qa/test_faults.py
runs short rounds.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# --- brokers ------------------------------------------------------------------


def lease_owner_pid(owner: str) -> int | None:
    """The process id in a lease owner token ("host:pid:token"), when the host is this machine."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    return int(pid) if host == socket.gethostname() and pid.isdigit() else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A private `redis-server` on a spare port, no persistence; ``url`` for Celery."""

    def __init__(self) -> None:
        self.binary = shutil.which("redis-server")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def start(self) -> None:
        """Start the server on ``port`` (again, after ``stop``: the same port, nothing kept)."""
        if self.binary is None:
            raise FileNotFoundError("redis-server is not installed (Debian: apt-get install redis-server)")
        cmd = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self.process.kill()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        """Stop the server: with no persistence, every message it held (queued or unacked) is gone."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def __exit__(self, *exc) -> None:
        self.stop()


@contextmanager
def use_broker(url: str, transport_options: dict | None = None, transport: str | None = None):
    """Point this process's Celery producer at another broker for the block.

    The app caches its connection and producer pools on first use; they are
    dropped on the way in and out so the next ``.delay()`` connects anew.
    """
    from kombu import pools

    from groundedqa_site.celery import app

    saved = (app.conf.broker_url, app.conf.broker_transport_options, app.conf.broker_transport)

    def switch(to_url, options, to_transport):
        # kombu keeps pools per connection in a registry: closing one and switching back
        # to the same URL would hand out the closed pool, so the registry is reset.
        pools.reset()
        app._pool = None
        app.amqp._producer_pool = None
        app.conf.broker_url, app.conf.broker_transport_options = to_url, options
        app.conf.broker_transport = to_transport

    switch(url, transport_options or {}, transport)
    try:
        yield
    finally:
        switch(*saved)


# --- worker processes -----------------------------------------------------------


MAINTENANCE_WORKER = [
    "worker",
    "-Q",
    "maintenance",
    "-P",
    "solo",
    "-n",
    "maintenance@%h",
    "--without-gossip",
    "--without-mingle",
    "--without-heartbeat",
]


@dataclass(frozen=True)
class WorkerSpec:
    name: str
    queues: str
    concurrency: int = 2


class Cluster:
    """Celery workers and beat as separate processes, each in its own process group."""

    def __init__(self, workdir: Path, env: dict[str, str], workers: list[WorkerSpec], *, beat: bool = True):
        self.workdir, self.env, self.specs, self.beat = workdir, env, {w.name: w for w in workers}, beat
        self.processes: dict[str, subprocess.Popen] = {}
        self._marks: dict[str, int] = {}  # log size at each start: "ready." is looked for after it
        self.restarts = 0

    def __enter__(self) -> Cluster:
        for name in self.specs:
            self.start(name)
        if self.beat:
            # As ``make run`` and deploy/Procfile do: a light worker runs the reaper, which
            # beat, a process of its own, sends it every few seconds.
            self.start_maintenance()
            self.start_beat()
        for name in [*self.specs, *(["maintenance"] if self.beat else [])]:
            self.wait_ready(name)
        return self

    def start_maintenance(self) -> None:
        self._marks["maintenance"] = self._log_size("maintenance")
        self._spawn("maintenance", [*MAINTENANCE_WORKER, "--loglevel=INFO"])

    def start_beat(self) -> None:
        self._marks["beat"] = self._log_size("beat")
        self._spawn("beat", ["beat", "--loglevel=INFO", "-s", str(self.workdir / "celerybeat-schedule")])

    def _log_size(self, name: str) -> int:
        return self.log(name).stat().st_size if self.log(name).exists() else 0

    def __exit__(self, *exc) -> None:
        for name in list(self.processes):
            self.stop(name)

    def log(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def _spawn(self, name: str, args: list[str], *, ready: bytes | None = None) -> None:
        cmd = [sys.executable, "-m", "celery", "-A", "groundedqa_site", *args]
        with open(self.log(name), "ab") as out:
            self.processes[name] = subprocess.Popen(
                cmd, cwd=REPO, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        if ready is not None:
            self._wait_for(name, ready)

    def start(self, name: str) -> None:
        spec = self.specs[name]
        log = self.log(name)
        self._marks[name] = log.stat().st_size if log.exists() else 0
        args = [
            "worker",
            "-Q",
            spec.queues,
            "-c",
            str(spec.concurrency),
            "-n",
            f"{name}@%h",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        self._spawn(name, args)

    def wait_ready(self, name: str, timeout: float = 180) -> None:
        self._wait_for(name, b"ready.", since=self._marks.get(name, 0), timeout=timeout)

    def _wait_for(self, name: str, marker: bytes, *, since: int = 0, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.log(name).read_bytes()[since:]:
            if self.processes[name].poll() is not None or time.monotonic() > deadline:
                tail = self.log(name).read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} did not start:\n{tail}")
            time.sleep(0.1)

    def stop(self, name: str) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def kill_worker(self, name: str) -> None:
        """SIGKILL a worker's main process and its children at once (a machine losing it)."""
        process = self.processes.pop(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def restart(self, name: str) -> None:
        if name == "beat":
            self.start_beat()
            self._wait_for(name, b"Sending due task", since=self._marks[name])
        else:
            if name == "maintenance":
                self.start_maintenance()
            else:
                self.start(name)
            self.wait_ready(name)
        self.restarts += 1


def cluster_environment(
    *,
    database: str,
    broker_url: str,
    broker_dir: Path | None,
    lease: int,
    heartbeat: int,
    reaper: int,
    worker_reclaim: int | None = None,
) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "groundedqa_site.settings",
        "GROUNDEDQA_DATABASE_NAME": database,
        "CELERY_BROKER_URL": broker_url,
        "JOB_LEASE_SECONDS": str(lease),
        "JOB_HEARTBEAT_SECONDS": str(heartbeat),
        "JOB_REAPER_INTERVAL_SECONDS": str(reaper),
        # Each worker's own reclaim timer (groundedqa_site/recovery.py), as often as the reaper
        # unless told otherwise.
        "JOB_WORKER_RECLAIM_SECONDS": str(worker_reclaim or reaper),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LOG_LEVEL": "INFO",
    }
    if broker_dir is not None:
        env["CELERY_BROKER_DIR"] = str(broker_dir)
    return env


@contextmanager
def site_cluster(broker: str, workdir: Path, workers: list[WorkerSpec], *, env: dict[str, str] | None = None):
    """A started ``Cluster`` of ``workers`` (with the maintenance worker and beat, as ``make run``)
    on ``broker``: "filesystem" (a folder under ``workdir``) or "redis" (a private server), this
    process's producer pointed at it, and the site's own leases and intervals; ``env`` adds to the
    workers' environment."""
    from django.conf import settings
    from django.db import connection

    from groundedqa_site.broker import folder_options

    options = dict(
        database=connection.settings_dict["NAME"],
        lease=settings.JOB_LEASE_SECONDS,
        heartbeat=settings.JOB_HEARTBEAT_SECONDS,
        reaper=settings.JOB_REAPER_INTERVAL_SECONDS,
        worker_reclaim=settings.JOB_WORKER_RECLAIM_SECONDS,
    )
    with ExitStack() as stack:
        if broker == "filesystem":
            folder = workdir / "broker"
            environment = cluster_environment(broker_url="filesystem://", broker_dir=folder, **options)
            stack.enter_context(
                use_broker("filesystem://", folder_options(folder), "groundedqa_site.broker:Transport")
            )
        else:
            redis = stack.enter_context(RedisServer())
            stack.enter_context(use_broker(redis.url))
            environment = cluster_environment(broker_url=redis.url, broker_dir=None, **options)
        environment.update(env or {})
        yield stack.enter_context(Cluster(workdir, environment, workers))


def private_folder(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
