"""The paragraphs and tables of a Word (.docx) file, in document order."""

from __future__ import annotations

import io

import docx
from docx.table import Table

from .types import ParseError


def docx_to_text(data: bytes, filename: str) -> tuple[str, str]:
    """Return (title, text); paragraphs and table rows are separated by a blank line."""
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [_block_text(block) for block in document.iter_inner_content()]
        title = document.core_properties.title or ""
    except Exception as exc:
        # A damaged upload fails inside zipfile, lxml or python-docx with many
        # exception types; the user needs one clear message, not a 500.
        raise ParseError(f"{filename} is not a readable Word document (.docx): {exc}.") from exc
    # Paragraphs are hard breaks in Word, so a heading or a one-line paragraph
    # must never be read as a soft wrap of the next one.
    text = "\n\n".join(block for block in blocks if block)
    return " ".join(title.split()), text


def _block_text(block) -> str:
    if isinstance(block, Table):
        rows = (_row_text(row) for row in block.rows)
        return "\n\n".join(row for row in rows if row)
    return block.text.strip()


def _row_text(row) -> str:
    # Merged cells repeat in python-docx's row.cells; keep each text once.
    cells = []
    for cell in row.cells:
        text = " ".join(cell.text.split())
        if text and (not cells or cells[-1] != text):
            cells.append(text)
    return " | ".join(cells)
