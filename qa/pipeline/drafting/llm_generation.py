"""The LLM-written draft: the LLM answers over the passages' numbered sentences and cites them by
id (``generation_output`` parses its reply). Drafts, their reasons and the sentences a window holds
are ``generation``'s, shared with the extractive generator.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from qa.pipeline.core.protocols import LLM, Embedder
from qa.pipeline.core.text import content_words, cosine_matrix
from qa.pipeline.core.types import ScoredPassage, SourceSentence
from qa.pipeline.drafting.generation import (
    GENERATOR_DECLINED,
    NO_EVIDENCE,
    Draft,
    DraftSentence,
    no_subject_note,
    passage_sentences,
)
from qa.pipeline.drafting.generation_output import parse_generation_output
from qa.pipeline.drafting.prompts import generation_messages, number_context
from qa.pipeline.reading.subjects import documents_on_subject


class LLMGenerator:
    """Asks the LLM for a cited answer over the passages' numbered sentences.

    Long passages (whole Factbook entries) are cut to ``max_context_sentences``
    most question-relevant sentences, kept in document order, because prompt
    length dominates local-model latency.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        embedder: Embedder | None = None,
        max_context_sentences: int = 60,
        max_tokens: int = 400,
        max_sentences: int = 6,
        subject_documents: bool = False,
    ) -> None:
        self.llm = llm
        self.subject_documents = subject_documents  # as ``ExtractiveSettings.subject_documents``
        self.embedder = embedder
        self.max_context_sentences = max_context_sentences
        self.max_tokens = max_tokens
        self.max_sentences = max_sentences

    def generate(self, question: str, passages: Sequence[ScoredPassage]) -> Draft:
        sentences = passage_sentences(passages)
        on_subject = documents_on_subject(question, sentences) if self.subject_documents else None
        if on_subject is not None:
            sentences = [s for s in sentences if s.document_id in on_subject]
            if not sentences:
                return Draft((), (), notes=(no_subject_note(question),))
        sentences = self._fit_context(question, sentences)
        if not sentences:
            return Draft((), (), reason=NO_EVIDENCE, notes=("no evidence sentences",))
        context = number_context(sentences)
        messages = generation_messages(question, context)
        raw = self.llm.complete(messages, temperature=0.0, max_tokens=self.max_tokens)
        parsed = parse_generation_output(raw, context, max_sentences=self.max_sentences)
        return Draft(
            sentences=tuple(DraftSentence(text, cited) for text, cited in parsed.sentences),
            context=context.sentences,
            reason=GENERATOR_DECLINED if parsed.refused else "",
            prompt=tuple(messages),
            raw_output=raw,
            dropped_citation_ids=parsed.dropped_ids,
            notes=parsed.notes,
        )

    def _fit_context(self, question: str, sentences: list[SourceSentence]) -> list[SourceSentence]:
        if len(sentences) <= self.max_context_sentences:
            return sentences
        question_words = content_words(question)
        relevance = np.array([len(question_words & content_words(s.text)) for s in sentences], dtype=float)
        if self.embedder is not None:
            vectors = np.asarray(self.embedder.encode([question] + [s.text for s in sentences]))
            relevance = relevance / max(len(question_words), 1) + cosine_matrix(vectors[:1], vectors[1:])[0]
        keep = set(np.argsort(-relevance, kind="stable")[: self.max_context_sentences].tolist())
        return [s for i, s in enumerate(sentences) if i in keep]
