"""The paragraphs and tables of a Word (.docx) file as blocks, in document order."""

from __future__ import annotations

import io
import re

import docx
from docx.table import Table

from qa.pipeline.core import roles

from .structure import BlockText, table_row_text
from .types import ParseError

_HEADING_STYLE = re.compile(r"heading\s*(\d)", re.IGNORECASE)


def docx_blocks(data: bytes, filename: str) -> tuple[str, BlockText]:
    """Return (title, blocks): headings by their paragraph style (Title, Heading 1-9), list items
    by a List style, captions by Caption, each table row with its header row's cells."""
    out = BlockText()
    try:
        document = docx.Document(io.BytesIO(data))
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                _table(block, out)
            else:
                role, level = _paragraph_role(block.style.name if block.style is not None else "")
                out.add(role, block.text, level=level)
        title = document.core_properties.title or ""
    except Exception as exc:
        # A damaged upload fails inside zipfile, lxml or python-docx with many
        # exception types; the user needs one clear message, not a 500.
        raise ParseError(f"{filename} is not a readable Word document (.docx): {exc}.") from exc
    return " ".join(title.split()), out


def _paragraph_role(style: str) -> tuple[str, int]:
    name = style.lower()
    if name == "title":
        return roles.TITLE, 0
    heading = _HEADING_STYLE.search(name)
    if heading:
        return roles.HEADING, min(int(heading.group(1)), 6)
    if name.startswith("list"):
        return roles.LIST_ITEM, 0
    if name == "caption":
        return roles.CAPTION, 0
    return roles.PARAGRAPH, 0


def _table(table: Table, out: BlockText) -> None:
    header: list[str] = []
    for number, row in enumerate(table.rows):
        cells = _row_cells(row)
        if number == 0:
            header = cells
            continue
        out.add(roles.TABLE_ROW, table_row_text(header, cells))
    if len(table.rows) == 1:
        out.add(roles.TABLE_ROW, table_row_text([], header))


def _row_cells(row) -> list[str]:
    # Merged cells repeat in python-docx's row.cells; keep each cell once.
    cells, seen = [], set()
    for cell in row.cells:
        if id(cell._tc) in seen:
            continue
        seen.add(id(cell._tc))
        cells.append(" ".join(cell.text.split()))
    return cells
