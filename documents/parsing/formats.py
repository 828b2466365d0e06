"""Uploaded bytes to ParsedDocuments, by file extension."""

from __future__ import annotations

from pathlib import PurePath

from .docx_text import docx_blocks
from .html_text import html_blocks
from .markdown_text import markdown_blocks
from .pdf_text import pdf_pages, without_page_furniture
from .plaintext import decode_text, join_line_break_hyphens, normalize_line_breaks
from .presegmented import documents_from_json, parse_json, parse_jsonl, presegmented_value
from .structure import document_from_blocks, plaintext_blocks
from .types import EmptyDocument, ParsedDocument, UnsupportedFileType

SUPPORTED_EXTENSIONS = (".txt", ".md", ".html", ".htm", ".pdf", ".docx", ".json", ".jsonl")
# Formats whose structure is read from their markup (headings, tables, lists), which the stored text
# of a document no longer holds: reading that text's layout again would lose it.
MARKUP_EXTENSIONS = (".md", ".html", ".htm", ".docx")


def parse_bytes(data: bytes, filename: str, *, external_id: str | None = None) -> list[ParsedDocument]:
    """Parse one file into its documents (several for .json lists and .jsonl): the one entry point
    for uploads, `ingest` and the benchmark corpora.

    ``external_id`` replaces the default id (the file name without its
    extension); a JSON document that carries its own "doc_id" or "id" keeps it.
    A .txt or .md file whose content is pre-segmented JSON is read as such.
    Raises ParseError (or its subclasses UnsupportedFileType, EmptyDocument)
    with a message fit to show the user.
    """
    name = PurePath(filename).name or filename
    extension = PurePath(name).suffix.lower()
    if extension not in SUPPORTED_EXTENSIONS:
        found = extension or "no extension"
        raise UnsupportedFileType(
            f"{name}: unsupported file type ({found}). Upload one of: {', '.join(SUPPORTED_EXTENSIONS)}."
        )
    if not data.strip():
        raise EmptyDocument(f"{name} is empty.")
    base_id = external_id or PurePath(name).stem

    if extension == ".json":
        return parse_json(data, name, base_id)
    if extension == ".jsonl":
        return parse_jsonl(data, name, base_id)
    title, page_starts = "", []
    if extension in (".html", ".htm"):
        title, built = html_blocks(data)
        text, blocks = built.text, built.blocks
    elif extension == ".docx":
        title, built = docx_blocks(data, name)
        text, blocks = built.text, built.blocks
    elif extension == ".pdf":
        title, pages = pdf_pages(data, name)
        pages = without_page_furniture([join_line_break_hyphens(normalize_line_breaks(p)) for p in pages])
        text, page_starts = _join_pages(pages)
        blocks = plaintext_blocks(text, page_starts=page_starts)
    else:
        text = decode_text(data, name)
        presegmented = presegmented_value(text)
        if presegmented is not None:
            return documents_from_json(presegmented, name, base_id)
        if extension == ".md":
            built = markdown_blocks(text)
            text, blocks = built.text, built.blocks
        else:
            text = join_line_break_hyphens(text)
            blocks = plaintext_blocks(text)
    if not text.strip():
        raise EmptyDocument(f"{name} contains no text.")
    return [document_from_blocks(text, blocks, external_id=base_id, filename=name, title=title, source=name)]


def _join_pages(pages: list[str]) -> tuple[str, list[int]]:
    """The pages' text separated by blank lines, and the offset where each page starts."""
    starts, parts, position = [], [], 0
    for page in pages:
        starts.append(position)
        parts.append(page)
        position += len(page) + 2
    return "\n\n".join(parts), starts
