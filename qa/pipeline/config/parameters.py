"""The parameters an analyst may set on top of a preset: named, typed, bounded, checked together.

A team preset is a built-in preset (its ``base``) plus some of these
parameters; an ask request may set them too. ``apply_parameters`` returns
the configuration the run uses, with the parameters recorded on it, or
raises ``InvalidParameters`` saying which value is wrong and why.

The choices come from the pipeline's own type annotations (the retrieval
methods of ``RetrievalConfig.method``, the rerankers of ``PipelineConfig``,
...), so a retriever added there is offered here, in the API and in the
browser with no further code.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from qa.pipeline.checks import reply_rules
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.config.presets import PipelineConfig
from qa.pipeline.search.chunking import ChunkerConfig
from qa.pipeline.search.retrieval import RetrievalConfig
from qa.pipeline.search.retrievers import BASE_RETRIEVERS, RETRIEVER_NAMES

Section = Literal["retrieval", "answer", "pipeline", "chunker"]

# What a chunker cuts by default when a request names only its kind: the chunkers bench/retrievers.py
# compares (sentences: the stored chunks' 8/2; characters; words).
CHUNKER_DEFAULTS: dict[str, ChunkerConfig] = {
    "sentences": ChunkerConfig("sentences", 8, 2),
    "recursive": ChunkerConfig("recursive", 1000, 200),
    "tokens": ChunkerConfig("tokens", 150, 50),
}


class InvalidParameters(ValueError):
    """A parameter that does not exist, a value out of range, or values that contradict each other."""


def _choices(cls: type, field: str) -> tuple[str, ...]:
    """The values a Literal-typed field of a pipeline dataclass accepts."""
    choices = typing.get_args(typing.get_type_hints(cls)[field])
    choices = tuple(choice for choice in choices if isinstance(choice, str))
    if not choices:
        raise TypeError(f"{cls.__name__}.{field} is not a Literal of names; parameters cannot offer it")
    return choices


@dataclass(frozen=True)
class Parameter:
    name: str  # as the API, the forms and team presets spell it
    section: Section  # which part of PipelineConfig holds it
    field: str  # the dataclass field it sets
    # str (one of ``choices``), tuple (two different ones of ``choices``), list (any of ``choices``,
    # each once), int or float
    kind: type
    label: str
    help: str
    choices: tuple[str, ...] = ()
    minimum: float = float("-inf")
    maximum: float = float("inf")
    # Names a list parameter once offered: accepted and dropped, so what was saved with one loads.
    retired: tuple[str, ...] = ()

    def check(self, value: object) -> object:
        """The value, typed; InvalidParameters naming this parameter when it does not fit."""
        if self.kind is tuple:
            pair = tuple(value) if isinstance(value, list | tuple) else ()
            if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(self.choices):
                raise InvalidParameters(
                    f"{self.name}: {value!r} is not two different ones of {', '.join(self.choices)}."
                )
            return pair
        if self.kind is list:
            names = list(value) if isinstance(value, list | tuple) else None
            known = set(self.choices) | set(self.retired)
            if names is None or len(set(names)) != len(names) or not set(names) <= known:
                raise InvalidParameters(
                    f"{self.name}: {value!r} is not a list of different ones of {', '.join(self.choices)}."
                )
            return tuple(name for name in self.choices if name in names)  # in the choices' order
        if self.kind is str:
            if value not in self.choices:
                raise InvalidParameters(f"{self.name}: {value!r} is not one of {', '.join(self.choices)}.")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidParameters(f"{self.name}: {value!r} is not a number.")
        if self.kind is int and value != int(value):
            raise InvalidParameters(f"{self.name}: {value!r} is not a whole number.")
        value = self.kind(value)
        if not self.minimum <= value <= self.maximum:
            raise InvalidParameters(f"{self.name}: {value} is outside {self.minimum:g}..{self.maximum:g}.")
        return value


# Upper bounds keep one request from making a worker score thousands of passages.
PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        "retriever", "retrieval", "method", str, "Retriever",
        "Which first-stage retriever ranks the passages (hybrid: two of them fused).",
        choices=RETRIEVER_NAMES,
    ),
    Parameter(
        "hybrid_of", "retrieval", "hybrid_of", tuple, "Hybrid of",
        "The two retrievers a hybrid fuses, in order (alpha weighs the second).",
        choices=BASE_RETRIEVERS,
    ),
    Parameter(
        "unit", "retrieval", "unit", str, "Passage unit",
        "What is retrieved: whole documents, chunks of sentences, or single sentences.",
        choices=_choices(RetrievalConfig, "unit"),
    ),
    Parameter(
        "fusion", "retrieval", "fusion", str, "Fusion",
        "How a hybrid retriever combines its retrievers: min-max interpolation or reciprocal rank fusion.",
        choices=_choices(RetrievalConfig, "fusion"),
    ),
    Parameter(
        "alpha", "retrieval", "alpha", float, "Alpha",
        "Min-max fusion's weight of the hybrid's second retriever (for bm25 + dense: the dense "
        "weight); 0 is the first alone, 1 the second alone.",
        minimum=0.0, maximum=1.0,
    ),
    Parameter(
        "rrf_k", "retrieval", "rrf_k", int, "RRF k",
        "Reciprocal rank fusion's constant; larger values flatten the weight of the top ranks.",
        minimum=1, maximum=1000,
    ),
    Parameter(
        "candidates", "retrieval", "candidates", int, "Candidates per retriever",
        "How many passages each retriever returns before fusion (raised to top-k when below it).",
        minimum=1, maximum=200,
    ),
    Parameter(
        "chunker", "chunker", "kind", str, "Chunker",
        "Cut the corpus's documents into chunks another way for this preset (unit chunk only): "
        "sentence windows, recursive character splitting or token windows. Left out: the chunks the "
        "corpus was stored with. The recut chunks are built once per corpus version in each worker.",
        choices=_choices(ChunkerConfig, "kind"),
    ),
    Parameter(
        "chunk_size", "chunker", "size", int, "Chunk size",
        "Sentences, characters or words per chunk, as the chunker counts "
        "(default 8, 1000 and 150).",
        minimum=1, maximum=5000,
    ),
    Parameter(
        "chunk_overlap", "chunker", "overlap", int, "Chunk overlap",
        "How much consecutive chunks share, in the chunker's unit; below the chunk size "
        "(default 2, 200 and 50).",
        minimum=0, maximum=4999,
    ),
    Parameter(
        "rerank_depth", "retrieval", "rerank_depth", int, "Rerank depth",
        "How many fused candidates the reranker reorders (0: none).",
        minimum=0, maximum=200,
    ),
    Parameter(
        "top_k", "retrieval", "top_k", int, "Top-k passages",
        "How many of the best passages answering may read, across its attempts.",
        minimum=1, maximum=50,
    ),
    Parameter(
        "reranker", "pipeline", "reranker", str, "Reranker",
        "Reorders the best candidates: the evidence reranker, a cross-encoder (QA_RERANKER_MODEL; the "
        "evidence reranker stands in without one), or none.",
        choices=_choices(PipelineConfig, "reranker"),
    ),
    Parameter(
        "date_weight", "pipeline", "date_weight", float, "Date preference",
        "How many places a question naming a date or period (\"mid-2022\", \"in July 2022\") moves "
        "passages of documents published then up the ranking; 0 is off.",
        minimum=0.0, maximum=50.0,
    ),
    Parameter(
        "generator", "answer", "generator", str, "Generator",
        "Writes the answer: extractive (source sentences), overlap (the report's baseline) or an LLM.",
        choices=_choices(AnswerConfig, "generator"),
    ),
    Parameter(
        "citations", "answer", "citation_strategy", str, "Citations",
        "How answer sentences get their citations.",
        choices=_choices(AnswerConfig, "citation_strategy"),
    ),
    Parameter(
        "verifier", "answer", "verifier", str, "Verifier",
        "Checks that the cited sentences support each answer sentence.",
        choices=_choices(AnswerConfig, "verifier"),
    ),
    Parameter(
        "max_attempts", "answer", "max_attempts", int, "Attempts",
        "Generate-cite-verify rounds before giving up, each over the next passages.",
        minimum=1, maximum=10,
    ),
    Parameter(
        "passages_per_attempt", "answer", "passages_per_attempt", int, "Passages per attempt",
        "How many passages one attempt reads.",
        minimum=1, maximum=20,
    ),
    Parameter(
        "max_answer_sentences", "answer", "extractive_max_sentences", int, "Answer sentences at most",
        "The most source sentences an extractive answer quotes (default 4; in default an answer from "
        "under a heading, as in FAQs and READMEs, holds at most 3). Fewer suit documents where one "
        "sentence answers, more those whose answers span several (docs/answering.md).",
        minimum=1, maximum=4,
    ),
    Parameter(
        "rules_off", "answer", "rules_off", list, "Reply rules off",
        "Reply rules this preset skips, by name: a rule switched off never decides, so the next one "
        "does (docs/reply.md lists what each rule decides and its measured effect).",
        choices=reply_rules.RULE_NAMES, retired=tuple(reply_rules.DELETED_RULES),
    ),
    Parameter(
        "answer_confidence", "answer", "answer_confidence", float, "Answer confidence",
        "An answer whose calibrated confidence is below this is shown marked \"may not answer your "
        "question\" (outcome low_confidence) rather than as an answer.",
        minimum=0.0, maximum=1.0,
    ),
    Parameter(
        "withhold_confidence", "answer", "withhold_confidence", float, "Withhold below",
        "An answer whose calibrated confidence is below this is not shown at all (outcome refused); "
        "0 leaves refusing to the pipeline. At most answer_confidence.",
        minimum=0.0, maximum=1.0,
    ),
)  # fmt: skip
BY_NAME: dict[str, Parameter] = {parameter.name: parameter for parameter in PARAMETERS}
RETRIEVAL_PARAMETERS = tuple(p.name for p in PARAMETERS if p.section in ("retrieval", "chunker")) + (
    "reranker",
)


def check_parameters(values: Mapping[str, object]) -> dict[str, object]:
    """Each value checked on its own (names, types, ranges); ``apply_parameters`` checks them together."""
    unknown = sorted(set(values) - set(BY_NAME))
    if unknown:
        raise InvalidParameters(
            f"Unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"use {', '.join(BY_NAME)}."
        )
    return {name: BY_NAME[name].check(value) for name, value in values.items() if value is not None}


def described(values: Mapping[str, object]) -> list[tuple[str, str]]:
    """``values`` in PARAMETERS order as (name, text) pairs: a pair of retrievers reads "bm25+dense"."""
    return [(p.name, _text(p, values[p.name])) for p in PARAMETERS if p.name in values]


def _text(parameter: Parameter, value: object) -> str:
    if parameter.kind is tuple:
        return "+".join(value)
    if parameter.kind is list:
        return ", ".join(value) or "none"
    return str(value)


def parameter_values(config: PipelineConfig) -> dict[str, object]:
    """Every parameter's value in ``config`` (retrieval ones left out when it does not retrieve)."""
    values = {}
    for parameter in PARAMETERS:
        holder = _holder(config, parameter.section)
        if holder is not None:
            values[parameter.name] = getattr(holder, parameter.field)
    return values


