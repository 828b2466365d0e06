"""The roles a sentence plays in its document, and which of them can answer a question.

Parsing (``documents/parsing/structure.py``) gives every sentence the role of the block it comes
from; answering reads the role and never quotes a sentence that only frames content. This module
is the seam between the two: parsing writes these names, answering reads them, nothing else
decides what a role means.
"""

from __future__ import annotations

TITLE = "title"
HEADING = "heading"
PARAGRAPH = "paragraph"
LIST_ITEM = "list_item"
TABLE_ROW = "table_row"
QUESTION = "question"  # a FAQ entry's question, or any sentence that asks
CODE = "code"
CAPTION = "caption"
FOOTNOTE = "footnote"

ROLES = (TITLE, HEADING, PARAGRAPH, LIST_ITEM, TABLE_ROW, QUESTION, CODE, CAPTION, FOOTNOTE)

# Roles whose sentences name what follows rather than state it: they help find the passage (they
# are the section path of the sentences under them) but an answer never quotes them. A FAQ's
# question quoted back was shown as its own answer; a heading quoted as a claim reads as one.
FRAMING_ROLES = frozenset({TITLE, HEADING, QUESTION})

# How a section path is written in a sentence's ``section`` ("Licence > 3. Grant of Patent Licence").
SECTION_SEPARATOR = " > "


def asks(text: str) -> bool:
    """Whether a sentence asks: it ends in a question mark, before any closing quote or bracket."""
    return text.rstrip().rstrip("\"')]\u201d").endswith("?")


def frames_content(role: str, text: str) -> bool:
    """True for a sentence an answer must not quote: a title, a heading or a question, by its role;
    and, for sentences stored before roles were kept (role "paragraph"), any that asks, since a
    question is never the statement that answers one."""
    return role in FRAMING_ROLES or asks(text)


def quotable(sentence) -> bool:
    """Whether an answer may quote or cite a sentence (a SourceSentence): never a heading, a title or
    a question (``frames_content``), nor, in documents stored before roles were kept, the
    document's title as its own line. They help find the passage; quoted, a heading reads as a
    claim and a FAQ's question as its own answer."""
    text = sentence.text.strip()
    title_line = text == sentence.document_title.strip() and not text.endswith((".", "!", "?"))
    return not title_line and not frames_content(sentence.role, text)


def section_path(section: str) -> tuple[str, ...]:
    return tuple(part for part in section.split(SECTION_SEPARATOR) if part)


def in_section(text: str, section: str) -> str:
    """A sentence as search and relevance read it: led by the innermost heading above it, so "Yes."
    under "Is zlib thread-safe?" is found by a question about thread safety (a contextual header)."""
    path = section_path(section)
    return f"{path[-1]}: {text}" if path else text
