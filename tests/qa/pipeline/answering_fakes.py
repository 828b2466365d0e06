"""Fakes satisfying the pipeline Protocols, shared by the generation/citation/answering tests."""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from qa.pipeline.core.types import Passage, ScoredPassage, SourceSentence

_STOP = {"the", "a", "an", "of", "in", "is", "was", "and", "to", "what", "how", "did", "does", "its", "it"}


class BagOfWordsEmbedder:
    """Deterministic: hashes words into 512 buckets, so cosine tracks shared words."""

    dim = 512

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                if word not in _STOP:
                    out[row, zlib.crc32(word.rstrip("s").encode()) % self.dim] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out


class TableEmbedder:
    """Returns the vectors it was given per text (others get a fixed far-away vector)."""

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = {text: np.asarray(v, dtype=np.float32) for text, v in table.items()}
        self.dim = len(next(iter(self.table.values())))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        default = np.zeros(self.dim, dtype=np.float32)
        default[-1] = 1.0
        rows = [self.table.get(text, default) for text in texts]
        rows = [row / (np.linalg.norm(row) or 1.0) for row in rows]
        return np.stack(rows)


class ScriptedLLM:
    """Returns scripted replies in order and records every call; an exception in the script is raised."""

    name = "scripted"

    def __init__(self, replies: Sequence[str | Exception | Callable] = ()) -> None:
        self.replies = list(replies)
        self.calls: list[dict] = []

    def complete(self, messages, *, temperature: float = 0.0, max_tokens: int = 512) -> str:
        self.calls.append({"messages": list(messages), "temperature": temperature, "max_tokens": max_tokens})
        if not self.replies:
            raise AssertionError(f"unexpected LLM call #{len(self.calls)}")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply(messages) if callable(reply) else reply


_ids = itertools.count(1000)


def make_passage(document_id: str, texts: Sequence[str], *, title: str | None = None) -> Passage:
    sentences = tuple(
        SourceSentence(
            id=next(_ids),
            document_id=document_id,
            document_title=title or document_id.title(),
            ordinal=i,
            label=f"S{i + 1}",
            text=text,
        )
        for i, text in enumerate(texts)
    )
    return Passage(
        key=f"doc:{document_id}",
        unit="document",
        document_id=document_id,
        document_title=title or document_id.title(),
        text=" ".join(texts),
        sentences=sentences,
    )


# A country profile's government section: the 2011 reforms, who made them, and one sentence about
# something else (the answering and reply-rule tests ask about the reforms).
OMAN_GOVERNMENT = make_passage(
    "factbook/oman",
    [
        "Oman: Government",
        "Sultan Qaboos bin Said ruled Oman from 1970 until his death in 2020.",
        "In 2011 Sultan Qaboos expanded the legislative powers of the Council of Oman.",
        "Qaboos also authorised direct elections for the lower house in 2011.",
        "The country exports oil and natural gas.",
    ],
)


def ranked(*passages: Passage) -> list[ScoredPassage]:
    return [ScoredPassage(p, score=1.0 - 0.1 * i) for i, p in enumerate(passages)]


def user_message(call: dict) -> str:
    return next(m["content"] for m in call["messages"] if m["role"] == "user")


def system_message(call: dict) -> str:
    return next(m["content"] for m in call["messages"] if m["role"] == "system")
