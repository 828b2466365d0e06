"""Second-stage reranking of retrieved passages.

Three implementations of ``Reranker``:

- ``NoReranker`` keeps the first-stage order;
- ``CrossEncoderReranker`` scores (question, passage) pairs with a
  sentence-transformers cross-encoder named by ``QA_RERANKER_MODEL``. No
  registry ships cross-encoder weights, so it is for users who have one;
- ``EvidenceReranker``, the default, needs no weights beyond the embedding
  model. Its design and weights come from bench/retrieval_quality.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from qa.pipeline.core.protocols import CorpusIndex, CrossEncoder, Embedder
from qa.pipeline.core.types import ScoredPassage
from qa.pipeline.search.embedding import ModelNotAvailable


class Reranker(Protocol):
    def rerank(self, question: str, candidates: Sequence[ScoredPassage]) -> list[ScoredPassage]:
        """The candidates best first, each with its new ``score`` also stored as scores["rerank"]."""


@runtime_checkable
class StoredSentenceVectors(Protocol):
    """Offered by indexes that keep sentence vectors (InMemoryCorpusIndex; the pgvector adapter should)."""

    def sentence_vectors(self, sentence_ids: Sequence[int]) -> np.ndarray: ...


def _ranked(candidates: Sequence[ScoredPassage], scores: Sequence[float]) -> list[ScoredPassage]:
    # Stable sort: equal new scores keep the first-stage order.
    rescored = [
        replace(hit, score=float(score), scores={**hit.scores, "rerank": float(score)})
        for hit, score in zip(candidates, scores, strict=True)
    ]
    order = sorted(range(len(rescored)), key=lambda i: -rescored[i].score)
    return [rescored[i] for i in order]


def _minmax(values: np.ndarray) -> np.ndarray:
    if len(values) == 0:
        return values
    low, high = float(values.min()), float(values.max())
    return np.ones_like(values) if high == low else (values - low) / (high - low)


class NoReranker:
    def rerank(self, question: str, candidates: Sequence[ScoredPassage]) -> list[ScoredPassage]:
        return _ranked(candidates, [hit.score for hit in candidates])


class CrossEncoderReranker:
    """Reranks by a cross-encoder's relevance score for (question, passage text).

    ``model`` is a hub name or local path (loaded with sentence-transformers'
    ``CrossEncoder``), or any object with ``predict(pairs)``. A model that
    cannot be loaded raises ``ModelNotAvailable`` naming ``setting``.
    """

    def __init__(
        self,
        model: str | CrossEncoder,
        *,
        setting: str = "QA_RERANKER_MODEL",
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int = 512,
    ) -> None:
        # Only sentence-transformers' CrossEncoder takes batching arguments; an
        # injected protocols.CrossEncoder is called with the pairs alone.
        self._predict_kwargs: dict[str, object] = {}
        if isinstance(model, str):
            try:
                from sentence_transformers import CrossEncoder as SentenceTransformersCrossEncoder

                model = SentenceTransformersCrossEncoder(model, device=device, max_length=max_length)
            except Exception as exc:  # noqa: BLE001 - any loader failure means "not available"
                raise ModelNotAvailable(setting, str(model), exc) from exc
            self._predict_kwargs = {"batch_size": batch_size, "show_progress_bar": False}
        self.model = model

    def rerank(self, question: str, candidates: Sequence[ScoredPassage]) -> list[ScoredPassage]:
        if not candidates:
            return []
        pairs = [(question, hit.passage.text) for hit in candidates]
        scores = self.model.predict(pairs, **self._predict_kwargs)
        return _ranked(candidates, np.asarray(scores, dtype=np.float64).reshape(-1).tolist())


@dataclass(frozen=True)
class EvidenceWeights:
    """Weights of the features ``EvidenceReranker`` adds up, each min-max normalised over the candidates.

    Equal weights on the three dense-or-fused features; bench/retrieval_quality.py
    shows dropping either the sentence or the document feature costs analyst-bench
    or CLAPNQ. The two BM25 features default to 0 (and are then not computed):
    adding them gained at most one analyst-bench question at rank 1 (rare names,
    long questions) and lost one to three of CLAPNQ's 100 answerable ones (short
    natural questions), so they would fit this benchmark rather than the task.
    """

    first_stage: float = 1.0  # the fused (or single-retriever) retrieval score
    sentence_similarity: float = 1.0  # best cosine between the question and one sentence of the passage
    document_similarity: float = 1.0  # cosine between the question and the passage's whole document
    sentence_bm25: float = 0.0  # best BM25 of one sentence of the passage
    document_bm25: float = 0.0  # BM25 of the passage's whole document


FEATURES = tuple(EvidenceWeights.__dataclass_fields__)


class EvidenceReranker:
    """Rescores candidates by their best sentence and by their document, with no extra model.

    Why these features:
    - a passage usually answers through one or two sentences, and a window
      vector (the mean of eight sentences) blurs them; the best single
      sentence's cosine (late interaction, "MaxSim") sharpens the ranking;
    - near-duplicate documents (a Factbook history section and the whole
      Factbook entry that contains it) yield equal or overlapping passages.
      The document's own vector (the mean of its sentences) is closer to the
      question when more of the document is about it, so it ranks the focused
      document first, as a reader would want.
    The passage scores set the document ranking (a document ranks at its best
    passage), so the document feature moves whole documents.

    ``sentence_pool``/``document_pool`` bound the corpus-wide searches behind
    the BM25 and document features; a candidate outside a pool gets the
    pool's lowest score (an upper bound of its own).
    """

    def __init__(
        self,
        index: CorpusIndex,
        embedder: Embedder,
        *,
        weights: EvidenceWeights = EvidenceWeights(),
        sentence_pool: int = 1000,
        document_pool: int = 200,
    ) -> None:
        self.index, self.embedder, self.weights = index, embedder, weights
        self.sentence_pool, self.document_pool = sentence_pool, document_pool

    def rerank(self, question: str, candidates: Sequence[ScoredPassage]) -> list[ScoredPassage]:
        if not candidates:
            return []
        # Embeds the question again (the Reranker protocol passes no vector):
        # one short text, ~10 ms on CPU, against seconds for a cross-encoder.
        query_vector = np.asarray(self.embedder.encode([question]), dtype=np.float32)[0]
        features = self.features(question, query_vector, candidates)
        total = np.zeros(len(candidates))
        for name, values in features.items():
            total += getattr(self.weights, name) * _minmax(values)
        annotated = [
            replace(hit, scores={**hit.scores, **{name: float(v[i]) for name, v in features.items()}})
            for i, hit in enumerate(candidates)
        ]
        return _ranked(annotated, total.tolist())

    def features(
        self, question: str, query_vector: np.ndarray, candidates: Sequence[ScoredPassage]
    ) -> dict[str, np.ndarray]:
        """Raw (unnormalised) feature values per candidate, for every feature with a weight."""
        wanted = {name for name in FEATURES if getattr(self.weights, name)} | {"sentence_similarity"}
        features = {"first_stage": np.array([hit.score for hit in candidates], dtype=np.float64)}
        sentence_ids = [[s.id for s in hit.passage.sentences] for hit in candidates]
        # Always computed: the best sentence cosine is also the refusal signal.
        similarity = self._sentence_similarities(query_vector, candidates)
        features["sentence_similarity"] = _best_per_passage(sentence_ids, similarity)
        if "sentence_bm25" in wanted:
            ranking = self.index.lexical_search(question, "sentence", self.sentence_pool)
            lexical = {int(key.partition(":")[2]): score for key, score in ranking}
            features["sentence_bm25"] = _best_per_passage(sentence_ids, lexical)
        documents = [hit.passage.document_id for hit in candidates]
        if "document_similarity" in wanted:
            ranking = self.index.dense_search(query_vector, "document", self.document_pool)
            features["document_similarity"] = self._per_document(documents, ranking)
        if "document_bm25" in wanted:
            ranking = self.index.lexical_search(question, "document", self.document_pool)
            features["document_bm25"] = self._per_document(documents, ranking)
        return features

    def _sentence_similarities(
        self, query_vector: np.ndarray, candidates: Sequence[ScoredPassage]
    ) -> dict[int, float]:
        sentences = {s.id: s for hit in candidates for s in hit.passage.sentences}
        ids = list(sentences)
        if not ids:
            return {}
        if isinstance(self.index, StoredSentenceVectors):
            vectors = self.index.sentence_vectors(ids)
        else:  # an index without stored vectors: embed the candidates' sentences now
            vectors = self.embedder.encode([sentences[i].text for i in ids])
        return dict(zip(ids, (np.asarray(vectors) @ query_vector).tolist(), strict=True))

    def _per_document(self, documents: list[str], ranking: list[tuple[str, float]]) -> np.ndarray:
        by_document = {self.index.passage(key).document_id: score for key, score in ranking}
        floor = min(by_document.values(), default=0.0)
        return np.array([by_document.get(d, floor) for d in documents], dtype=np.float64)


def _best_per_passage(sentence_ids: list[list[int]], values: dict[int, float]) -> np.ndarray:
    """The best value among each passage's sentences (0.0 for a sentence without a value)."""
    return np.array([max((values.get(i, 0.0) for i in ids), default=0.0) for ids in sentence_ids])


def top_sentence_similarity(hits: Sequence[ScoredPassage]) -> float | None:
    """The best question-sentence cosine among ``hits``: the retrieval confidence used for refusal.

    Set by ``EvidenceReranker`` (scores["sentence_similarity"]); for sentence
    hits without it, their dense score is the same quantity. None when no hit
    carries either, e.g. after BM25-only retrieval without this reranker.
    """
    present = []
    for hit in hits:
        if "sentence_similarity" in hit.scores:
            present.append(hit.scores["sentence_similarity"])
        elif hit.passage.unit == "sentence" and "dense" in hit.scores:
            present.append(hit.scores["dense"])
    return max(present) if present else None
