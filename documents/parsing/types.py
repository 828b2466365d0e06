"""The values the parsing layer hands to the rest of the app, and its errors.

Plain frozen dataclasses so that ingestion, the benchmark importers and the
tests can build and compare them without Django.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass


@dataclass(frozen=True)
class ParsedSentence:
    text: str
    start: int  # character offsets into ParsedDocument.text: text == doc.text[start:end]
    end: int
    label: str | None = None  # "S7" where the source names its sentences (analyst-bench gold)


@dataclass(frozen=True)
class ParsedDocument:
    external_id: str
    title: str
    text: str
    sentences: tuple[ParsedSentence, ...]
    source: str = ""  # e.g. "cia-world-factbook", "clapnq", or the uploaded file's name
    url: str = ""
    published: datetime.date | None = None


class ParseError(ValueError):
    """A file that cannot be turned into documents.

    The message is shown to users verbatim, so it names the file (and the line,
    for JSONL) and says what is wrong in words an analyst can act on.
    """


class UnsupportedFileType(ParseError):
    """The file's extension is not one we can parse (the API answers 415)."""


class EmptyDocument(ParseError):
    """The file parsed, but holds no text to answer questions from."""
