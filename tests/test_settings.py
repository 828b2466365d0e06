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
    [("DEBUG", "maybe"), ("UPLOAD_MAX_BYTES", "lots"), ("QA_LLM_PROVIDER", "gpt-9"), ("CHUNK_OVERLAP", "9")],
)
def test_a_malformed_setting_stops_startup_and_names_the_variable(variable, value):
    result = run_check(**{variable: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert variable in result.stderr


def test_the_default_settings_pass_django_checks():
    result = run_check()
    assert result.returncode == 0, result.stderr
