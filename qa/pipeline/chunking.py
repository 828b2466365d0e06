"""Which sentences go into each retrieval chunk (ingestion and InMemoryCorpusIndex cut the same windows)."""

from __future__ import annotations


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
