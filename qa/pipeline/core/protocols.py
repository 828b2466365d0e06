"""The model clients and the corpus the pipeline is given, as Protocols.

Production passes sentence-transformers models, LLM HTTP clients and the
pgvector-backed corpus from ``qa/adapters.py``; tests pass small fakes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from qa.pipeline.core.types import Passage, SourceSentence, Unit

if TYPE_CHECKING:  # the values these models return; their modules import this one
    from qa.pipeline.checks.confidence import AnswerCheck, Confidence
    from qa.pipeline.checks.relevance import AnswerRelevance
    from qa.pipeline.dialogue.turn_kind import SoftmaxModel


class Embedder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return one L2-normalised row per text, shape (len(texts), dim)."""


class TokenEncoder(Protocol):
    def encode_tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One (n_tokens, dim) matrix of L2-normalised token vectors per text (late interaction)."""


class Retriever(Protocol):
    """A first-stage retriever over one corpus: ``qa.pipeline.search.retrievers`` builds them by name."""

    name: str

    def search(self, query: str, unit: Unit, k: int) -> list[tuple[str, float]]:
        """(passage key, score) best first, at most ``k``; scores comparable within one call only."""


class CrossEncoder(Protocol):
    def predict(self, pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
        """Return one relevance score per (query, passage) pair; higher is better."""


class EntailmentModel(Protocol):
    """An NLI / grounding classifier a user names (QA_NLI_MODEL): ``qa.pipeline.checks.nli``."""

    name: str

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
        """P(premise entails hypothesis) for each (premise, hypothesis) pair."""


class SpanReader(Protocol):
    """An extractive question-answering model a user names (QA_SPAN_READER_MODEL):
    ``qa.pipeline.checks.spans``; or the project's own (``qa.pipeline.reading.reader.SpanReader``).

    ``guesses``: True when the reader marks each context's likeliest span without judging whether
    there is an answer at all (its spans are shown as guesses)."""

    name: str
    guesses: bool

    def best_spans(self, question: str, contexts: Sequence[str]) -> Sequence[tuple[int, int, float] | None]:
        """Per context, the answer's (start, end) character offsets and its score over the
        no-answer option; None where the reader prefers no answer."""


class LLM(Protocol):
    name: str

    def complete(
        self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 512
    ) -> str:
        """Return the assistant's reply to a chat (``[{"role", "content"}]``)."""

    def yes_probability(self, messages: Sequence[dict[str, str]], *, top_logprobs: int = 10) -> float:
        """P("yes") against P("no") as the reply's first token, read from the model's token
        log-probabilities (a chat that asks a yes/no question); ``LLMError`` where the server
        gives none."""


class CorpusIndex(Protocol):
    """One corpus, searchable lexically and densely at every retrieval unit."""

    def passages(self, unit: Unit) -> Sequence[Passage]:
        """Every passage of the unit, in a stable order."""

    def passage(self, key: str) -> Passage: ...

    def lexical_search(self, query: str, unit: Unit, k: int) -> list[tuple[str, float]]:
        """BM25: (passage key, score) best first."""

    def dense_search(self, query_vector: np.ndarray, unit: Unit, k: int) -> list[tuple[str, float]]:
        """Cosine similarity: (passage key, similarity) best first."""

    def document_sentences(self, document_id: str) -> Sequence[SourceSentence]: ...


@runtime_checkable
class PrefetchingIndex(Protocol):
    """Offered by an index that reads passages from a store (qa.adapters): many keys in one read."""

    def prefetch(self, keys: Sequence[str]) -> None:
        """Read these passages now, so that ``passage(key)`` then costs nothing; unknown keys are skipped."""


# --- the reading models: built once per process by a factory, passed in (``qa.pipeline.core.model_parts``)
# ---


class EntityTagger(Protocol):
    """Named entities of a text: (lower-cased text, label) per entity, spaCy's labels (PERSON, GPE ...)."""

    def __call__(self, text: str) -> tuple[tuple[str, str], ...]: ...


class PartOfSpeechTagger(Protocol):
    """(character offset, Penn Treebank tag) per token of a text."""

    def __call__(self, text: str) -> tuple[tuple[int, str], ...]: ...


class PassageReading(Protocol):
    """The passage reader (``qa.pipeline.reading.reader``): does this passage state the answer?"""

    def read(self, question: str, passages: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
        """p(answerable) of each (title, sentences) passage for the question."""


class ProbabilityModel(Protocol):
    """A fitted model of named signals (``answerability.LogisticModel``): the answerability model."""

    names: tuple[str, ...]
    threshold: float

    def probability(self, x: np.ndarray) -> np.ndarray: ...


class TurnKindClassifier(Protocol):
    """p(kind) of a conversation turn and the reply it decides (``turn_kind.TurnKindModel``)."""

    kinds: SoftmaxModel
    clarify_threshold: float
    refuse_threshold: float

    def decide(self, probabilities: Sequence[float]) -> str: ...


class ConfidenceModels(Protocol):
    """The answer check and the calibrated confidences (``confidence.TrustModels``)."""

    def check_answer(
        self, answerability: float, relevance: AnswerRelevance, *, overview: bool = False
    ) -> AnswerCheck: ...

    def of_answer(
        self, check: AnswerCheck, labels: Sequence[str], signals: Mapping[str, float] | None = None
    ) -> Confidence: ...

    def of_refusal(self, answerability: float, *, by_rule: bool = False) -> Confidence: ...
