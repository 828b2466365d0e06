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


def test_every_environment_variable_the_code_reads_is_in_the_readme_configuration_tables():
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
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = "".join(
        readme.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
        for section in ("Configuration", "Deployment")
    )
    first_cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("|")]
    documented = {name for cell in first_cells for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    assert {"DATABASE_URL", "QA_DEFAULT_PRESET"} <= read  # the pattern finds what it must
    assert read - documented == set()
