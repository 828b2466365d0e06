"""Documents as blocks with roles: headings, paragraphs, list items, table rows, questions, code.

Every format's parser reduces its file to ``Block``s, spans of the document text, each with a role
(``qa.pipeline.core.roles``), a heading level and a page. ``document_from_blocks`` segments each block
into sentences that keep their block's role, the path of the headings above them and their page.
Answering reads the roles (a heading or a question is never quoted as an answer) and the section
path (the sentence "Yes." is about the question it sits under).

How each format finds its blocks:
- Markdown: markdown-it-py's CommonMark parser with tables (headings, paragraphs, list items,
  fenced and indented code, pipe tables).
- HTML: BeautifulSoup's tree (h1-h6, p, li, dt/dd, pre, table rows, captions), ``html_text.py``.
- Word: python-docx paragraph styles (Title, Heading N, List ...) and tables, ``docx_text.py``.
- Plain text and PDF text layers: the layout (``plaintext_blocks`` below), since they carry no
  markup: setext underlines, list markers and outline numbers ("2.1."), short lines without a full
  stop that stand apart, lines that ask, short lines that read as code.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from qa.pipeline.core import roles
from qa.pipeline.core.segment import MAX_SENTENCE_CHARS, RULE, paragraph_spans, segment, strip_span

from .assemble import default_title
from .types import EmptyDocument, ParsedDocument, ParsedSentence

# Sections opened by a question or a run-in heading sit below every marked-up heading (h1-h6).
INNER_LEVEL = 7
# A line this short with no sentence-final punctuation is a heading, not a sentence ("Security
# and code quality", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION").
HEADING_MAX_WORDS = 12
# A block of at most this many sentences whose last one asks is a question as a whole.
QUESTION_BLOCK_MAX_SENTENCES = 3
# A run-in heading ("3. Grant of Patent License. Subject to ...") is at most this many words.
RUN_IN_MAX_WORDS = 6
# A paragraph's opening "sentence" of at most this many words ("Yes.", "No.") is a reply, cited with
# the sentence after it: alone it answers nothing a reader can check.
REPLY_MAX_WORDS = 2

_LIST_MARKER = re.compile(r"\s*(?:[-*+\u2022\u25aa\u25e6\u2023]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+(?=\S)")
# A clause's or an entry's outline number, "2.1. " or "3.1.1<tab>" (the MPL's clauses, the Valgrind
# and lsof FAQs' entries): two or more numbers, closed by a full stop or a tab, which a wrapped line
# that starts with a version or a section reference ("1.1.3 and before were ...", "2.1 of this
# License ...") does not have.
_OUTLINE_MARKER = re.compile(r"\s*(\d{1,3}(?:\.\d{1,3})+)(?:\.[ \t]+|\t[ \t]*)(?=\S)")
# A FAQ's "Q:" / "A:" label before its question or answer: a mark of layout like a list marker, so
# the sentences start after it and no answer quotes "A:  LZMA stands for ...".
_FAQ_LABEL = re.compile(r"\s*[QA]:\s+(?=\S)")
_ATX_HEADING = re.compile(r"\s*(#{1,6})\s+(?=\S)")
# Text with no letter or digit: a rule, a lone mark, punctuation. No sentence is made of it.
NO_TEXT = re.compile(r"[^\w]*")
_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?;:,]['\"\u2019\u201d)\]]*$")
# How a sentence (not a heading) ends: a heading may ask ("Why use man-db?") or introduce (":").
_SENTENCE_STOP = re.compile(r"[.!;,]['\"\u2019\u201d)\]]*$")
# Marks of a line of code, a command or an address, which a heading does not carry: braces, =, <
# or >, a name glued to its "(" ("int main(void)", not "Contributor(s)"), "://", an "@" inside a
# word, or a shell prompt ("$ "; a "# " line is read as a Markdown heading before this). A short
# line without a full stop that has one is code, not a heading: in text files such lines are code
# samples, commands, settings, links and signatures ("$ make CC=foobar",
# "XZ_DEFAULTS=--memlimit-compress=150MiB", "http://..."). Read off 759 text files under
# /usr/share/doc (python -m bench.headings, docs/structure.md); a semicolon is left out, as prose
# records use it.
_CODE_MARK = re.compile(r"[{}=<>]|[A-Za-z_]\w*\((?!s\))|://|\w@\w|^\s*\$ ")


@dataclass(frozen=True)
class Block:
    """A span [start, end) of the document text with the role of everything in it."""

    role: str
    start: int
    end: int
    level: int = 0  # a heading's depth: 1 (h1) .. 6, INNER_LEVEL for questions and run-in headings
    page: int | None = None
    marker_end: int = 0  # the text starts here, after a list marker ("3. ", "* ") or a FAQ label ("A: ")
    one_sentence: bool = False  # headings and table rows are cited whole, never split


class BlockText:
    """Builds a document's text from block strings (Markdown, HTML, Word), separated by blank lines."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.blocks: list[Block] = []
        self.length = 0

    def add(self, role: str, text: str, *, level: int = 0, page: int | None = None) -> None:
        text = text.strip()
        if not text or NO_TEXT.fullmatch(text):
            return
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        one = role in (roles.TITLE, roles.HEADING, roles.TABLE_ROW)
        self.blocks.append(Block(role, start, self.length, level=level, page=page, one_sentence=one))

    @property
    def text(self) -> str:
        return "".join(self.parts)


