"""The answering stage's settings: one frozen value per preset, stored with every run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from qa.pipeline.checks.reply import DEFAULT_ANSWER_CONFIDENCE, DEFAULT_WITHHOLD_CONFIDENCE
from qa.pipeline.checks.reply_rules import checked_rules_off
from qa.pipeline.drafting.citations import CitationStrategy


@dataclass(frozen=True)
class AnswerConfig:
    generator: Literal["extractive", "overlap", "llm"] = "extractive"  # overlap: the report's baseline
    citation_strategy: CitationStrategy = "embedding"
    # Extractive citations are exact, and LLM-given ids are checked against the
    # context, so by default citation extraction only fills sentences without any.
    replace_generated_citations: bool = False
    verifier: Literal["lexical", "llm"] = "lexical"
    max_attempts: int = 3
    passages_per_attempt: int = 1
    # Refusal thresholds. The retrieval confidence scale belongs to the caller's
    # retriever, so the check is off until the caller calibrates it.
    min_retrieval_confidence: float | None = None
    refuse_when_nothing_supported: bool = True
    retry_after_refusal: bool = False  # a refusing generator usually means the corpus lacks the answer
    accept_partial: bool = False  # True: PARTIAL sentences count as verified
    # Stage knobs.
    citation_similarity_threshold: float = 0.5
    max_citations_per_sentence: int = 2
    extractive_min_sentences: int = 2
    extractive_max_sentences: int = 4
    extractive_min_relevance: float = 0.0
    extractive_relative_floor: float = 0.6  # a sentence joins when its relevance is this share of the best
    extractive_focus_document: bool = False  # answer from the top-ranked document only
    extractive_context_weight: float = 0.0  # the preceding sentence's share of a sentence's meaning
    extractive_same_time: bool = False  # no sentence naming only other times than the question's
    extractive_padding_floor: float = 0.0  # a sentence pads the answer to its minimum only this relevant
    extractive_question_shape: bool = False  # each part of a question in parts gets its sentence
    extractive_focus_section: bool = False  # sentences join only from the best sentence's section
    extractive_section_max_sentences: int = 0  # an answer from under a heading: at most this many (0: max)
    # A sentence's section path (the headings above it) counts as part of it in relevance: "Yes."
    # answers the FAQ entry "Is zlib thread-safe?" it sits under.
    extractive_section_context: bool = True
    require_quantity_for_quantity_questions: bool = True
    # Answer sentences, and the other side of a disagreement, come only from the retrieved documents
    # about what the question names (qa.pipeline.reading.subjects: titles first, then the names held): no
    # Mount
    # Everest for "the highest point in Oman", no Apache-against-Mozilla "disagreement".
    subject_documents: bool = False
    llm_max_context_sentences: int = 60
    # Disagreement between documents.
    detect_disagreement: bool = True
    disagreement_passages: int = 5
    disagreement_min_key_overlap: float = 0.5
    # Conflicting statements too (negation, opposite outcomes, another name in the same place):
    # the heuristic of qa.pipeline.checks.claims, labelled as such wherever it is shown.
    disagreement_claims: bool = True
    # How the reply is shown (qa.pipeline.checks.reply): an answer whose calibrated confidence is below
    # answer_confidence is marked "may not answer your question", below withhold_confidence refused.
    answer_confidence: float = DEFAULT_ANSWER_CONFIDENCE
    withhold_confidence: float = DEFAULT_WITHHOLD_CONFIDENCE
    # The reply rules (qa.pipeline.checks.reply_rules.RULE_NAMES) this preset skips, for ablation.
    rules_off: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Stored configurations come back from JSON with a list; an unknown name fails here, naming the rules.
        object.__setattr__(self, "rules_off", checked_rules_off(self.rules_off))
        if self.max_attempts < 1 or self.passages_per_attempt < 1:
            raise ValueError("max_attempts and passages_per_attempt must be at least 1")
        if self.withhold_confidence > self.answer_confidence:
            raise ValueError(
                f"withhold_confidence {self.withhold_confidence} is above answer_confidence "
                f"{self.answer_confidence}: an answer would be refused before it could be shown as one"
            )

    def needs_llm(self) -> bool:
        return "llm" in (self.generator, self.citation_strategy, self.verifier)
