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

from qa.pipeline.embedding import ModelNotAvailable
from qa.pipeline.protocols import CorpusIndex, CrossEncoder, Embedder
from qa.pipeline.types import ScoredPassage, Unit


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
    """Weights of the min-max-normalised features ``EvidenceReranker`` adds up."""

    first_stage: float = 1.0  # the fused (or single-retriever) retrieval score
    sentence_similarity: float = 1.0  # best cosine between the question and one sentence of the passage
    sentence_bm25: float = 1.0  # best BM25 of one sentence of the passage (corpus-wide idf)
    document: float = 1.0  # the passage's whole document: its dense + BM25 score at document unit


class EvidenceReranker:
    """Rescores candidates by their best sentence and by their document, with no extra model.

    Why these features:
    - a passage usually answers through one or two sentences, and a window
      vector (a mean of eight sentences) blurs them; the best single sentence,
      by cosine (late-interaction "MaxSim") and by BM25, sharpens the ranking;
    - near-duplicate documents (a Factbook history section and the whole
      Factbook entry holding it) produce equal passages; the document-level
      score, which favours the document whose content is mostly about the
      question, breaks those ties the way a reader would.
    Each feature is min-max normalised over the candidates and weighted.
    ``sentence_pool``/``document_pool`` bound the corpus-wide BM25 and dense
    look-ups; a candidate outside them gets that feature's lowest value.
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
        query_vector = np.asarray(self.embedder.encode([question]), dtype=np.float32)[0]
        features = self.features(question, query_vector, candidates)
        w = self.weights
        total = (
            w.first_stage * _minmax(features["first_stage"])
            + w.sentence_similarity * _minmax(features["sentence_similarity"])
            + w.sentence_bm25 * _minmax(features["sentence_bm25"])
            + w.document * _minmax(features["document"])
        )
        annotated = [
            replace(hit, scores={**hit.scores, **{name: float(v[i]) for name, v in features.items()}})
            for i, hit in enumerate(candidates)
        ]
        return _ranked(annotated, total.tolist())

    def features(
        self, question: str, query_vector: np.ndarray, candidates: Sequence[ScoredPassage]
    ) -> dict[str, np.ndarray]:
        sentence_ids = [[s.id for s in hit.passage.sentences] for hit in candidates]
        similarity = self._sentence_similarities(query_vector, candidates)
        lexical = dict(self.index.lexical_search(question, "sentence", self.sentence_pool))
        best_similarity, best_bm25 = [], []
        for ids in sentence_ids:
            best_similarity.append(max((similarity[i] for i in ids), default=0.0))
            best_bm25.append(max((lexical.get(f"sentence:{i}", 0.0) for i in ids), default=0.0))
        documents = self._document_scores(question, query_vector)
        return {
            "first_stage": np.array([hit.score for hit in candidates], dtype=np.float64),
            "sentence_similarity": np.array(best_similarity, dtype=np.float64),
            "sentence_bm25": np.array(best_bm25, dtype=np.float64),
            "document": np.array([documents.get(hit.passage.document_id, 0.0) for hit in candidates]),
        }

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

    def _document_scores(self, question: str, query_vector: np.ndarray) -> dict[str, float]:
        # Dense and BM25 at document unit, each min-max normalised over its own
        # pool, averaged: the document's relevance as a whole.
        unit: Unit = "document"
        per_document: dict[str, float] = {}
        for ranking in (
            self.index.dense_search(query_vector, unit, self.document_pool),
            self.index.lexical_search(question, unit, self.document_pool),
        ):
            for key, value in _minmax_dict(ranking).items():
                document_id = self.index.passage(key).document_id
                per_document[document_id] = per_document.get(document_id, 0.0) + value / 2
        return per_document


def _minmax_dict(ranking: Sequence[tuple[str, float]]) -> dict[str, float]:
    if not ranking:
        return {}
    values = _minmax(np.array([score for _, score in ranking], dtype=np.float64))
    return {key: float(v) for (key, _), v in zip(ranking, values, strict=True)}