def table_row_text(header: Sequence[str], cells: Sequence[str]) -> str:
    """A table row as one citable line that carries its column headers: "Indicator: Population |
    2021: 74,656". A row whose cells do not line up with the header keeps its cells alone."""
    cells = [" ".join(cell.split()) for cell in cells]
    if header and len(header) == len(cells) and list(header) != cells:
        pairs = [
            f"{name}: {cell}" if name and cell else cell for name, cell in zip(header, cells, strict=True)
        ]
        return " | ".join(pair for pair in pairs if pair)
    return " | ".join(cell for cell in cells if cell)


def document_from_blocks(
    text: str,
    blocks: Iterable[Block],
    *,
    external_id: str,
    filename: str,
    title: str = "",
    source: str = "",
    url: str = "",
    published: datetime.date | None = None,
) -> ParsedDocument:
    """Segment each block and give its sentences their role, section path and page."""
    path: list[tuple[int, str]] = []  # the open headings, outermost first
    sentences: list[ParsedSentence] = []
    for block in blocks:
        if block.role == roles.LIST_ITEM and block.level:
            # An outline-numbered clause ("1.6. ...") ends the scope of the numbered title before it
            # at its depth ("1.5. ... means"), as the next heading of that level would.
            while path and path[-1][0] >= block.level:
                path.pop()
        spans = [(a, b) for a, b in _block_spans(text, block) if not NO_TEXT.fullmatch(text, a, b)]
        block_roles = _sentence_roles(block, [text[a:b] for a, b in spans])
        for (start, end), role in zip(spans, block_roles, strict=True):
            sentence = text[start:end]
            if role == roles.HEADING and (
                _heading_text(sentence) == _heading_text(title) or not (sentences or title)
            ):
                role = roles.TITLE  # the document's title line (or first heading): no section of its own
            section = _section(path)
            if role == roles.HEADING or (
                role == roles.QUESTION and (start, end) == spans[-1] and set(block_roles) == {roles.QUESTION}
            ):
                # A heading, or a block that is one question (a FAQ's entry), names what follows.
                level = block.level or INNER_LEVEL
                while path and path[-1][0] >= level:
                    path.pop()
                section = _section(path)
                heading = text[spans[0][0] : end] if role == roles.QUESTION else sentence
                path.append((level, _heading_text(heading)))
            sentences.append(ParsedSentence(sentence, start, end, None, role, section, block.page))
    if not sentences:
        raise EmptyDocument(f"{filename} contains no text.")
    if not title:
        title = next((s.text for s in sentences if s.role == roles.TITLE), "")
    return ParsedDocument(
        external_id=external_id,
        title=_heading_text(title) or default_title(text, filename),
        text=text,
        sentences=tuple(sentences),
        source=source,
        url=url,
        published=published,
    )


