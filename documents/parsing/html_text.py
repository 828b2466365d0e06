"""The visible text of an HTML page, with its block structure kept as line breaks."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, Declaration, Doctype, NavigableString, ProcessingInstruction

from .assemble import TITLE_MAX_CHARS, shorten

# Never rendered as text, or page furniture that would pollute retrieval.
_INVISIBLE = ("script", "style", "noscript", "template", "head", "nav", "svg", "iframe", "object")
# Elements that start a new line when rendered: a heading or list item must
# not run into the sentence after it.
_BLOCKS = (
    "address", "article", "aside", "blockquote", "caption", "dd", "div", "dl", "dt",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hr", "li", "main", "ol", "p", "pre", "section", "table", "tr", "ul",
)  # fmt: skip
_CELLS = ("td", "th")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_SPACED_BREAK = re.compile(r" *\n *")
_MANY_BREAKS = re.compile(r"\n{3,}")


def html_to_text(data: bytes) -> tuple[str, str]:
    """Return (title, text). The title is "" when the page names none."""
    # html.parser rather than lxml: no C dependency, and it never raises on
    # broken markup, which is most of the web.
    soup = BeautifulSoup(data, "html.parser")
    title = _title(soup)
    for element in soup.find_all(_INVISIBLE):
        element.decompose()
    for node in soup.find_all(string=True):
        if isinstance(node, (Comment, Declaration, Doctype, ProcessingInstruction)):
            node.extract()
        elif node.find_parent("pre") is None:
            # Source whitespace is insignificant in HTML; only markup breaks lines.
            node.replace_with(NavigableString(re.sub(r"\s+", " ", str(node))))
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for cell in soup.find_all(_CELLS):
        cell.insert_after(" ")
    for block in soup.find_all(_BLOCKS):
        block.insert_before("\n\n")
        block.insert_after("\n\n")
    text = _SPACES.sub(" ", soup.get_text())
    text = _MANY_BREAKS.sub("\n\n", _SPACED_BREAK.sub("\n", text))
    return title, text.strip()


def _title(soup: BeautifulSoup) -> str:
    for tag in (soup.title, soup.find("h1")):
        if tag is not None:
            title = " ".join(tag.get_text(" ").split())
            if title:
                return shorten(title, TITLE_MAX_CHARS)
    return ""
