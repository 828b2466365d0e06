"""Rerankers: the cross-encoder wrapper (with a tiny local model) and the evidence default."""

from __future__ import annotations

import pytest

from documents.parsing.types import ParsedDocument, ParsedSentence
from qa.pipeline.core.types import Passage, ScoredPassage
from qa.pipeline.search.embedding import HashingEmbedder, ModelNotAvailable
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from qa.pipeline.search.rerank import (
    CrossEncoderReranker,
    EvidenceReranker,
    NoReranker,
    StoredSentenceVectors,
)
from qa.pipeline.search.retrieval import RetrievalConfig, retrieve

VOCABULARY = (
    "[PAD] [UNK] [CLS] [SEP] [MASK] oil gas oman sultan reforms mali elections coup "
    "storage germany russia what did who won the in of and"
).split()


@pytest.fixture(scope="module")
def tiny_cross_encoder_path(tmp_path_factory) -> str:
    """A randomly initialised one-layer BERT saved like a hub cross-encoder: no download."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    directory = tmp_path_factory.mktemp("tiny-cross-encoder")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCABULARY),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
        initializer_range=1.0,  # large weights, so scores differ clearly between pairs
    )
    BertForSequenceClassification(config).save_pretrained(directory)
    BertTokenizer(vocab={token: i for i, token in enumerate(VOCABULARY)}).save_pretrained(directory)
    return str(directory)


def hit(key: str, text: str, score: float, document_id: str | None = None) -> ScoredPassage:
    passage = Passage(key, "chunk", document_id or key, document_id or key, text, ())
    return ScoredPassage(passage, score, {"fused": score})


CANDIDATES = [
    hit("a", "mali elections coup", 0.9),
    hit("b", "oman sultan reforms", 0.8),
    hit("c", "gas storage germany", 0.7),
    hit("d", "russia oil gas", 0.6),
]


def test_cross_encoder_reranks_by_the_models_own_scores(tiny_cross_encoder_path):
    from sentence_transformers import CrossEncoder

    question = "what reforms did the sultan of oman make"
    expected = CrossEncoder(tiny_cross_encoder_path, device="cpu").predict(
        [(question, c.passage.text) for c in CANDIDATES]
    )
    expected_order = [CANDIDATES[i].passage.key for i in sorted(range(4), key=lambda i: -expected[i])]
    assert expected_order != ["a", "b", "c", "d"]  # the model really reorders

    reranked = CrossEncoderReranker(tiny_cross_encoder_path).rerank(question, CANDIDATES)
    assert [r.passage.key for r in reranked] == expected_order
    assert [r.scores["rerank"] for r in reranked] == pytest.approx(sorted(expected, reverse=True), rel=1e-5)
    assert all("fused" in r.scores for r in reranked)  # earlier stages' scores are kept


def test_a_missing_cross_encoder_names_the_setting(tmp_path):
    missing = str(tmp_path / "no-such-model")
    with pytest.raises(ModelNotAvailable, match=r"^QA_RERANKER_MODEL=.*no-such-model could not be loaded: "):
        CrossEncoderReranker(missing)


class WordOverlapCrossEncoder:
    """A protocols.CrossEncoder fake: the score is the number of shared words."""

    def predict(self, pairs):
        return [len(set(q.split()) & set(p.split())) for q, p in pairs]


def test_any_cross_encoder_object_can_be_injected():
    reranked = CrossEncoderReranker(WordOverlapCrossEncoder()).rerank("storage in germany", CANDIDATES)
    assert reranked[0].passage.key == "c"
    assert CrossEncoderReranker(WordOverlapCrossEncoder()).rerank("q", []) == []


def test_no_reranker_keeps_the_first_stage_order():
    reranked = NoReranker().rerank("anything", CANDIDATES)
    assert [r.passage.key for r in reranked] == ["a", "b", "c", "d"]


def document(external_id: str, title: str, sentences: list[str]) -> ParsedDocument:
    parsed, position = [], 0
    for text in sentences:
        parsed.append(ParsedSentence(text, position, position + len(text)))
        position += len(text) + 1
    return ParsedDocument(external_id, title, " ".join(sentences), tuple(parsed))


HISTORY = [
    "Qaboos overthrew his father in 1970 and ruled as sultan.",
    "After protests in 2011 the sultan enacted political reforms.",
    "He expanded the powers of the elected council.",
]
UNRELATED = [
    "The economy depends on oil and gas exports.",
    "Fishing and agriculture employ many people.",
    "The capital is Muscat.",
    "The climate is hot and dry.",
    "Tourism is growing.",
    "Water is scarce.",
]
# The whole entry comes first and holds the history section word for word, so
# its chunks tie with the section's chunks and win the tie on corpus order.
NEAR_DUPLICATES = [
    document("factbook/oman", "Oman", HISTORY + UNRELATED),
    document("gold/oman_history", "Oman (history)", HISTORY),
    document("news/mali", "Mali", ["Soldiers staged a coup in Mali.", "Elections were postponed."]),
]


def test_the_focused_document_beats_the_entry_that_contains_it():
    embedder = HashingEmbedder()
    index = InMemoryCorpusIndex(NEAR_DUPLICATES, embedder, chunk_size=3, chunk_overlap=1)
    question = "What political reforms did the sultan enact after the 2011 protests?"
    config = RetrievalConfig(unit="chunk", method="hybrid")
    plain = retrieve(question, index, embedder, config)
    assert plain.documents()[0] == "factbook/oman"  # the tie the reranker must break
    reranked = retrieve(question, index, embedder, config, reranker=EvidenceReranker(index, embedder))
    assert reranked.documents()[:2] == ["gold/oman_history", "factbook/oman"]
    assert {"sentence_similarity", "document_similarity", "rerank"} <= set(reranked.passages[0].scores)


class IndexWithoutStoredVectors:
    """Only protocols.CorpusIndex, as a minimal database adapter would offer."""

    def __init__(self, inner: InMemoryCorpusIndex) -> None:
        self.inner = inner

    def __getattr__(self, name):
        if name == "sentence_vectors":
            raise AttributeError(name)
        return getattr(self.inner, name)


def test_an_index_without_stored_sentence_vectors_gives_the_same_ranking():
    embedder = HashingEmbedder()
    index = InMemoryCorpusIndex(NEAR_DUPLICATES, embedder, chunk_size=3, chunk_overlap=1)
    bare = IndexWithoutStoredVectors(index)
    assert not isinstance(bare, StoredSentenceVectors)
    question = "Who ruled as sultan after 1970?"
    candidates = retrieve(question, index, embedder, RetrievalConfig(unit="chunk")).ranked
    with_vectors = EvidenceReranker(index, embedder).rerank(question, candidates)
    without = EvidenceReranker(bare, embedder).rerank(question, candidates)
    assert [h.passage.key for h in with_vectors] == [h.passage.key for h in without]
    assert [h.score for h in with_vectors] == pytest.approx([h.score for h in without])


def test_the_evidence_reranker_handles_no_candidates():
    index = InMemoryCorpusIndex(NEAR_DUPLICATES, HashingEmbedder())
    assert EvidenceReranker(index, HashingEmbedder()).rerank("anything", []) == []


def test_the_refusal_signal_is_the_best_sentence_cosine_among_the_hits():
    from qa.pipeline.search.rerank import top_sentence_similarity

    embedder = HashingEmbedder()
    index = InMemoryCorpusIndex(NEAR_DUPLICATES, embedder, chunk_size=3, chunk_overlap=1)
    reranker = EvidenceReranker(index, embedder)
    on_topic = retrieve(HISTORY[0], index, embedder, reranker=reranker)
    off_topic = retrieve("Water is scarce in the capital", index, embedder, reranker=reranker)
    unrelated = retrieve("penguin migration in Antarctica", index, embedder, reranker=reranker)
    assert top_sentence_similarity(on_topic.passages) == pytest.approx(1.0, abs=1e-5)  # a verbatim sentence
    assert top_sentence_similarity(unrelated.passages) < top_sentence_similarity(off_topic.passages) < 1.0
    bm25_only = retrieve("Qaboos", index, embedder, RetrievalConfig(method="bm25"))
    assert top_sentence_similarity(bm25_only.passages) is None  # no dense evidence at all


def test_the_runner_refuses_on_the_best_sentence_cosine_and_falls_back_to_the_dense_score():
    from qa.pipeline.flow.runner import retrieval_confidence
    from qa.pipeline.search.rerank import top_sentence_similarity

    embedder = HashingEmbedder()
    index = InMemoryCorpusIndex(NEAR_DUPLICATES, embedder, chunk_size=3, chunk_overlap=1)
    reranked = retrieve(
        HISTORY[0], index, embedder, RetrievalConfig(unit="chunk"), EvidenceReranker(index, embedder)
    )
    assert retrieval_confidence(reranked.ranked) == top_sentence_similarity(reranked.ranked[:5])
    plain = retrieve(HISTORY[0], index, embedder, RetrievalConfig(unit="chunk"))
    assert retrieval_confidence(plain.ranked) == max(hit.scores["dense"] for hit in plain.ranked[:5])
    # A chunk's pooled vector matches less well than the verbatim sentence inside it.
    assert retrieval_confidence(plain.ranked) < retrieval_confidence(reranked.ranked)
