"""Turn extracted text, or sentences a source already split, into a ParsedDocument."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from qa.pipeline.core.segment import segment

from .types import EmptyDocument, ParsedDocument, ParsedSentence

TITLE_MAX_CHARS = 120


def document_from_text(
    text: str,
    *,
    external_id: str,
    filename: str,
    title: str = "",
    source: str = "",
    url: str = "",
    published: datetime.date | None = None,
    hard_line_breaks: bool = False,
) -> ParsedDocument:
    """Segment ``text`` and wrap it; ``filename`` names the file in errors and titles."""
    sentences = tuple(
        ParsedSentence(text=text[start:end], start=start, end=end)
        for start, end in segment(text, hard_line_breaks=hard_line_breaks)
    )
    if not sentences:
        raise EmptyDocument(f"{filename} contains no text.")
    return ParsedDocument(
        external_id=external_id,
        title=title.strip() or default_title(text, filename),
        text=text,
        sentences=sentences,
        source=source,
        url=url,
        published=published,
    )


def document_from_sentences(
    sentences: Sequence[str],
    *,
    external_id: str,
    filename: str,
    labels: Sequence[str | None] | None = None,
    text: str | None = None,
    title: str = "",
    source: str = "",
    url: str = "",
    published: datetime.date | None = None,
) -> ParsedDocument:
    """Keep a source's own sentence boundaries (and ids) exactly.

    If ``text`` is given and holds every sentence verbatim, in order, the
    sentences point into it; otherwise the text is the sentences joined by one
    space. Blank sentences are dropped: there is nothing in them to cite.
    """
    labels = list(labels) if labels is not None else [None] * len(sentences)
    kept = [(sentence, label) for sentence, label in zip(sentences, labels, strict=True) if sentence.strip()]
    if not kept:
        raise EmptyDocument(f"{filename}: document {external_id!r} has no sentences with text.")
    spans = _locate_in_order([sentence for sentence, _ in kept], text) if text else None
    if spans is None:
        text, spans = _join_with_spaces([sentence for sentence, _ in kept])
    parsed = tuple(
        ParsedSentence(text=sentence, start=start, end=end, label=label)
        for (sentence, label), (start, end) in zip(kept, spans, strict=True)
    )
    return ParsedDocument(
        external_id=external_id,
        title=title.strip() or default_title(text, filename),
        text=text,
        sentences=parsed,
        source=source,
        url=url,
        published=published,
    )


def default_title(text: str, filename: str) -> str:
    """The first non-empty line, shortened at a word boundary, else the file name."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return shorten(line, TITLE_MAX_CHARS)
    return filename


def shorten(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit)
    return line[: cut if cut > limit // 2 else limit].rstrip(" ,;:-") + "…"


def _locate_in_order(sentences: list[str], text: str) -> list[tuple[int, int]] | None:
    spans = []
    position = 0
    for sentence in sentences:
        start = text.find(sentence, position)
        if start < 0:
            return None
        position = start + len(sentence)
        spans.append((start, position))
    return spans


def _join_with_spaces(sentences: list[str]) -> tuple[str, list[tuple[int, int]]]:
    spans = []
    position = 0
    for sentence in sentences:
        spans.append((position, position + len(sentence)))
        position += len(sentence) + 1
    return " ".join(sentences), spans