def plaintext_blocks(text: str, *, page_starts: Sequence[int] = ()) -> list[Block]:
    """The blocks of text with no markup, read from its layout.

    Runs of text that no sentence may cross (``segment.paragraph_spans``: blank lines, and line
    breaks that are no soft wrap) become blocks: a run underlined with ===/--- is a heading (unless
    it ends like a sentence: then the rule only separates), one opening with an outline number and
    a short title ("2.1. Grants") a heading a level down per number, one opening with a list marker
    or an outline number a list item, a short run without a full stop a heading when it opens a
    group of lines (a line among lines is a record, a list entry or a line of code: the Factbook's
    "Elevation - highest point: Jabal Shams 3,004 m") and code when it has the marks of code, a
    command or an address, a run that is one question a question (a FAQ's entry); the rest
    paragraphs, their sentences starting after a FAQ's "Q:" / "A:" label. ``page_starts`` are the
    offsets where each page begins (PDF), numbering pages from 1.
    """
    blocks: list[Block] = []
    previous_end: int | None = None
    for start, end in paragraph_spans(text):
        run = text[start:end]
        if start >= end:
            continue
        # Whether the run opens a group of lines (the text's start or a blank line before it). Typed
        # text sets a heading apart; a PDF's text layer has no blank lines to tell, so there any run
        # may head.
        opens = previous_end is None or bool(page_starts) or text.count("\n", previous_end, start) > 1
        previous_end = end
        underline = RULE.fullmatch(run)
        if underline:
            if blocks and _underlined(text, blocks[-1], start):
                level = 1 if underline.group(1) in "=#" else 2
                blocks[-1] = replace(blocks[-1], role=roles.HEADING, level=level, one_sentence=True)
            continue
        if NO_TEXT.fullmatch(run):
            continue
        page = _page(start, page_starts)
        outline = _OUTLINE_MARKER.match(run)
        marker = outline or _LIST_MARKER.match(run)
        words = _WORD.findall(run)
        titled = len(words) <= HEADING_MAX_WORDS and not _SENTENCE_END.search(run)
        atx = _ATX_HEADING.match(run)
        if atx:
            # Markdown's "## Heading" in a text file, or in the text of a document stored before
            # Markdown was parsed as such (documents/services/restructure.py).
            level = len(atx.group(1))
            blocks.append(Block(roles.HEADING, start, end, level=level, page=page, one_sentence=True))
        elif outline and titled:
            # A numbered title ("2.1. Grants") heads what follows, one level down per number.
            level, marker_end = _outline_level(outline), start + outline.end()
            blocks.append(Block(roles.HEADING, start, end, level, page, marker_end, one_sentence=True))
        elif marker:
            level = _outline_level(outline) if outline else 0
            blocks.append(Block(roles.LIST_ITEM, start, end, level, page, marker_end=start + marker.end()))
        elif titled and blocks and _CODE_MARK.search(run):
            # (A file's first line stays its title, whatever it holds: "url: https://...".)
            blocks.append(Block(roles.CODE, start, end, page=page, one_sentence=True))
        elif titled and opens:
            blocks.append(Block(roles.HEADING, start, end, level=2, page=page, one_sentence=True))
        else:
            label = _FAQ_LABEL.match(run)
            label_end = start + label.end() if label else 0
            blocks.append(Block(roles.PARAGRAPH, start, end, page=page, marker_end=label_end))
    return blocks


def _outline_level(outline: re.Match) -> int:
    """The heading level of an outline number's depth: "2.1." is 3, below a section ("2." over a
    rule) at 2."""
    return min(outline.group(1).count(".") + 2, 6)


