"""What every extractive reader shares: the question paired with each context as its tokenizer
encodes them, and a span of tokens mapped back to characters of its context.

Both readers that mark answer spans use it: the one a user names (``checks.spans``,
QA_SPAN_READER_MODEL) and our own (``reader.SpanReader``). They score spans differently; where
the tokens of a context start and end, and which tokens are the context's, they must agree on,
or a span lands on the question's words or a padding offset in one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EncodedContexts:
    """``inputs``: the tokenizer's batch for the model (``model(**inputs)``), without the offsets.
    Per context (a row): ``offsets``, each token's (first, end) character in the context;
    ``in_context``, whether the token is the context's (not the question's, a special token or
    padding), the only tokens a span may cover."""

    inputs: Any
    offsets: list[list[list[int]]]
    in_context: list[list[bool]]

    def characters(self, row: int, first: int, last: int) -> tuple[int, int]:
        """The (start, end) characters of tokens ``first`` to ``last`` (inclusive) of row ``row``."""
        return self.offsets[row][first][0], self.offsets[row][last][1]


def encode_contexts(tokenizer, question: str, contexts: Sequence[str], *, max_length: int) -> EncodedContexts:
    """``question`` paired with each context, padded to one batch of torch tensors; a long context
    is cut (never the question). The tokenizer must be a fast one (character offsets)."""
    encoded = tokenizer(
        [question] * len(contexts),
        list(contexts),
        truncation="only_second",
        max_length=max_length,
        padding=True,
        return_offsets_mapping=True,
        return_tensors="pt",
    )
    offsets = encoded.pop("offset_mapping").tolist()
    in_context = [[sequence == 1 for sequence in encoded.sequence_ids(row)] for row in range(len(contexts))]
    return EncodedContexts(encoded, offsets, in_context)
