"""The text layer of a PDF, page by page."""

from __future__ import annotations

import io
import re
from collections import Counter

from pypdf import PdfReader

from .types import ParseError

# Producers write these when the author never set a title; a first line of
# body text is a better title than any of them.
_PLACEHOLDER_TITLE = re.compile(r"^(untitled|anonymous|microsoft word\b.*|.*\.(docx?|pdf|tex|odt))$", re.I)
# A page number alone on a line: arabic, or lower-case roman as front matter is numbered.
_PAGE_NUMBER = re.compile(r"\s*(?:\d{1,4}|[ivxlc]{1,7})\s*")
_NUMBER = re.compile(r"\d+")


def pdf_pages(data: bytes, filename: str) -> tuple[str, list[str]]:
    """Return (title, the text layer of each page)."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ParseError(f"{filename} is password-protected. Remove the password and upload it again.")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or ""
    except ParseError:
        raise
    except Exception as exc:
        # pypdf reports damaged files with a dozen exception types (PdfReadError,
        # KeyError, ValueError, struct errors ...); to the user they all mean
        # the same thing, and the upload must fail with that message, not a 500.
        raise ParseError(
            f"{filename} is not a readable PDF (the file is damaged or not a PDF: {exc})."
        ) from exc
    if not pages:
        raise ParseError(f"{filename} has no pages.")
    if not any(pages):
        raise ParseError(
            f"{filename} has no text layer: it is probably a scanned image. "
            "Run OCR on it (most PDF tools can) and upload the result."
        )
    title = " ".join(title.split())
    return ("" if _PLACEHOLDER_TITLE.match(title) else title), pages


def without_page_furniture(pages: list[str]) -> list[str]:
    """The pages' text without what a PDF prints around every page's text, read off the first and
    last line of each page: page numbers alone on their line (once two pages or more have one), and
    a running header or footer, a line that opens or closes two pages or more alike but for its
    numbers ("Chapter 4: Function reference 9"). A running line stays where it first appears: page
    1's is often the document's title. Left in, each was a short line, so a heading, and the text
    of every page sat under the running title instead of its section."""
    split = [page.split("\n") for page in pages]
    edges = [_edge_lines(lines) for lines in split]
    shapes = Counter(
        shape
        for lines, found in zip(split, edges, strict=True)
        for shape in {_shape(lines[i]) for i in found}
    )
    numbered = sum(
        any(_PAGE_NUMBER.fullmatch(lines[i]) for i in found)
        for lines, found in zip(split, edges, strict=True)
    )
    seen: set[str] = set()
    kept = []
    for lines, found in zip(split, edges, strict=True):
        dropped = set()
        for index in found:
            shape = _shape(lines[index])
            if _PAGE_NUMBER.fullmatch(lines[index]):
                if numbered >= 2:
                    dropped.add(index)
            elif shapes[shape] >= 2:
                if shape in seen:
                    dropped.add(index)
                seen.add(shape)
        kept.append("\n".join(line for index, line in enumerate(lines) if index not in dropped))
    return kept


def _edge_lines(lines: list[str]) -> list[int]:
    """The indexes of the first and the last line with text (one index when they are the same)."""
    filled = [index for index, line in enumerate(lines) if line.strip()]
    return sorted({filled[0], filled[-1]}) if filled else []


def _shape(line: str) -> str:
    """A line with its numbers masked and its spaces collapsed: how a running line repeats."""
    return " ".join(_NUMBER.sub("#", line).split())
