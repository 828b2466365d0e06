"""Retrieval over the in-memory index: units, methods, fusion and document ranking."""

from __future__ import annotations

import numpy as np
import pytest

from documents.parsing.types import ParsedDocument, ParsedSentence
from qa.pipeline.core.types import Passage, ScoredPassage
from qa.pipeline.search.embedding import HashingEmbedder
from qa.pipeline.search.fusion import fuse_minmax, fuse_rrf, minmax_normalise
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from qa.pipeline.search.retrieval import RetrievalConfig, RetrievalResult, retrieve


def make_document(external_id: str, title: str, sentences: list[str]) -> ParsedDocument:
    parsed, position = [], 0
    for ordinal, text in enumerate(sentences):
        parsed.append(ParsedSentence(text, position, position + len(text), f"S{ordinal + 1}"))
        position += len(text) + 1
    return ParsedDocument(external_id, title, " ".join(sentences), tuple(parsed))


CORPUS = [
    make_document(
        "oman",
        "Oman history",
        [
            "The inhabitants of Oman have long prospered from Indian Ocean trade.",
            "In 1970 Qaboos overthrew his father and ruled as sultan for five decades.",
            "After the 2011 protests the sultan expanded the powers of the elected council.",
            "He also promised more jobs and benefits.",
        ],
    ),
    make_document(
        "mali",
        "Mali history",
        [
            "Mali was once part of three West African empires.",
            "Ibrahim Boubacar Keita won the presidential elections in 2013 and 2018.",
            "Military officers seized power in a coup in 2020.",
        ],
    ),
    make_document(
        "gas",
        "Nord Stream",
        [
            "Russia reduced gas flows through Nord Stream 1 by sixty percent.",
            "Germany warned consumers that gas prices would rise sharply.",
            "Storage facilities were half full.",
            "Officials said storage would last about two months without Russian gas.",
        ],
    ),
]


@pytest.fixture(scope="module")
def index() -> InMemoryCorpusIndex:
    return InMemoryCorpusIndex(CORPUS, HashingEmbedder(), chunk_size=2, chunk_overlap=1)


@pytest.mark.parametrize("unit", ["document", "chunk", "sentence"])
@pytest.mark.parametrize("method", ["bm25", "dense", "hybrid"])
def test_the_document_that_answers_ranks_first(index, unit, method):
    for fusion in ("minmax", "rrf"):
        config = RetrievalConfig(unit=unit, method=method, fusion=fusion)
        result = retrieve("Who won Mali's presidential elections?", index, HashingEmbedder(), config)
        assert result.documents()[0] == "mali"
        result = retrieve("How long would German gas storage last?", index, HashingEmbedder(), config)
        assert result.documents()[0] == "gas"


def test_sentence_hits_carry_the_sentence_to_cite(index):
    result = retrieve(
        "powers of the elected council after the protests",
        index,
        HashingEmbedder(),
        RetrievalConfig(unit="sentence", method="hybrid"),
    )
    best = result.passages[0]
    assert [s.label for s in best.passage.sentences] == ["S3"]
    assert best.passage.sentences[0].document_id == "oman"
    assert set(best.scores) == {"bm25", "dense", "fused"}


def test_chunks_follow_the_configured_sentence_windows(index):
    oman_chunks = [p for p in index.passages("chunk") if p.document_id == "oman"]
    # 4 sentences, windows of 2 overlapping by 1: S1-S2, S2-S3, S3-S4.
    assert [[s.label for s in p.sentences] for p in oman_chunks] == [["S1", "S2"], ["S2", "S3"], ["S3", "S4"]]
    assert oman_chunks[1].text == CORPUS[0].sentences[1].text + " " + CORPUS[0].sentences[2].text
    assert len(index.passages("document")) == 3
    assert len(index.passages("sentence")) == 11


def test_pooled_chunk_vector_is_the_normalised_mean_of_its_sentences(index):
    chunk = index.passages("chunk")[0]
    sentence_vectors = index.sentence_vectors([s.id for s in chunk.sentences])
    mean = sentence_vectors.mean(axis=0)
    np.testing.assert_allclose(index.passage_vector(chunk.key), mean / np.linalg.norm(mean), rtol=1e-5)


class RecordingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return super().encode(texts)


def test_encoded_chunk_vectors_embed_the_chunk_text():
    embedder = RecordingEmbedder()
    encoded = InMemoryCorpusIndex(CORPUS, embedder, chunk_size=2, chunk_overlap=1, chunk_vectors="encoded")
    chunk = encoded.passages("chunk")[0]
    assert chunk.text in embedder.calls[-1]
    np.testing.assert_allclose(encoded.passage_vector(chunk.key), HashingEmbedder().encode([chunk.text])[0])


def test_min_max_fusion_on_hand_computed_numbers():
    lexical = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
    dense = [("b", 0.9), ("d", 0.7), ("a", 0.5)]
    assert minmax_normalise(lexical) == {"a": 1.0, "b": 0.5, "c": 0.0}
    fused = fuse_minmax(lexical, dense, alpha=0.25)
    # dense normalised: b 1.0, d 0.5, a 0.0; missing keys count 0.
    assert fused == pytest.approx({"a": 0.75, "b": 0.625, "c": 0.0, "d": 0.125})
    assert fuse_minmax(lexical, dense, alpha=1.0) == pytest.approx({"a": 0.0, "b": 1.0, "c": 0.0, "d": 0.5})
    # One candidate, or all equal: the retriever still counts, fully.
    assert fuse_minmax([("a", 3.0)], [], alpha=0.5) == {"a": 0.5}
    with pytest.raises(ValueError):
        fuse_minmax(lexical, dense, alpha=1.5)


def test_reciprocal_rank_fusion_on_hand_computed_numbers():
    fused = fuse_rrf([[("a", 10.0), ("b", 6.0)], [("b", 0.9), ("c", 0.1)]], k=60)
    assert fused == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62})
    assert max(fused, key=fused.get) == "b"


def scored(key: str, document_id: str, score: float) -> ScoredPassage:
    passage = Passage(key, "chunk", document_id, document_id, key, ())
    return ScoredPassage(passage, score)


def test_documents_rank_at_their_best_passage_and_appear_once():
    ranked = (
        scored("c1", "mali", 0.9),
        scored("c2", "oman", 0.8),
        scored("c3", "mali", 0.7),
        scored("c4", "gas", 0.6),
        scored("c5", "oman", 0.5),
    )
    result = RetrievalResult("q", RetrievalConfig(top_k=2), ranked)
    assert result.documents() == ["mali", "oman", "gas"]
    assert [hit.passage.key for hit in result.document_hits()] == ["c1", "c2", "c4"]
    assert [hit.passage.key for hit in result.passages] == ["c1", "c2"]


def test_equal_fused_scores_keep_a_deterministic_order():
    twins = [make_document(f"twin{i}", "Twin", ["Gas storage in Germany."]) for i in range(3)]
    twin_index = InMemoryCorpusIndex(twins, HashingEmbedder())
    for method in ("bm25", "dense", "hybrid"):
        result = retrieve("gas storage", twin_index, HashingEmbedder(), RetrievalConfig(method=method))
        assert result.documents() == ["twin0", "twin1", "twin2"]


def test_empty_corpus_and_empty_question_return_nothing(index):
    empty = InMemoryCorpusIndex([], HashingEmbedder())
    assert retrieve("anything at all", empty, HashingEmbedder()).ranked == ()
    assert retrieve("   ", index, HashingEmbedder()).documents() == []


def test_a_question_sharing_no_word_with_the_corpus_finds_nothing_lexically(index):
    result = retrieve("zebra xylophone", index, HashingEmbedder(), RetrievalConfig(method="bm25"))
    assert result.ranked == ()


def test_top_k_limits_passages_but_not_the_document_ranking(index):
    config = RetrievalConfig(unit="sentence", method="hybrid", top_k=1)
    result = retrieve("gas storage Germany Russia", index, HashingEmbedder(), config)
    assert len(result.passages) == 1
    assert len(result.documents()) > 1