def _underlined(text: str, block: Block, underline_start: int) -> bool:
    """Whether the rule starting at ``underline_start`` underlines ``block`` as a heading (setext
    style): the block ends on the line right above it and does not end like a sentence. A numbered
    section's title ("1. Definitions" over "----", the MPL's layout) is such a heading, though it
    opens like a list item. A rule under a sentence ("Don't feel bad: almost everyone gets it wrong
    at first." over a full-width rule, the Valgrind FAQ's layout) only separates what follows."""
    if "\n\n" in text[block.end : underline_start]:
        return False
    line = text[block.start : block.end].strip()
    if block.role == roles.LIST_ITEM:
        if len(_WORD.findall(line)) > HEADING_MAX_WORDS:
            return False
    elif block.role not in (roles.PARAGRAPH, roles.HEADING):
        return False
    return not _SENTENCE_STOP.search(line)


def _page(offset: int, page_starts: Sequence[int]) -> int | None:
    if not page_starts:
        return None
    return sum(1 for start in page_starts if start <= offset) or 1


def _block_spans(text: str, block: Block) -> list[tuple[int, int]]:
    start = max(block.start, block.marker_end)
    if block.role == roles.HEADING and block.marker_end:
        start = block.start  # a heading is cited with its "## " mark, as the stored sentence was
    if block.one_sentence and block.end - start <= MAX_SENTENCE_CHARS:
        span = strip_span(text, start, block.end)
        return [span] if span[0] < span[1] else []
    spans = [(start + a, start + b) for a, b in segment(text[start : block.end])]
    return _reply_joined(text, spans) if block.role == roles.PARAGRAPH else spans


def _reply_joined(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with a paragraph's opening reply ("Yes.", "No.", "Not yet.": at most
    ``REPLY_MAX_WORDS`` words) joined to the sentence after it, so it is cited with what it answers:
    "Is zlib Y2K-compliant?" / "Yes. zlib doesn't handle dates.". Only paragraphs: a list item's
    opening word is its run-in heading ("4. Redistribution. You may ...")."""
    if (
        len(spans) > 1
        and len(_WORD.findall(text, *spans[0])) <= REPLY_MAX_WORDS
        and spans[1][1] - spans[0][0] <= MAX_SENTENCE_CHARS
    ):
        return [(spans[0][0], spans[1][1]), *spans[2:]]
    return spans


def _sentence_roles(block: Block, sentences: Sequence[str]) -> list[str]:
    if block.role in (roles.HEADING, roles.TITLE, roles.CODE, roles.TABLE_ROW):
        return [block.role] * len(sentences)
    if sentences and len(sentences) <= QUESTION_BLOCK_MAX_SENTENCES and roles.asks(sentences[-1]):
        # A short block that ends by asking is a question as a whole: "Q: I have many .tar.7z
        # files. Can I convert them to .tar.xz ...?" sets the question up, it answers nothing.
        return [roles.QUESTION] * len(sentences)
    found = [roles.QUESTION if roles.asks(s) else block.role for s in sentences]
    if found and block.role == roles.LIST_ITEM and _is_run_in_heading(sentences[0]):
        found[0] = roles.HEADING
    return found


def _is_run_in_heading(sentence: str) -> bool:
    """ "Grant of Patent License." at the head of a numbered clause: a few words, the long ones all
    capitalised, ending in a full stop (typographic convention, no word list)."""
    words = _WORD.findall(sentence)
    long_words = [w for w in words if len(w) >= 4]
    return (
        0 < len(words) <= RUN_IN_MAX_WORDS
        and bool(long_words)
        and all(w[0].isupper() for w in long_words)
        and sentence.rstrip().endswith(".")
    )


def _heading_text(text: str) -> str:
    return " ".join(text.split()).strip("#").strip()


def _section(path: Sequence[tuple[int, str]]) -> str:
    return roles.SECTION_SEPARATOR.join(name for _, name in path)


def structure_of_text(
    text: str, *, title: str = "", page_starts: Sequence[int] = ()
) -> tuple[ParsedSentence, ...]:
    """The sentences, with roles and section paths, that the layout of ``text`` implies: what a
    document stored as flat text (before structure was kept) is restructured from. ``page_starts``:
    a PDF's pages, as ``plaintext_blocks`` takes them."""
    if not text.strip():
        return ()
    blocks = plaintext_blocks(text, page_starts=page_starts)
    return document_from_blocks(text, blocks, external_id="", filename="", title=title).sentences
