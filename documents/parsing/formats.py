"""Uploaded bytes to ParsedDocuments, by file extension."""

from __future__ import annotations

from pathlib import PurePath

from .assemble import document_from_text
from .docx_text import docx_to_text
from .html_text import html_to_text
from .pdf_text import pdf_to_text
from .plaintext import decode_text, normalize_line_breaks
from .presegmented import documents_from_json, parse_json, parse_jsonl, presegmented_value
from .types import EmptyDocument, ParsedDocument, UnsupportedFileType

SUPPORTED_EXTENSIONS = (".txt", ".md", ".html", ".htm", ".pdf", ".docx", ".json", ".jsonl")


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
    if extension in (".html", ".htm"):
        title, text = html_to_text(data)
    elif extension == ".pdf":
        title, text = pdf_to_text(data, name)
    elif extension == ".docx":
        title, text = docx_to_text(data, name)
    else:
        title, text = "", decode_text(data, name)
        presegmented = presegmented_value(text)
        if presegmented is not None:
            return documents_from_json(presegmented, name, base_id)
    return [
        document_from_text(
            normalize_line_breaks(text), external_id=base_id, filename=name, title=title, source=name
        )
    ]
