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
    # Where the sentence sits in the document's structure (documents/parsing/structure.py): its
    # block's role, the headings above it joined by SECTION_SEPARATOR, and its page (PDF only).
    role: str = "paragraph"
    section: str = ""
    page: int | None = None

    @property
    def structure(self) -> list:
        """What a staged sentence stores beyond its span and label; [] when it is plain prose, so
        documents without structure hash and stage exactly as before structure was kept."""
        if self.role == "paragraph" and not self.section and self.page is None:
            return []
        return [self.role, self.section, self.page]


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
