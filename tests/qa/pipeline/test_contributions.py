"""Each retriever's own ranking before fusion, as the trace records it."""

from __future__ import annotations

from qa.pipeline.core.codec import from_data, to_data
from qa.pipeline.core.types import Passage, ScoredPassage
from qa.pipeline.flow.run import RetrievalStep
from qa.pipeline.flow.runner import retriever_contributions
from qa.pipeline.search.retrieval import RetrievalConfig


def hit(key: str, fused: float, **scores: float) -> ScoredPassage:
    passage = Passage(
        key=key, unit="chunk", document_id=f"doc-{key}", document_title=key, text=key, sentences=()
    )
    return ScoredPassage(passage, fused, {**scores, "fused": fused})


# Fused order a, b, c, d: "a" both found, "b" only BM25, "c" only dense, "d" both but low.
FUSED = [
    hit("a", 0.9, bm25=3.0, dense=0.80),
    hit("b", 0.5, bm25=9.0),
    hit("c", 0.4, dense=0.95),
    hit("d", 0.1, bm25=1.0, dense=0.20),
]


def test_a_hybrid_records_each_retrievers_ranks_scores_and_share_of_the_top_k():
    config = RetrievalConfig(method="hybrid", hybrid_of=("bm25", "dense"), alpha=0.7, top_k=3)
    bm25, dense = retriever_contributions(FUSED, config)

    assert bm25.retriever == "bm25" and bm25.weight == 0.3 and dense.weight == 0.7
    assert [(h.key, h.rank, h.score, h.fused_rank) for h in bm25.hits] == [
        ("b", 1, 9.0, 2),
        ("a", 2, 3.0, 1),
        ("d", 3, 1.0, 4),
    ]
    assert [(h.key, h.rank, h.fused_rank) for h in dense.hits] == [("c", 1, 3), ("a", 2, 1), ("d", 3, 4)]
    assert (bm25.returned, bm25.in_top_k, bm25.only_here) == (3, 2, 1)  # a and b in the top 3; b its own
    assert (dense.returned, dense.in_top_k, dense.only_here) == (3, 2, 1)  # a and c; c its own


def test_rrf_has_no_weights_and_a_retriever_alone_is_its_own_ranking():
    rrf = RetrievalConfig(method="hybrid", fusion="rrf", top_k=2)
    assert [c.weight for c in retriever_contributions(FUSED, rrf)] == [None, None]
    [alone] = retriever_contributions(
        [hit("x", 2.0, static=2.0), hit("y", 1.0, static=1.0)], RetrievalConfig(method="static", top_k=1)
    )
    assert alone.retriever == "static" and alone.in_top_k == 1 and alone.only_here == 1
    assert [(h.key, h.rank, h.fused_rank) for h in alone.hits] == [("x", 1, 1), ("y", 2, 2)]


def test_the_contributions_survive_the_stored_run_and_old_steps_have_none():
    config = RetrievalConfig(method="hybrid", top_k=2)
    step = RetrievalStep(question="q", retrievers=retriever_contributions(FUSED, config))
    assert from_data(RetrievalStep, to_data(step)) == step
    assert from_data(RetrievalStep, {"question": "q"}).retrievers == ()
