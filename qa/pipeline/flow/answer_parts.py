"""The answering stage's parts, built once from a preset's ``AnswerConfig``: the generator that
drafts, the citer that attaches source sentences, the verifier that labels claims. ``factory``
builds them for a pipeline; ``answering`` uses them in each attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from qa.pipeline.checks.verification import LexicalVerifier, LLMVerifier, Verifier
from qa.pipeline.config.answering_config import AnswerConfig
from qa.pipeline.core.protocols import LLM, Embedder
from qa.pipeline.core.types import SourceSentence
from qa.pipeline.drafting.citations import CitationResult, CitationStrategy, attach_citations
from qa.pipeline.drafting.generation import (
    DraftSentence,
    ExtractiveGenerator,
    ExtractiveSettings,
    Generator,
    overlap_generator,
)
from qa.pipeline.drafting.llm_generation import LLMGenerator


@dataclass(frozen=True)
class Citer:
    """Attaches source sentences to draft sentences with one strategy and its settings."""

    strategy: CitationStrategy
    embedder: Embedder | None
    llm: LLM | None = None
    replace_existing: bool = False
    max_citations: int = 2
    similarity_threshold: float = 0.5

    def cite(
        self, question: str, sentences: Sequence[DraftSentence], context: Sequence[SourceSentence]
    ) -> CitationResult:
        return attach_citations(
            question,
            sentences,
            context,
            strategy=self.strategy,
            embedder=self.embedder,
            llm=self.llm,
            replace_existing=self.replace_existing,
            max_citations=self.max_citations,
            similarity_threshold=self.similarity_threshold,
        )


@dataclass(frozen=True)
class AnswerParts:
    config: AnswerConfig
    generator: Generator
    citer: Citer
    verifier: Verifier


def build_generator(config: AnswerConfig, embedder: Embedder, llm: LLM | None) -> Generator:
    if config.generator == "extractive":
        return ExtractiveGenerator(
            embedder,
            ExtractiveSettings(
                min_sentences=config.extractive_min_sentences,
                max_sentences=config.extractive_max_sentences,
                min_relevance=config.extractive_min_relevance,
                relative_floor=config.extractive_relative_floor,
                require_quantity=config.require_quantity_for_quantity_questions,
                focus_document=config.extractive_focus_document,
                context_weight=config.extractive_context_weight,
                same_time=config.extractive_same_time,
                padding_floor=config.extractive_padding_floor,
                question_shape=config.extractive_question_shape,
                focus_section=config.extractive_focus_section,
                section_max_sentences=config.extractive_section_max_sentences,
                section_context=config.extractive_section_context,
                subject_documents=config.subject_documents,
            ),
        )
    if config.generator == "overlap":
        return overlap_generator(embedder, sentences=config.extractive_max_sentences)
    if config.generator == "llm":
        return LLMGenerator(
            _need_llm(llm, "the llm generator"),
            embedder=embedder,
            max_context_sentences=config.llm_max_context_sentences,
            subject_documents=config.subject_documents,
        )
    raise ValueError(f"unknown generator {config.generator!r}")


def build_verifier(config: AnswerConfig, embedder: Embedder, llm: LLM | None) -> Verifier:
    if config.verifier == "lexical":
        return LexicalVerifier(embedder)
    if config.verifier == "llm":
        return LLMVerifier(_need_llm(llm, "the llm verifier"))
    raise ValueError(f"unknown verifier {config.verifier!r}")


def build_citer(config: AnswerConfig, embedder: Embedder, llm: LLM | None) -> Citer:
    return Citer(
        strategy=config.citation_strategy,
        embedder=embedder,
        llm=llm,
        replace_existing=config.replace_generated_citations,
        max_citations=config.max_citations_per_sentence,
        similarity_threshold=config.citation_similarity_threshold,
    )


def build_answer_parts(config: AnswerConfig, embedder: Embedder, llm: LLM | None) -> AnswerParts:
    if config.needs_llm() and llm is None:
        stages = [f"{k}={v}" for k, v in asdict(config).items() if v == "llm"]
        raise ValueError(f"{', '.join(stages)} needs an LLM client")
    return AnswerParts(
        config=config,
        generator=build_generator(config, embedder, llm),
        citer=build_citer(config, embedder, llm),
        verifier=build_verifier(config, embedder, llm),
    )


def _need_llm(llm: LLM | None, what: str) -> LLM:
    if llm is None:
        raise ValueError(f"{what} needs an LLM client")
    return llm
