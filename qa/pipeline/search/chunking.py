"""How documents are cut into retrieval chunks: sentence windows inside each section (what ingestion
stores), recursive character splitting and token windows (``ChunkerConfig``;
``rechunk.RechunkedIndex`` applies them per preset, ``InMemoryCorpusIndex`` at build time).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from qa.pipeline.core.roles import SECTION_SEPARATOR
from qa.pipeline.core.segment import strip_span


def sentence_windows(n_sentences: int, size: int = 8, overlap: int = 2) -> list[tuple[int, int]]:
    """Return (first, last) inclusive sentence ordinals of each chunk.

    Windows start every ``size - overlap`` sentences so that a fact spanning a
    window edge is whole in at least one chunk when it is at most ``overlap + 1``
    sentences long. The last window is cut short at the last sentence rather
    than shifted back, so chunk boundaries do not move when a document grows.
    """
    for name, value in (("n_sentences", n_sentences), ("size", size), ("overlap", overlap)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n_sentences < 0:
        raise ValueError(f"n_sentences must not be negative, got {n_sentences}")
    if size < 1:
        raise ValueError(f"size must be at least 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be at least 0 and less than size ({size}), got {overlap}")

    windows = []
    step = size - overlap
    for first in range(0, n_sentences, step):
        last = min(first + size - 1, n_sentences - 1)
        windows.append((first, last))
        if last == n_sentences - 1:
            break
    return windows


def section_windows(sections: Sequence[str], size: int = 8, overlap: int = 2) -> list[tuple[int, int]]:
    """``sentence_windows`` within each run of sentences that share a section, so that no chunk holds
    the end of one section and the start of the next (a table's last rows, its footnotes and the
    next table's heading). ``sections`` are the sentences' section paths in order. A heading (or a
    FAQ's question) starts the run of the section it opens: the sentences under it carry a path one
    part longer than its own. A document without sections is one run: its windows are
    ``sentence_windows``'."""
    runs: list[tuple[int, int]] = []
    first = 0
    for i in range(1, len(sections) + 1):
        if i == len(sections) or not _continues(sections[i - 1], sections[i]):
            runs.append((first, i - 1))
            first = i
    return [
        (start + a, start + b)
        for start, end in runs
        for a, b in sentence_windows(end - start + 1, size, overlap)
    ]


def _continues(before: str, after: str) -> bool:
    """Whether a sentence in section ``after`` continues the run of the one before it, in ``before``:
    the same section, or the one the sentence before opened (its path one part longer)."""
    if after == before:
        return True
    if not before:
        return SECTION_SEPARATOR not in after
    opened = before + SECTION_SEPARATOR
    return after.startswith(opened) and SECTION_SEPARATOR not in after[len(opened) :]


def token_window_spans(text: str, size: int = 150, overlap: int = 50) -> list[tuple[int, int]]:
    """Character spans of windows of ``size`` whitespace-separated tokens, ``overlap`` shared.

    Tokens are words, not a model's word pieces (all-MiniLM-L6-v2 makes about
    1.3 pieces per English word), so the chunking needs no tokenizer and cuts
    the same windows whatever model embeds them. Windows follow
    ``sentence_windows``' rule: the last one is cut short, never shifted back.
    """
    tokens = [match.span() for match in re.finditer(r"\S+", text)]
    return [
        (tokens[first][0], tokens[last][1]) for first, last in sentence_windows(len(tokens), size, overlap)
    ]


RECURSIVE_SEPARATORS = ("\n\n", "\n", ". ", " ", "")


def recursive_character_spans(
    text: str, size: int = 1000, overlap: int = 200, separators: Sequence[str] = RECURSIVE_SEPARATORS
) -> list[tuple[int, int]]:
    """Character spans of at most ``size`` characters, cut at the coarsest separator that makes pieces fit.

    The text is split at paragraph breaks; a piece still too long is split at
    line breaks, then after sentence ends, then at spaces, then anywhere
    (``""``). Neighbouring pieces are then packed into chunks of up to
    ``size`` characters; each chunk after the first starts with the last
    pieces of the one before, as many as fit in ``overlap`` characters.
    Spans exclude leading and trailing whitespace; blank text gives none.
    """
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need size >= 1 and 0 <= overlap < size, got size={size}, overlap={overlap}")
    pieces = _split_to_fit(text, 0, len(text), size, tuple(separators))
    chunks: list[tuple[int, int]] = []
    first = 0
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and pieces[last + 1][1] - pieces[first][0] <= size:
            last += 1
        chunks.append((pieces[first][0], pieces[last][1]))
        if last == len(pieces) - 1:
            break
        # Step back over trailing pieces that fit in the overlap, but always move forward and
        # leave room for the next new piece (else the next chunk would repeat this one's tail).
        following = last + 1
        while (
            following - 1 > first
            and pieces[last][1] - pieces[following - 1][0] <= overlap
            and pieces[last + 1][1] - pieces[following - 1][0] <= size
        ):
            following -= 1
        first = following
    return [span for span in (strip_span(text, start, end) for start, end in chunks) if span[1] > span[0]]


def _split_to_fit(
    text: str, start: int, end: int, size: int, separators: tuple[str, ...]
) -> list[tuple[int, int]]:
    """``text[start:end]`` as consecutive spans of at most ``size`` characters (they tile the range)."""
    if end - start <= size:
        return [(start, end)]
    for position, separator in enumerate(separators):
        if separator == "":
            return [(cut, min(cut + size, end)) for cut in range(start, end, size)]
        cuts = [m.end() for m in re.finditer(re.escape(separator), text[start:end])]
        bounds = [start, *(start + c for c in cuts if 0 < c < end - start), end]
        if len(bounds) == 2:
            continue
        spans: list[tuple[int, int]] = []
        for left, right in zip(bounds, bounds[1:], strict=False):
            if right - left <= size:
                spans.append((left, right))
            else:
                spans.extend(_split_to_fit(text, left, right, size, separators[position + 1 :]))
        return spans
    return [(start, end)]


ChunkerKind = Literal["sentences", "recursive", "tokens"]


@dataclass(frozen=True)
class ChunkSpan:
    """One chunk of a document: its text and the (inclusive) range of sentences it touches."""

    text: str
    first: int
    last: int


@dataclass(frozen=True)
class ChunkerConfig:
    """How to cut a document into chunks: ``size`` and ``overlap`` count sentences, characters or words.

    Chunks always map back to whole sentences (``ChunkSpan.first .. last``),
    because answers cite sentences: a character or token window that cuts a
    sentence touches it, and the sentence is citable from that chunk.
    """

    kind: ChunkerKind = "sentences"
    size: int = 8
    overlap: int = 2
    # Sentence windows stay inside a section (``section_windows``) when the sentences' sections are
    # given; False: windows run across them (``sentence_windows``), as before documents kept structure.
    within_sections: bool = True

    def __post_init__(self) -> None:
        if self.kind not in ("sentences", "recursive", "tokens"):
            raise ValueError(f"unknown chunker {self.kind!r}; choose sentences, recursive or tokens")
        if self.size < 1 or not 0 <= self.overlap < self.size:
            raise ValueError(
                f"chunker needs size >= 1 and 0 <= overlap < size, got {self.size}, {self.overlap}"
            )

    @property
    def tag(self) -> str:
        return f"{self.kind}{self.size}o{self.overlap}"

    def cut(self, sentences: Sequence[str], sections: Sequence[str] | None = None) -> list[ChunkSpan]:
        """The chunks of a document given as its sentences, in order (with their section paths, the
        sentence windows stay inside each section)."""
        if self.kind == "sentences":
            if sections is not None and self.within_sections:
                windows = section_windows(sections, self.size, self.overlap)
            else:
                windows = sentence_windows(len(sentences), self.size, self.overlap)
            return [ChunkSpan(" ".join(sentences[first : last + 1]), first, last) for first, last in windows]
        starts, position = [], 0
        for sentence in sentences:
            starts.append(position)
            position += len(sentence) + 1
        text = " ".join(sentences)
        if self.kind == "tokens":
            spans = token_window_spans(text, self.size, self.overlap)
        else:
            spans = recursive_character_spans(text, self.size, self.overlap)
        return [
            ChunkSpan(
                text[start:end],
                bisect.bisect_right(starts, start) - 1,
                bisect.bisect_right(starts, end - 1) - 1,
            )
            for start, end in spans
        ]
