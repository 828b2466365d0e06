"""Turning a word list into a regular expression, so that a pattern reads the lexicon's words
rather than writing them again."""

from __future__ import annotations

from collections.abc import Iterable


def alternation(words: Iterable[str]) -> str:
    """``(?:a|b|c)``: a non-capturing regular-expression group matching any of the words.

    The words are plain lowercase words or phrases (no regular-expression syntax), so they are
    joined as written.
    """
    return "(?:" + "|".join(words) + ")"