def _holder(config: PipelineConfig, section: Section):
    if section == "chunker":
        # None (the corpus's stored chunks) has no values to show.
        return config.retrieval.chunker if config.retrieval is not None else None
    return {"retrieval": config.retrieval, "answer": config.answer, "pipeline": config}[section]


def apply_parameters(
    config: PipelineConfig,
    values: Mapping[str, object],
    *,
    name: str | None = None,
    description: str | None = None,
) -> PipelineConfig:
    """``config`` with ``values`` set; the values also recorded as the config's ``parameters``."""
    values = check_parameters(values)
    named = {
        "name": name or config.name,
        "description": description or config.description,
        "base": config.base or config.name,
    }
    if not values:
        return replace(config, **named)
    if config.retrieval is None:
        given = [n for n in RETRIEVAL_PARAMETERS if n in values]
        if given:
            raise InvalidParameters(
                f"Preset {config.name!r} does not retrieve (the LLM answers alone), so "
                f"{', '.join(given)} cannot be set; choose a preset that retrieves."
            )
    fields: dict[Section, dict[str, object]] = {"retrieval": {}, "answer": {}, "pipeline": {}, "chunker": {}}
    for parameter_name, value in values.items():
        parameter = BY_NAME[parameter_name]
        fields[parameter.section][parameter.field] = value
    retrieval = config.retrieval
    if retrieval is not None:
        retrieval = _retrieval_with(retrieval, fields["retrieval"], values)
        if fields["chunker"]:
            retrieval = replace(retrieval, chunker=_chunker_with(retrieval, fields["chunker"]))
        if fields["pipeline"].get("reranker", config.reranker) != "none" and retrieval.rerank_depth == 0:
            if "rerank_depth" in values:
                raise InvalidParameters(
                    "rerank_depth: 0 leaves the reranker nothing to reorder; set 1 or more."
                )
            # A preset without reranking (rerank_depth 0) given a reranker reorders every candidate.
            retrieval = replace(retrieval, rerank_depth=retrieval.candidates)
    try:
        answer = replace(config.answer, **fields["answer"])
    except ValueError as exc:
        raise InvalidParameters(str(exc)) from exc
    return replace(
        config,
        **named,
        retrieval=retrieval,
        answer=answer,
        parameters={**config.parameters, **values},
        **fields["pipeline"],
    )


