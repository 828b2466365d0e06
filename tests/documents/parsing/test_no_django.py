"""The parsing layer is pure Python: it must import and work where Django is absent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_parsing_imports_and_parses_without_django():
    # sys.modules[name] = None makes any import of that name fail, as if uninstalled.
    script = (
        "import sys\n"
        "for name in ('django', 'celery', 'rest_framework'):\n"
        "    sys.modules[name] = None\n"
        "from documents.parsing import parse_bytes\n"
        "print(len(parse_bytes(b'Dr. Ng arrived. She left.', 'a.txt')[0].sentences))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"
