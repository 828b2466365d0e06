"""Real PDF and Word files, built in memory for the tests."""

from __future__ import annotations

import io

import docx
from reportlab.pdfgen import canvas


def pdf_bytes(*pages: list[str], title: str | None = None) -> bytes:
    """A PDF with one drawn text line per string; an empty list is a blank page."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    if title:
        pdf.setTitle(title)
    for lines in pages:
        y = 800
        for line in lines:
            pdf.drawString(72, y, line)
            y -= 14
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def docx_bytes(*paragraphs: str, heading: str | None = None, table: list[list[str]] | None = None) -> bytes:
    document = docx.Document()
    if heading:
        document.add_heading(heading, level=1)
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    if table:
        cells = document.add_table(rows=len(table), cols=len(table[0]))
        for row, values in zip(cells.rows, table, strict=True):
            for cell, value in zip(row.cells, values, strict=True):
                cell.text = value
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()
