"""The text layer of a PDF, page by page."""

from __future__ import annotations

import io
import re

from pypdf import PdfReader

from .types import ParseError

# Producers write these when the author never set a title; a first line of
# body text is a better title than any of them.
_PLACEHOLDER_TITLE = re.compile(r"^(untitled|anonymous|microsoft word\b.*|.*\.(docx?|pdf|tex|odt))$", re.I)


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
