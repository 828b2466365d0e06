"""Malformed settings fail loudly at start-up, naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run_check(**env):
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DEBUG", "maybe"),
        ("UPLOAD_MAX_BYTES", "lots"),
        ("QA_LLM_PROVIDER", "gpt-9"),
        ("CHUNK_OVERLAP", "9"),
        ("QA_READER_THREADS", "two"),
        ("QA_LLM_THREADS", "all"),
    ],
)
def test_a_malformed_setting_stops_startup_and_names_the_variable(variable, value):
    result = run_check(**{variable: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert variable in result.stderr


def test_the_default_settings_pass_django_checks():
    result = run_check()
    assert result.returncode == 0, result.stderr


def test_every_environment_variable_the_code_reads_is_in_the_configuration_docs_tables():
    import re

    readers = re.compile(
        r"""(?:os\.environ\.get|os\.environ\[|env_bool|env_int|env_choice|env_rate|env\.\w+)\(?\s*["']([A-Z][A-Z0-9_]+)["']"""
    )
    product = [REPO / "groundedqa_site", REPO / "documents", REPO / "qa", REPO / "review", REPO / "ui"]
    read = {
        name
        for folder in product
        for path in folder.rglob("*.py")
        for name in readers.findall(path.read_text(encoding="utf-8"))
    }
    table = "".join(
        (REPO / "docs" / name).read_text(encoding="utf-8") for name in ("configuration.md", "deployment.md")
    )
    first_cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("|")]
    documented = {name for cell in first_cells for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    assert {"DATABASE_URL", "QA_DEFAULT_PRESET"} <= read  # the pattern finds what it must
    assert read - documented == set()


def settings_in_a_fresh_process(var_dir: Path, **env) -> dict:
    """The settings a process started with `make run`'s environment (no DEBUG set) reads."""
    import json

    unset = ("DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    code = (
        "import json; from django.conf import settings as s; print(json.dumps({'debug': s.DEBUG, "
        "'key': s.SECRET_KEY, 'static': s.STORAGES['staticfiles']['BACKEND'], "
        "'finders': s.WHITENOISE_USE_FINDERS}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={
            **clean,
            "DJANGO_SETTINGS_MODULE": "groundedqa_site.settings",
            "GROUNDEDQA_VAR_DIR": str(var_dir),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_debug_is_off_by_default_with_a_secret_key_made_once_and_kept(tmp_path):
    first = settings_in_a_fresh_process(tmp_path)
    again = settings_in_a_fresh_process(tmp_path)
    assert first["debug"] is False
    assert first["static"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"
    assert len(first["key"]) >= 50
    # Every process of the installation (web, workers, the next `make run`) signs with that key.
    assert again["key"] == first["key"]
    assert (tmp_path / "secret_key").read_text().strip() == first["key"]
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
    # Another installation gets a key of its own.
    assert settings_in_a_fresh_process(tmp_path / "other")["key"] != first["key"]


def test_a_secret_key_in_the_environment_wins_and_nothing_is_written(tmp_path):
    read = settings_in_a_fresh_process(tmp_path, SECRET_KEY="k" * 60)
    assert read["key"] == "k" * 60
    assert not (tmp_path / "secret_key").exists()


def test_development_mode_is_one_variable_away(tmp_path):
    read = settings_in_a_fresh_process(tmp_path, DEBUG="1")
    assert read["debug"] is True
    # Static files read from the source folders, so an edit shows without collectstatic.
    assert read["finders"] is True
    assert read["static"] == "django.contrib.staticfiles.storage.StaticFilesStorage"
