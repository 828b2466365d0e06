"""LLM pairwise reranking: a round-robin tournament over the top passages.

A model asked "which of these two passages answers the question better?"
judges more reliably than one asked to score a passage alone (a pairwise
comparison needs no calibrated scale). ``LLMPairwiseReranker`` first ranks
every candidate with its ``inner`` reranker (the evidence reranker in the
``pairwise`` preset, whose scores answerability reads), then lets the top
``depth`` passages play each other once: depth 5 costs 10 LLM calls. A
passage's score is its number of wins (half a win each for a reply that names
neither); ties keep the inner order. Which passage is shown first alternates
from pair to pair, so a model that prefers the first (or second) position
does not favour the inner ranking's leaders. The rest of the ranking follows
unchanged. LLM errors propagate: the question's stage fails with the message
(the client has already retried transient failures).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations
from typing import Literal

from qa.pipeline.core.protocols import LLM
from qa.pipeline.core.types import ScoredPassage

PAIRWISE_PROMPT = (
    "You compare two passages for how well they answer a question. Judge only by what each passage "
    "states; do not use outside knowledge. Reply with one letter: A if passage A answers the question "
    "better, B if passage B does."
)
PASSAGE_CHARS = 1200
# Read on the upper-cased reply: max_tokens=4 leaves room for "A", "B." or "Passage B", not prose.
_CHOICE = re.compile(r"\b([AB])\b")

Choice = Literal["A", "B"]


def pairwise_messages(question: str, first: ScoredPassage, second: ScoredPassage) -> list[dict[str, str]]:
    def block(label: str, hit: ScoredPassage) -> str:
        return f"Passage {label} ({hit.passage.document_title}):\n{hit.passage.text[:PASSAGE_CHARS]}"

    passages = f"{block('A', first)}\n\n{block('B', second)}"
    user = f"Question: {question}\n\n{passages}\n\nWhich passage answers better?"
    return [{"role": "system", "content": PAIRWISE_PROMPT}, {"role": "user", "content": user}]


def parse_choice(reply: str) -> Choice | None:
    """The first standalone A or B of the reply; None when it names neither."""
    match = _CHOICE.search(reply.strip().upper())
    return match.group(1) if match else None  # type: ignore[return-value]


class LLMPairwiseReranker:
    def __init__(self, llm: LLM, *, inner=None, depth: int = 5) -> None:
        if depth < 2:
            raise ValueError("a tournament needs at least two passages (depth >= 2)")
        self.llm, self.inner, self.depth = llm, inner, depth

    def rerank(self, question: str, candidates: Sequence[ScoredPassage]) -> list[ScoredPassage]:
        ranked = list(self.inner.rerank(question, candidates)) if self.inner is not None else list(candidates)
        head, tail = ranked[: self.depth], ranked[self.depth :]
        if len(head) < 2:
            return ranked
        wins = [0.0] * len(head)
        for number, (i, j) in enumerate(combinations(range(len(head)), 2)):
            first, second = (i, j) if number % 2 == 0 else (j, i)
            messages = pairwise_messages(question, head[first], head[second])
            choice = parse_choice(self.llm.complete(messages, temperature=0.0, max_tokens=4))
            if choice == "A":
                wins[first] += 1
            elif choice == "B":
                wins[second] += 1
            else:
                wins[first] += 0.5
                wins[second] += 0.5
        order = sorted(range(len(head)), key=lambda k: (-wins[k], k))
        played = [
            replace(head[k], score=wins[k], scores={**head[k].scores, "pairwise_wins": wins[k]})
            for k in order
        ]
        return played + tail
