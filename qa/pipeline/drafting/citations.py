"""Attach source sentences to answer sentences: word overlap, embedding alignment or an LLM.

Generation may already have cited (exactly, for the extractive generator; by
parsed ids, for an LLM). ``replace_existing`` decides whether those citations
are kept, with only uncited sentences filled in, or recomputed for every
sentence. Sentences that read as instructions to a model are never cited (see
``prompts.looks_like_instruction``). LLM errors propagate: the question's stage
fails with the message (the client has already retried transient failures).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from qa.pipeline.core import roles
from qa.pipeline.core.protocols import LLM, Embedder
from qa.pipeline.core.text import content_words, cosine_matrix, id_tokens
from qa.pipeline.core.types import SourceSentence
from qa.pipeline.drafting.generation import DraftSentence
from qa.pipeline.drafting.prompts import citation_messages, looks_like_instruction, number_context

# "none" keeps whatever the generator cited (the report's LLM-only configuration).
CitationStrategy = Literal["overlap", "embedding", "llm", "none"]
STRATEGIES: tuple[str, ...] = ("overlap", "embedding", "llm", "none")


@dataclass(frozen=True)
class CitationResult:
    sentences: tuple[DraftSentence, ...]
    prompt: tuple[dict[str, str], ...] = ()
    raw_output: str = ""
    dropped_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def attach_citations(
    question: str,
    sentences: Sequence[DraftSentence],
    context: Sequence[SourceSentence],
    *,
    strategy: CitationStrategy,
    embedder: Embedder | None = None,
    llm: LLM | None = None,
    replace_existing: bool = False,
    max_citations: int = 2,
    similarity_threshold: float = 0.5,
) -> CitationResult:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown citation strategy {strategy!r}; expected one of {STRATEGIES}")
    notes: list[str] = []
    # A heading or question is never the evidence for a claim (roles.quotable), and an
    # instruction-like sentence is an attack, never evidence.
    context = [s for s in context if roles.quotable(s) and not looks_like_instruction(s.text)]
    cleaned = [
        replace(
            s,
            citations=tuple(
                c for c in s.citations if roles.quotable(c) and not looks_like_instruction(c.text)
            ),
        )
        for s in sentences
    ]
    if cleaned != list(sentences):
        notes.append("citations of headings, questions or instruction-like sentences removed")
    sentences = cleaned
    todo = [i for i, s in enumerate(sentences) if replace_existing or not s.citations]
    if strategy == "none" or not todo or not context:
        return CitationResult(tuple(sentences), notes=tuple(notes))
    texts = [sentences[i].text for i in todo]
    result = CitationResult(())
    if strategy == "overlap":
        found = [cite_by_overlap(text, context, max_citations=max_citations) for text in texts]
    elif strategy == "embedding":
        if embedder is None:
            raise ValueError("the embedding citation strategy needs an embedder")
        found = cite_by_embedding(
            texts, context, embedder, threshold=similarity_threshold, max_citations=max_citations
        )
    else:
        if llm is None:
            raise ValueError("the llm citation strategy needs an LLM")
        found, result = cite_by_llm(question, texts, context, llm)
    updated = list(sentences)
    for index, cited in zip(todo, found, strict=True):
        updated[index] = replace(updated[index], citations=tuple(cited))
    return replace(result, sentences=tuple(updated), notes=tuple(notes) + result.notes)


def cite_by_overlap(
    text: str, context: Sequence[SourceSentence], *, max_citations: int = 2
) -> tuple[SourceSentence, ...]:
    """The report's baseline: the context sentence(s) sharing the most content words.

    Ties at the top count are all cited (up to ``max_citations``), earlier first.
    """
    answer_words = content_words(text)
    counts = [len(answer_words & content_words(s.text)) for s in context]
    top = max(counts, default=0)
    if top == 0:
        return ()
    return tuple(s for s, count in zip(context, counts, strict=True) if count == top)[:max_citations]


def cite_by_embedding(
    texts: Sequence[str],
    context: Sequence[SourceSentence],
    embedder: Embedder,
    *,
    threshold: float = 0.5,
    max_citations: int = 2,
    tie_margin: float = 0.02,
    second_margin: float = 0.05,
) -> list[tuple[SourceSentence, ...]]:
    """Align each answer sentence to its most similar context sentence(s).

    Near-ties (within ``tie_margin``) go to the sentence sharing more content
    words, because paraphrase-level similarity cannot tell "4.6 million" from
    "3.2 million" but the words can. A second citation is added only when it is
    almost as similar and contributes answer words the first one lacks, as when
    an answer sentence merges two source sentences.
    """
    vectors = np.asarray(embedder.encode(list(texts) + [s.text for s in context]))
    similarity = cosine_matrix(vectors[: len(texts)], vectors[len(texts) :])
    context_words = [content_words(s.text) for s in context]
    results = []
    for row, sims in enumerate(similarity):
        answer_words = content_words(texts[row])
        best_value = float(sims.max())
        if best_value < threshold:
            results.append(())
            continue
        near = [j for j in range(len(context)) if sims[j] >= best_value - tie_margin]
        first = max(near, key=lambda j: (len(answer_words & context_words[j]), sims[j], -j))
        chosen = [first]
        covered = answer_words & context_words[first]
        for j in np.argsort(-sims, kind="stable"):
            j = int(j)
            if len(chosen) >= max_citations or sims[j] < max(threshold, best_value - second_margin):
                break
            adds = (answer_words & context_words[j]) - covered
            if j not in chosen and adds:
                chosen.append(j)
                covered |= adds
        results.append(tuple(context[j] for j in sorted(chosen)))
    return results


_ANSWER_LINE = re.compile(r"^\W*A?\s*(\d+)\s*[:.)\-]\s*(.*)$", re.IGNORECASE)


def cite_by_llm(
    question: str, texts: Sequence[str], context: Sequence[SourceSentence], llm: LLM
) -> tuple[list[tuple[SourceSentence, ...]], CitationResult]:
    """Ask the LLM (temperature 0) which numbered sentences support each answer sentence."""
    numbered = number_context(context)
    messages = citation_messages(question, texts, numbered)
    raw = llm.complete(messages, temperature=0.0, max_tokens=40 + 16 * len(texts))
    by_number = numbered.by_number
    found: list[list[SourceSentence]] = [[] for _ in texts]
    dropped: list[str] = []
    matched_lines = 0
    for line in raw.splitlines():
        match = _ANSWER_LINE.match(line)
        if not match or not 1 <= int(match.group(1)) <= len(texts):
            continue
        matched_lines += 1
        for raw_id, number in id_tokens(re.sub(r"[\[\]()]", " ", match.group(2)).strip()):
            if number in by_number:
                found[int(match.group(1)) - 1].append(by_number[number])
            else:
                dropped.append(raw_id)
    notes = []
    if matched_lines == 0:
        notes.append("no 'A1: ids' lines in the citation reply")
    if dropped:
        notes.append(f"dropped citation ids not in the context: {', '.join(dropped)}")
    cited = [tuple(dict.fromkeys(group)) for group in found]
    return cited, CitationResult((), tuple(messages), raw, tuple(dropped), tuple(notes))
