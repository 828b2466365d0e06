"""Parsing an LLM's cited answer: free text (ids in brackets, bunched at the end, list markers,
preambles, JSON) into sentences with the source sentences they cite. ``llm_generation.LLMGenerator``
reads its model's reply with ``parse_generation_output``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from qa.pipeline.core.lexicon import (
    BRACKET_ID_LABELS,
    CITATION_LABEL_WORDS,
    NEGATED_AUXILIARIES,
    REFUSING_SOURCE_NOUNS,
    SOURCES_LACK_VERBS,
    UNABLE_VERBS,
    alternation,
)
from qa.pipeline.core.text import content_words, id_tokens, split_sentences
from qa.pipeline.core.types import REFUSAL_TEXT, SourceSentence
from qa.pipeline.drafting.prompts import NumberedContext

_ID_LIST = r"(?:[Ss](?:entence)?\s*)?\d+(?:\s*(?:,|;|and|&|-|\u2013)\s*(?:[Ss](?:entence)?\s*)?\d+)*"
_BRACKET_IDS = re.compile(rf"\[\s*({alternation(BRACKET_ID_LABELS)}?\s*:?\s*{_ID_LIST})\s*\]", re.IGNORECASE)
_TRAILING_PAREN_IDS = re.compile(rf"\(\s*({_ID_LIST})\s*\)(?=\s*[.!?]?\s*$)")
_LEADING_IDS = re.compile(rf"^\s*\[\s*({_ID_LIST})\s*\]\s*(.+)$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+")
_ANSWER_LABEL = re.compile(r"^\s*(?:final\s+)?(?:answer|response)\s*:\s*", re.IGNORECASE)
_CITATION_LABEL = re.compile(alternation(CITATION_LABEL_WORDS), re.I)
_SOFT_REFUSAL = re.compile(
    rf"\b{alternation(REFUSING_SOURCE_NOUNS)}\s+(?:does|do)\s+not\s+"
    rf"{alternation(SOURCES_LACK_VERBS)}\b|"
    rf"\bI\s+{alternation(NEGATED_AUXILIARIES)}\s+{alternation(UNABLE_VERBS)}\b|"
    r"\bnot\s+enough\s+information\b|^\s*insufficient evidence\b",
    re.IGNORECASE,
)
_REFUSAL_KEY = " ".join(REFUSAL_TEXT.lower().split())


@dataclass(frozen=True)
class ParsedOutput:
    sentences: tuple[tuple[str, tuple[SourceSentence, ...]], ...]
    refused: bool
    dropped_ids: tuple[str, ...]
    notes: tuple[str, ...]


def parse_generation_output(raw: str, context: NumberedContext, *, max_sentences: int = 6) -> ParsedOutput:
    """Turn free LLM text into (sentence, cited sentences) pairs.

    Tolerates [3], [3, 5], [S3], (3), ids bunched at the end, list markers,
    preambles and JSON. Ids outside the context are dropped and reported, never
    guessed at: a wrong citation is worse than none, which the citation stage
    can still fill in.
    """
    notes: list[str] = []
    text = re.sub(r"^```\w*\s*|\s*```\s*$", "", raw.strip())
    if not text:
        return ParsedOutput((), False, (), ("empty output",))
    if text[0] in "{[":
        converted = _json_to_prose(text)
        if converted is not None:
            notes.append("JSON output read as prose")
            text = converted
    by_number = context.by_number
    items: list[tuple[str, list[int]]] = []
    bunched: list[int] = []
    dropped: list[str] = []
    for piece, tokens in _pieces_with_ids(text):
        valid = []
        for raw_token, number in tokens:
            (valid if number in by_number else dropped).append(number if number in by_number else raw_token)
        if not re.search(r"[A-Za-z0-9]", _CITATION_LABEL.sub("", piece)):
            bunched.extend(valid)
            continue
        items.append((piece, list(dict.fromkeys(valid))))
    if dropped:
        notes.append(f"dropped citation ids not in the context: {', '.join(dropped)}")

    any_citation = bunched or any(ids for _, ids in items)
    refusals = [i for i, (body, _) in enumerate(items) if _is_refusal(body)]
    if refusals and not any_citation:
        return ParsedOutput((), True, tuple(dropped), tuple(notes))
    if refusals:
        notes.append("refusal sentence dropped from an otherwise cited answer")
        items = [item for i, item in enumerate(items) if i not in refusals]
    if len(items) > 1 and items[0][0].endswith(":") and not items[0][1]:
        notes.append(f"preamble dropped: {items[0][0]}")
        items = items[1:]
    if len(items) >= 2 and not any(ids for _, ids in items[:-1]) and len(items[-1][1]) >= 2:
        bunched = items[-1][1] + bunched
        items[-1] = (items[-1][0], [])
    if bunched:
        notes.append("citation ids given together were shared out by word overlap")
        items = _share_bunched_ids(items, list(dict.fromkeys(bunched)), by_number)
    if len(items) > max_sentences:
        notes.append(f"kept the first {max_sentences} of {len(items)} sentences")
        items = items[:max_sentences]
    if not items:
        notes.append("no answer sentences in the output")
    sentences = tuple((body, tuple(by_number[n] for n in ids)) for body, ids in items)
    return ParsedOutput(sentences, False, tuple(dropped), tuple(notes))


def _is_refusal(body: str) -> bool:
    return _REFUSAL_KEY in " ".join(body.lower().split()) or bool(_SOFT_REFUSAL.search(body))


def _pieces_with_ids(text: str) -> list[tuple[str, list[tuple[str, int]]]]:
    lines = [_ANSWER_LABEL.sub("", _LIST_MARKER.sub("", line)) for line in text.splitlines()]
    lines = [line for line in lines if line.strip()]
    if lines and all(_LEADING_IDS.match(line) for line in lines):
        # "[1] sentence" per line: ids lead instead of trail.
        out = []
        for line in lines:
            match = _LEADING_IDS.match(line)
            out.append((_tidy(match.group(2)), id_tokens(match.group(1))))
        return out
    out = []
    for piece in split_sentences("\n".join(lines)):
        tokens = [token for match in _BRACKET_IDS.finditer(piece) for token in id_tokens(match.group(1))]
        body = _BRACKET_IDS.sub(" ", piece)
        trailing = _TRAILING_PAREN_IDS.search(body)
        paren_ids = id_tokens(trailing.group(1)) if trailing else []
        # "(2011)" ending a sentence is prose; only small numbers or S-ids read as citations.
        if paren_ids and (re.search(r"[Ss]", trailing.group(1)) or max(n for _, n in paren_ids) < 1000):
            tokens.extend(paren_ids)
            body = body[: trailing.start()] + body[trailing.end() :]
        out.append((_tidy(body), tokens))
    return out


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()))
    return re.sub(r"([.!?])[.!?]+$", r"\1", text).strip()


def _share_bunched_ids(items, bunched: list[int], by_number) -> list[tuple[str, list[int]]]:
    shared = []
    for body, ids in items:
        if not ids:
            body_words = content_words(body)
            overlap = {n: len(body_words & content_words(by_number[n].text)) for n in bunched}
            top = max(overlap.values(), default=0)
            ids = [n for n in bunched if overlap[n] == top][:2] if top > 0 else []
        shared.append((body, ids))
    return shared


_JSON_TEXT_KEYS = ("answer", "sentence", "text", "response")
_JSON_ID_KEYS = ("citations", "ids", "sources", "cited")


def _json_to_prose(text: str) -> str | None:
    """Prose with [ids] from JSON the model sent instead; None when it is not JSON at all."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    items = data if isinstance(data, list) else [data]
    parts = []
    for item in items:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict):
            if isinstance(item.get("sentences"), list):
                parts.append(_json_to_prose(json.dumps(item["sentences"])) or "")
                continue
            body = next((item[k] for k in _JSON_TEXT_KEYS if isinstance(item.get(k), str)), "")
            ids = next((item[k] for k in _JSON_ID_KEYS if isinstance(item.get(k), list)), [])
            if body:
                cited = ", ".join(str(i) for i in ids if isinstance(i, (int, str)))
                parts.append(f"{body.strip()} [{cited}]" if cited else body.strip())
    return "\n".join(p for p in parts if p)
