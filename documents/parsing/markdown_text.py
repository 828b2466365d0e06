"""Markdown's blocks (headings, paragraphs, list items, code, pipe tables) by markdown-it-py."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from qa.pipeline.core import roles

from .structure import HEADING_MAX_WORDS, INNER_LEVEL, BlockText, table_row_text

_SENTENCE_END = (".", "!", "?", ":", ";", ",")


def markdown_blocks(source: str) -> BlockText:
    """The blocks of a Markdown document, its markup removed from their text."""
    tokens = MarkdownIt("commonmark").enable("table").parse(source)
    out = BlockText()
    item_paragraphs: list[list[str]] = []  # the paragraphs of each open list item
    table_header: list[str] = []
    row: list[str] | None = None
    in_header = False
    pending_heading = 0
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "heading_open":
            pending_heading = int(token.tag[1])
        elif kind == "list_item_open":
            item_paragraphs.append([])
        elif kind == "list_item_close":
            item_paragraphs.pop()
        elif kind in ("fence", "code_block"):
            out.add(roles.CODE, token.content)
        elif kind == "thead_open":
            in_header, table_header = True, []
        elif kind == "thead_close":
            in_header = False
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            if in_header:
                table_header = row
            else:
                out.add(roles.TABLE_ROW, table_row_text(table_header, row))
            row = None
        elif kind == "inline":
            text = inline_text(token)
            if row is not None:
                row.append(text)
            elif pending_heading:
                out.add(roles.HEADING, text, level=pending_heading)
                pending_heading = 0
            elif item_paragraphs:
                item_paragraphs[-1].append(text)
                if _labels_item(text, tokens, index):
                    out.add(roles.HEADING, text, level=INNER_LEVEL)
                else:
                    out.add(roles.LIST_ITEM if len(item_paragraphs[-1]) == 1 else roles.PARAGRAPH, text)
            else:
                out.add(roles.PARAGRAPH, text)
    return out


def inline_text(token: Token) -> str:
    """An inline token's plain text: emphasis, links and code marks dropped, images by their alt."""
    parts = []
    for child in token.children or ():
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type == "softbreak":
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts)


def _labels_item(text: str, tokens: list[Token], index: int) -> bool:
    """A list item's first paragraph that is a short label with paragraphs of its own below it
    ("* Security and code quality" then two paragraphs) heads the item rather than stating
    anything."""
    words = text.split()
    if not words or len(words) > HEADING_MAX_WORDS or text.rstrip().endswith(_SENTENCE_END):
        return False
    # tokens[index + 1] closes this paragraph; a paragraph opening right after it is the label's body.
    following = tokens[index + 2] if index + 2 < len(tokens) else None
    return following is not None and following.type == "paragraph_open"
