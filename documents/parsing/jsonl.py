"""The one JSONL reader: uploads, benchmark corpora, benchmark questions and gold-case files use it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .plaintext import decode_text
from .types import ParseError


def jsonl_values(text: str, name: str, *, objects_only: bool = True) -> Iterator[tuple[int, str, Any]]:
    """(n, "<name>, line <n>", value) for every non-blank line n; the first bad line raises ParseError.

    ``objects_only`` refuses a line that is valid JSON but not an object; a caller
    that explains what the object should describe passes False and checks itself.
    """
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{name}, line {number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"{where}: not valid JSON: {exc.msg} (column {exc.colno}).") from exc
        if objects_only and not isinstance(value, dict):
            raise ParseError(f"{where}: expected a JSON object.")
        yield number, where, value


def jsonl_file(path: Path | str) -> Iterator[tuple[int, str, dict]]:
    """``jsonl_values`` of a file (UTF-8, a BOM allowed), named by its file name in messages."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(f"{path.name}: cannot be read ({exc.strerror or exc}).") from exc
    return jsonl_values(decode_text(data, path.name), path.name)