def _retrieval_with(
    retrieval: RetrievalConfig, changes: dict[str, object], values: Mapping[str, object]
) -> RetrievalConfig:
    if "top_k" in changes and "candidates" not in changes:
        changes = {**changes, "candidates": max(retrieval.candidates, int(changes["top_k"]))}
    try:
        result = replace(retrieval, **changes)
    except ValueError as exc:
        raise InvalidParameters(str(exc)) from exc
    hybrid = result.method == "hybrid"
    if "hybrid_of" in values and not hybrid:
        raise InvalidParameters(
            f"hybrid_of names a hybrid's two retrievers; the retriever is {result.method}."
        )
    if "fusion" in values and not hybrid:
        raise InvalidParameters(
            f"fusion combines the retrievers of a hybrid; the retriever is {result.method}."
        )
    if "alpha" in values and not (hybrid and result.fusion == "minmax"):
        raise InvalidParameters(
            "alpha weighs a hybrid's second retriever in min-max fusion; "
            "it needs retriever hybrid, fusion minmax "
            f"(here: retriever {result.method}" + (f", fusion {result.fusion})." if hybrid else ").")
        )
    if "rrf_k" in values and not (hybrid and result.fusion == "rrf"):
        raise InvalidParameters("rrf_k applies to reciprocal rank fusion: retriever hybrid with fusion rrf.")
    if result.top_k > result.candidates and not hybrid:
        raise InvalidParameters(
            f"top_k {result.top_k} is more than the {result.candidates} candidates the retriever returns; "
            "raise candidates too."
        )
    return result


def _chunker_with(retrieval: RetrievalConfig, changes: dict[str, object]) -> ChunkerConfig:
    """The chunker ``changes`` describe on top of the preset's (a new kind starts from its defaults)."""
    if retrieval.unit != "chunk":
        raise InvalidParameters(
            f"chunker, chunk_size and chunk_overlap cut the corpus into chunks; they need unit chunk "
            f"(here: unit {retrieval.unit})."
        )
    current = retrieval.chunker or CHUNKER_DEFAULTS["sentences"]
    kind = str(changes.get("kind", current.kind))
    base = current if kind == current.kind else CHUNKER_DEFAULTS[kind]
    size = int(changes.get("size", base.size))
    # A size given alone keeps the overlap where it still fits, else a quarter of the new size.
    overlap = int(changes.get("overlap", base.overlap if base.overlap < size else size // 4))
    if overlap >= size:
        raise InvalidParameters(
            f"chunk_overlap {overlap} must be below chunk_size {size} (the {kind} chunker's unit); "
            "lower the overlap or raise the size."
        )
    return ChunkerConfig(kind, size, overlap)  # type: ignore[arg-type]
