"""The visible text of an HTML page as blocks: headings, paragraphs, list items, table rows, code."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag

from qa.pipeline.core import roles

from .assemble import TITLE_MAX_CHARS, shorten
from .structure import INNER_LEVEL, NO_TEXT, BlockText, table_row_text

# Never rendered as text, or page furniture that would pollute retrieval (a code sample's "copy"
# button is a control, not text).
_INVISIBLE = ("script", "style", "noscript", "template", "head", "nav", "svg", "iframe", "object", "button")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
# Elements that hold text of one role; anything else holding text is read as a paragraph.
_LEAF_ROLES = {
    "p": roles.PARAGRAPH,
    "address": roles.PARAGRAPH,
    "blockquote": roles.PARAGRAPH,
    "dd": roles.PARAGRAPH,
    "li": roles.LIST_ITEM,
    "caption": roles.CAPTION,
    "figcaption": roles.CAPTION,
}
# Elements that start a new block when rendered: a heading or list item must not run into the
# sentence after it.
_BLOCKS = frozenset(
    {
        *_HEADINGS, *_LEAF_ROLES, "article", "aside", "body", "div", "dl", "dt", "figure", "footer",
        "form", "header", "hr", "html", "main", "ol", "pre", "section", "table", "tbody", "thead",
        "tfoot", "tr", "ul",
    }
)  # fmt: skip
_SPACES = re.compile(r"\s+")


def html_blocks(data: bytes) -> tuple[str, BlockText]:
    """Return (title, blocks). The title is "" when the page names none."""
    # html.parser rather than lxml: no C dependency, and it never raises on
    # broken markup, which is most of the web.
    soup = BeautifulSoup(data, "html.parser")
    title = _title(soup)
    for element in soup.find_all(_INVISIBLE):
        element.decompose()
    for link in soup.find_all("a", href=True):
        # A link to a place in the page with no letter or digit: the permalink mark documentation
        # generators put in each heading ("#" in Node.js's docs, "¶" in Sphinx's and Texinfo's).
        if link["href"].startswith("#") and NO_TEXT.fullmatch(link.get_text()):
            link.decompose()
    for node in soup.find_all(string=True):
        if isinstance(node, (Comment, Declaration, Doctype, ProcessingInstruction)):
            node.extract()
    out = BlockText()
    _walk(soup, out, roles.PARAGRAPH)
    return title, out


def _walk(element: Tag, out: BlockText, role: str) -> None:
    """Emit the blocks under ``element``; loose text between blocks becomes a block of ``role``."""
    loose: list[str] = []

    def flush() -> None:
        out.add(role, _SPACES.sub(" ", "".join(loose)))
        loose.clear()

    for child in element.children:
        if isinstance(child, NavigableString):
            loose.append(str(child))
            continue
        if not isinstance(child, Tag):
            continue
        name = child.name
        if name == "br":
            loose.append("\n")
        elif name not in _BLOCKS:
            loose.append(child.get_text())
        else:
            flush()
            _block(child, out)
    flush()


def _block(element: Tag, out: BlockText) -> None:
    name = element.name
    if name in _HEADINGS:
        out.add(roles.HEADING, _SPACES.sub(" ", element.get_text(" ")), level=_HEADINGS[name])
    elif name == "dt":
        # A definition's term heads the definition below it, as a FAQ's question heads its answer.
        out.add(roles.HEADING, _SPACES.sub(" ", element.get_text(" ")), level=INNER_LEVEL)
    elif name == "pre":
        out.add(roles.CODE, element.get_text())
    elif name == "table":
        _table(element, out)
    elif name in _LEAF_ROLES:
        _walk(element, out, _LEAF_ROLES[name])
    else:
        _walk(element, out, roles.PARAGRAPH)


def _table(table: Tag, out: BlockText) -> None:
    """Each row one block that carries the column headers: the header is the first row when it is
    made of <th> cells (or sits in <thead>)."""
    caption = table.find("caption")
    if caption is not None:
        out.add(roles.CAPTION, _SPACES.sub(" ", caption.get_text(" ")))
    header: list[str] = []
    for row in table.find_all("tr"):
        if row.find_parent("table") is not table:
            continue  # a nested table's rows are its own
        cells = row.find_all(("td", "th"), recursive=False)
        texts = [_SPACES.sub(" ", cell.get_text(" ")).strip() for cell in cells]
        is_header = bool(cells) and (
            all(cell.name == "th" for cell in cells) or row.find_parent("thead") is not None
        )
        if is_header and not header:
            header = texts
        else:
            out.add(roles.TABLE_ROW, table_row_text(header, texts))


def _title(soup: BeautifulSoup) -> str:
    for tag in (soup.title, soup.find("h1")):
        if tag is not None:
            title = " ".join(tag.get_text(" ").split())
            if title:
                return shorten(title, TITLE_MAX_CHARS)
    return ""