@pytest.mark.parametrize(
    "bad",
    [{"unit": "page"}, {"method": "magic"}, {"fusion": "max"}, {"alpha": -0.1}, {"top_k": 0}],
)
def test_invalid_configuration_is_refused(bad):
    with pytest.raises(ValueError):
        RetrievalConfig(**bad)


def test_the_embedding_cache_only_embeds_texts_it_has_not_seen(tmp_path):
    from qa.pipeline.search.embedding import CachingEmbedder

    inner = RecordingEmbedder()
    first = CachingEmbedder(inner, tmp_path, "hashing-256", save_every=2)
    vectors = first.encode(["oil exports", "gas storage", "oil exports", "coup in Mali"])
    texts = ["oil exports", "gas storage", "oil exports", "coup in Mali"]
    np.testing.assert_allclose(vectors, HashingEmbedder().encode(texts))
    assert sorted(t for call in inner.calls for t in call) == ["coup in Mali", "gas storage", "oil exports"]

    inner.calls.clear()
    second = CachingEmbedder(inner, tmp_path, "hashing-256")  # a later run, reading the file
    np.testing.assert_allclose(second.encode(["gas storage", "wheat harvest"])[0], vectors[1])
    assert inner.calls == [["wheat harvest"]]
    other_model = CachingEmbedder(inner, tmp_path, "another-model")
    other_model.encode(["gas storage"])
    assert inner.calls[-1] == ["gas storage"]  # namespaces never share vectors


def test_document_vectors_pool_sentences_by_default_or_chunks_on_request(index):
    oman = index.document_sentences("oman")
    mean = index.sentence_vectors([s.id for s in oman]).mean(axis=0)
    np.testing.assert_allclose(index.passage_vector("document:oman"), mean / np.linalg.norm(mean), rtol=1e-5)

    by_chunks = InMemoryCorpusIndex(
        CORPUS, HashingEmbedder(), chunk_size=2, chunk_overlap=1, document_vectors="chunks"
    )
    chunks = [p for p in by_chunks.passages("chunk") if p.document_id == "oman"]
    mean = np.mean([by_chunks.passage_vector(c.key) for c in chunks], axis=0)
    expected = mean / np.linalg.norm(mean)
    np.testing.assert_allclose(by_chunks.passage_vector("document:oman"), expected, rtol=1e-5)


def test_top_k_is_how_much_the_answer_may_draw_on(index):
    from dataclasses import replace

    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.flow.factory import ModelClients, build_pipeline
    from qa.pipeline.flow.runner import answer_question

    preset = get_preset("default")
    question = "Which sultan ruled Oman, and when did military officers seize power in Mali?"
    answers = {}
    for top_k in (1, 3):
        config = replace(
            preset,
            retrieval=replace(preset.retrieval, unit="sentence", top_k=top_k),
            reranker="none",
            min_retrieval_confidence=None,
            trust=None,  # top_k alone: no answer check trimming the wide answer
            # ... and no floor on the sentence padding it (the hashing embedder's relevance is rough)
            answer=replace(preset.answer, extractive_padding_floor=0.0),
        )
        pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=HashingEmbedder()))
        answers[top_k] = answer_question(question, pipeline=pipeline).answer
    # One sentence passage is all the narrow answer may read (it says the Oman part is not
    # covered, in a sentence of its own that cites nothing); the wide one reads three.
    assert len(answers[1].cited_sentences) == 1 and not answers[1].refused
    assert len(answers[3].cited_sentences) > 1


def test_a_configuration_stored_before_top_k_was_the_knob_reads_as_many_passages_as_then():
    from qa.pipeline.config.presets import PipelineConfig, get_preset

    stored = get_preset("verify").to_dict()
    stored["retrieval"] = {**stored["retrieval"], "top_k": 8}
    stored["answer_passages"] = 3  # the old knob, which answering read
    assert PipelineConfig.from_dict(stored).retrieval.top_k == 3
