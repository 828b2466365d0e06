"""Named retrievers: hand-checked arithmetic on tiny inputs, then each real model once."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qa.pipeline.config.presets import PipelineConfig, get_preset
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from qa.pipeline.search.retrieval import RetrievalConfig, retrieve
from qa.pipeline.search.retrievers import (
    CorpusTooLarge,
    EncodedRetriever,
    FusedRetriever,
    MultiVectorRetriever,
    RetrieverModels,
    RetrieverSpec,
    TokenMatrix,
    build_retriever,
    maxsim_scores,
)
from qa.pipeline.search.static_embedding import StaticEmbedder
from tests.qa.pipeline.test_retrieval import CORPUS


class FixedRetriever:
    def __init__(self, name: str, ranking: list[tuple[str, float]]) -> None:
        self.name, self.ranking = name, ranking

    def search(self, query: str, unit, k: int) -> list[tuple[str, float]]:
        return self.ranking[:k]


# --- late interaction --------------------------------------------------------------


def test_maxsim_sums_each_query_tokens_best_match():
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    passages = TokenMatrix.stack([np.array([[1.0, 0.0]]), np.array([[0.6, 0.8], [1.0, 0.0]])])
    # passage 0: 1 + 0; passage 1: max(0.6, 1) + max(0.8, 0) = 1.8
    assert maxsim_scores(query, passages) == pytest.approx([1.0, 1.8], abs=1e-3)
    # Blocks of one row still keep each passage whole.
    assert maxsim_scores(query, passages, block_rows=1) == pytest.approx([1.0, 1.8], abs=1e-3)


def test_a_passage_without_token_vectors_is_refused():
    with pytest.raises(ValueError, match="at least one token"):
        TokenMatrix.stack([np.array([[1.0, 0.0]]), np.zeros((0, 2))])


class WordTokens:
    """One-hot token vectors over a fixed vocabulary: MaxSim then counts shared words."""

    def __init__(self, vocabulary: list[str]) -> None:
        self.vocabulary = vocabulary
        self.calls = 0

    def encode_tokens(self, texts):
        self.calls += 1
        out = []
        for text in texts:
            rows = [
                np.eye(len(self.vocabulary))[self.vocabulary.index(w)]
                for w in text.lower().split()
                if w in self.vocabulary
            ]
            out.append(np.array(rows or [np.zeros(len(self.vocabulary))]))
        return out


def test_multi_vector_ranks_by_shared_tokens_and_encodes_the_corpus_once():
    index = InMemoryCorpusIndex(CORPUS, HashingEmbedder(), chunk_size=2, chunk_overlap=1)
    encoder = WordTokens(["gas", "storage", "sultan", "coup"])
    retriever = MultiVectorRetriever(index, encoder)
    ranking = retriever.search("gas storage", "document", 3)
    assert ranking[0] == ("document:gas", pytest.approx(2.0))
    assert retriever.search("sultan coup", "document", 3)[0][1] == pytest.approx(1.0)
    assert encoder.calls == 1 + 2  # the corpus once, then one call per query


def test_multi_vector_refuses_a_unit_too_large_to_hold_before_encoding_it():
    index = InMemoryCorpusIndex(CORPUS, HashingEmbedder(), chunk_size=2, chunk_overlap=1)
    encoder = WordTokens(["gas"])
    retriever = MultiVectorRetriever(index, encoder, max_passages=5)
    with pytest.raises(CorpusTooLarge, match="limited to 5 sentences; this corpus has 11"):
        retriever.search("gas", "sentence", 3)
    assert encoder.calls == 0
    assert retriever.search("gas", "document", 3)[0][0] == "document:gas"  # 3 documents fit


# --- static embeddings -----------------------------------------------------------------


def test_static_embedding_weights_rare_pieces_by_idf():
    vocabulary = {"common": 0, "rare": 1, "other": 2}
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])  # mean is zero: centring changes nothing
    embedder = StaticEmbedder(lambda text: [vocabulary[w] for w in text.split()], vectors)
    fitted = embedder.fit(["common rare", "common other"])
    # N = 2: idf(common) = log(1 + 0.5 / 2.5) = log 1.2; idf(rare) = log(1 + 1.5 / 1.5) = log 2.
    assert fitted.weight(0) == pytest.approx(math.log(1.2))
    assert fitted.weight(1) == pytest.approx(math.log(2.0))
    (vector,) = fitted.encode(["common rare"])
    expected = np.array([math.log(1.2), math.log(2.0)])
    assert vector == pytest.approx(expected / np.linalg.norm(expected), abs=1e-6)
    # Before fitting every piece weighs 1: the same text points half-way.
    assert embedder.encode(["common rare"])[0] == pytest.approx([math.sqrt(0.5)] * 2, abs=1e-6)
    # A text of unknown or no pieces is the zero vector, not NaN.
    assert not np.any(fitted.encode([""]))


# --- fusion of any two ---------------------------------------------------------------------


def test_hybrid_minmax_weights_the_second_retriever_by_alpha():
    first = FixedRetriever("bm25", [("a", 10.0), ("b", 5.0), ("c", 0.0)])
    second = FixedRetriever("static", [("c", 0.9), ("a", 0.5), ("d", 0.1)])
    fused = FusedRetriever(first, second, fusion="minmax", alpha=0.75, candidates=3)
    result = fused.search_parts("q", "chunk", None)
    # a: 0.25 * 1 + 0.75 * 0.5 = 0.625; c: 0.75 * 1 = 0.75; b: 0.25 * 0.5 = 0.125; d: 0
    assert result.fused == [("c", 0.75), ("a", 0.625), ("b", 0.125), ("d", 0.0)]
    assert set(result.parts) == {"bm25", "static"}
    assert fused.search("q", "chunk", 2) == [("c", 0.75), ("a", 0.625)]
    assert fused.name == "hybrid(bm25, static)"


def test_hybrid_rrf_uses_ranks_and_k():
    first = FixedRetriever("dense", [("a", 0.9), ("b", 0.8)])
    second = FixedRetriever("multi-vector", [("b", 30.0), ("c", 20.0)])
    ranking = FusedRetriever(first, second, fusion="rrf", rrf_k=1).search("q", "chunk", 3)
    # b: 1/(1+2) + 1/(1+1) = 0.8333; a: 1/2; c: 1/3
    assert [key for key, _ in ranking] == ["b", "a", "c"]
    assert ranking[0][1] == pytest.approx(1 / 3 + 1 / 2)


def test_a_hybrid_of_one_retriever_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        RetrieverSpec("hybrid", ("dense", "dense"))
    with pytest.raises(ValueError, match="hybrid_of"):
        RetrievalConfig(method="hybrid", hybrid_of=("bm25", "splade"))
    with pytest.raises(ValueError, match="unknown retrieval method"):
        RetrievalConfig(method="colbert")


# --- selected by name in a preset -------------------------------------------------------------


def hashing_models(calls: list[int]) -> RetrieverModels:
    class Counting(HashingEmbedder):
        def encode(self, texts):
            calls.append(len(texts))
            return super().encode(texts)

    pair = (Counting(), Counting())
    return RetrieverModels(HashingEmbedder(), instruction=lambda: pair)


def test_retrieve_reports_each_fused_retrievers_score_by_name():
    index = InMemoryCorpusIndex(CORPUS, HashingEmbedder(), chunk_size=2, chunk_overlap=1)
    config = RetrievalConfig(unit="chunk", method="hybrid", hybrid_of=("bm25", "instruction-dense"))
    retriever = build_retriever(config.retriever_spec, index, hashing_models([]))
    result = retrieve("Nord Stream gas storage", index, HashingEmbedder(), config, retriever=retriever)
    top = result.ranked[0]
    assert top.passage.document_id == "gas"
    assert {"bm25", "instruction-dense", "fused"} <= set(top.scores)


def test_encoded_passages_are_shared_by_retrievers_over_the_same_corpus():
    index = InMemoryCorpusIndex(CORPUS, HashingEmbedder(), chunk_size=2, chunk_overlap=1)
    calls: list[int] = []
    models = hashing_models(calls)
    spec = RetrieverSpec("instruction-dense")
    for _ in range(3):  # as the app does: one retriever per question
        retriever = build_retriever(spec, index, models)
        assert isinstance(retriever, EncodedRetriever)
        assert retriever.search("Qaboos sultan", "sentence", 1)[0][0] == "sentence:1"
    n_sentences = len(index.passages("sentence"))
    assert calls == [n_sentences, 1, 1, 1]  # the corpus once, the query each time


def test_a_preset_naming_a_hybrid_pair_round_trips_through_json():
    config = get_preset("default")
    custom = PipelineConfig(
        name="mine",
        description="static + bm25 by RRF",
        retrieval=RetrievalConfig(method="hybrid", hybrid_of=("static", "bm25"), fusion="rrf", rrf_k=20),
    )
    restored = PipelineConfig.from_dict(custom.to_dict())
    assert restored.retrieval.hybrid_of == ("static", "bm25")
    assert restored == custom
    # Runs stored before hybrid_of existed meant bm25 + dense.
    old = config.to_dict()
    del old["retrieval"]["hybrid_of"]
    assert PipelineConfig.from_dict(old).retrieval.hybrid_of == ("bm25", "dense")


# --- the real models, once each ------------------------------------------------------------


REAL_PASSAGES = [
    "The Eiffel Tower in Paris is 330 metres tall.",
    "Bananas are a good source of potassium.",
    "The central bank raised interest rates to fight inflation.",
]


def real_index():
    from tests.qa.pipeline.test_retrieval import make_document

    documents = [make_document(f"d{i}", f"D{i}", [text]) for i, text in enumerate(REAL_PASSAGES)]
    return InMemoryCorpusIndex(documents, HashingEmbedder())


@pytest.mark.parametrize("name", ["static", "instruction-dense", "multi-vector"])
def test_each_bundled_model_finds_the_passage_a_paraphrase_asks_for(name):
    index = real_index()
    retriever = build_retriever(RetrieverSpec(name), index, RetrieverModels(HashingEmbedder()))
    # Few shared words: "height", "monument" and "borrowing costs" appear in no passage.
    assert retriever.search("What is the height of the Paris monument?", "document", 3)[0][0] == "document:d0"
    assert retriever.search("why did borrowing costs go up", "document", 3)[0][0] == "document:d2"
