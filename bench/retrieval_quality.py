"""Retrieval quality and speed experiments: which unit, method, fusion and reranker to default to.

Not a test: it prints tables. Run from the repository root:

    .venv/bin/python -m bench.retrieval_quality                   # quality tables + confidence signals
    .venv/bin/python -m bench.retrieval_quality --speed           # BM25 on 100k sentences, encode rates
    .venv/bin/python -m bench.retrieval_quality --encoded-chunks  # also encode chunk text (slow, cached)

Sentence (and chunk) vectors are cached under var/cache/ keyed by a hash of
each text, so only the first run pays for encoding (~90k sentences: several
minutes to half an hour on a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bench.common import REPO
from documents.parsing import clapnq_passage_id, iter_analyst_bench_corpus, iter_clapnq
from documents.parsing.jsonl import jsonl_file
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from qa.pipeline.search.rerank import EvidenceReranker, EvidenceWeights, Reranker, top_sentence_similarity
from qa.pipeline.search.retrieval import RetrievalConfig, retrieve
from review.evaluation.reference import UNANSWERABLE, default_data_dir

# The model loads lazily, after these are set: nothing here downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = default_data_dir()  # GROUNDEDQA_SHARED_DATA, else ../shared/data
CACHE = REPO / "var" / "cache"
MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Question:
    text: str
    gold: str  # document id
    answerable: bool


class MemoEmbedder:
    """Questions are embedded once per run, in memory (the disk cache is for the corpus)."""

    def __init__(self, inner) -> None:
        self.inner, self.memo = inner, {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.inner.encode(missing), strict=True))
        return np.stack([self.memo[t] for t in texts])


def analyst_bench() -> tuple[list, dict[str, list[Question]]]:
    root = DATA / "analyst-bench"
    documents = list(iter_analyst_bench_corpus(root))
    splits = {}
    for split in ("train", "dev"):
        splits[split] = [
            Question(r["question"], r["doc_id"], r.get("edge_case_type") != UNANSWERABLE)
            for _, _, r in jsonl_file(root / "questions" / f"{split}.jsonl")
        ]
    return documents, splits


def clapnq() -> tuple[list, list[Question]]:
    files = [DATA / "clapnq-dev" / f"clapnq_dev_{kind}.jsonl" for kind in ("answerable", "unanswerable")]
    questions = []
    for path in files:
        for _, _, record in jsonl_file(path):
            passage = record["passages"][0]
            gold = clapnq_passage_id(passage["title"], passage["text"])
            questions.append(Question(record["input"], gold, "unanswerable" not in path.name))
    return list(iter_clapnq(files)), questions


def ranking_metrics(rankings: Sequence[Sequence[str]], golds: Sequence[str]) -> dict[str, float]:
    """Recall@1, Recall@5 and MRR of the gold document (reciprocal rank 0 when absent)."""
    pairs = zip(rankings, golds, strict=True)
    ranks = [ranking.index(gold) + 1 if gold in ranking else None for ranking, gold in pairs]
    n = max(len(ranks), 1)
    return {
        "R@1": sum(r == 1 for r in ranks) / n,
        "R@5": sum(r is not None and r <= 5 for r in ranks) / n,
        "MRR": sum(1 / r for r in ranks if r) / n,
    }


def run(index, embedder, questions, config, reranker: Reranker | None):
    started = time.perf_counter()
    results = [retrieve(q.text, index, embedder, config, reranker) for q in questions]
    return results, (time.perf_counter() - started) / max(len(questions), 1)


CONFIGS = [
    (unit, method, fusion)
    for unit in ("document", "chunk", "sentence")
    for method, fusion in (("bm25", "minmax"), ("dense", "minmax"), ("hybrid", "minmax"), ("hybrid", "rrf"))
]
ABLATIONS = {
    "none": None,
    "evidence": EvidenceWeights(),  # the default
    "-doc": EvidenceWeights(document_similarity=0.0),
    "-maxsim": EvidenceWeights(sentence_similarity=0.0),
    "+bm25s": EvidenceWeights(sentence_bm25=1.0, document_bm25=1.0),
    "+sentbm25": EvidenceWeights(sentence_bm25=1.0),
}


def quality_table(benchmarks, embedder, configs=CONFIGS, rerankers=("none", "evidence"), **overrides) -> None:
    header = f"{'unit':9}{'method':7}{'fusion':7}{'rerank':10}"
    print(header + "".join(f"{name:>21}" for name, *_ in benchmarks) + f"{'ms/q':>6}")
    print(" " * 33 + "".join(f"{'R@1   R@5   MRR':>21}" for _ in benchmarks))
    for unit, method, fusion in configs:
        for reranker_name in rerankers:
            config = RetrievalConfig(unit=unit, method=method, fusion=fusion, **overrides)
            weights = ABLATIONS[reranker_name]
            cells, times = [], []
            for _, index, questions in benchmarks:
                reranker = EvidenceReranker(index, embedder, weights=weights) if weights else None
                results, elapsed = run(index, embedder, questions, config, reranker)
                m = ranking_metrics([r.documents() for r in results], [q.gold for q in questions])
                cells.append(f"{m['R@1']:6.3f}{m['R@5']:6.3f}{m['MRR']:6.3f}")
                times.append(elapsed * len(questions))
            shown_fusion = fusion if method == "hybrid" else "-"
            ms = 1000 * sum(times) / sum(len(q) for *_, q in benchmarks)
            print(
                f"{unit:9}{method:7}{shown_fusion:7}{reranker_name:10}"
                + "".join(f"{c:>21}" for c in cells)
                + f"{ms:6.0f}",
                flush=True,
            )


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Probability that a random answerable question scores above a random unanswerable one."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positives for n in negatives]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def confidence_report(name, index, embedder, questions, config, reranker) -> None:
    """Quantiles of two candidate refusal signals, answerable vs unanswerable questions."""
    results, _ = run(index, embedder, questions, config, reranker)
    signals = {
        "top sentence cosine": lambda r: top_sentence_similarity(r.passages) or 0.0,
        "top passage dense": lambda r: max((h.scores.get("dense", 0.0) for h in r.passages), default=0.0),
    }
    for signal, measure in signals.items():
        values: dict[bool, list[float]] = {True: [], False: []}
        for question, result in zip(questions, results, strict=True):
            values[question.answerable].append(measure(result))
        for answerable in (True, False):
            if values[answerable]:
                q = np.quantile(values[answerable], [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1])
                kind = "answerable" if answerable else "unanswerable"
                print(
                    f"{name:20}{signal:21}{kind:13}{len(values[answerable]):4}  "
                    + " ".join(f"{v:.3f}" for v in q)
                )
        print(f"{'':20}{signal:21}AUC answerable > unanswerable: {auc(values[True], values[False]):.3f}")
        if values[True] and values[False]:
            points = []
            for threshold in (0.40, 0.45, 0.50, 0.55, 0.60):
                kept = np.mean(np.array(values[True]) >= threshold)
                refused = np.mean(np.array(values[False]) < threshold)
                points.append(
                    f"refuse below {threshold:.2f}: keeps {kept:4.0%} of answerable, "
                    f"refuses {refused:4.0%} of unanswerable"
                )
            print("\n".join(" " * 41 + point for point in points))


def build(documents, embedder, **kwargs) -> tuple[InMemoryCorpusIndex, float]:
    started = time.perf_counter()
    index = InMemoryCorpusIndex(documents, embedder, **kwargs)
    return index, time.perf_counter() - started


def bm25_speed(documents, size: int) -> None:
    from rank_bm25 import BM25Okapi

    from qa.pipeline.search.bm25 import BM25Index, tokenize

    # The corpus' own sentences, repeated when ``size`` exceeds them (~89k):
    # repeats lengthen posting lists as a bigger corpus would.
    texts = [s.text for d in documents for s in d.sentences]
    texts = (texts * (size // len(texts) + 1))[:size]
    items = [(f"s{i}", t) for i, t in enumerate(texts)]
    queries = [
        "What political reforms did Sultan Qaboos enact after the 2011 protests?",
        "How long could Germany operate without Russian gas if storage were full?",
        "Who won Mali's presidential elections in 2013 and 2018?",
        "extra ballots printed by the electoral commission",
    ]
    started = time.perf_counter()
    index = BM25Index(items)
    print(f"BM25Index build, {size} sentences: {time.perf_counter() - started:.2f} s")
    for k in (10, 50):
        started = time.perf_counter()
        for _ in range(25):
            for query in queries:
                index.search(query, k)
        print(f"BM25Index query (k={k}): {1000 * (time.perf_counter() - started) / 100:.2f} ms")
    if size > 200_000:
        return  # rank-bm25 would take many seconds per query
    started = time.perf_counter()
    reference = BM25Okapi([tokenize(t) for _, t in items])
    print(f"rank_bm25 build: {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    for query in queries:
        reference.get_scores(tokenize(query))
    print(f"rank_bm25 query: {1000 * (time.perf_counter() - started) / len(queries):.0f} ms")


def encode_speed(documents, model) -> None:
    sentences = [s.text for d in documents for s in d.sentences][:512]
    chunks = [" ".join(s.text for s in d.sentences[:8]) for d in documents if len(d.sentences) >= 8][:128]
    for name, sample in (("sentences", sentences), ("8-sentence chunks", chunks)):
        model.encode(sample[:8])  # warm-up
        started = time.perf_counter()
        model.encode(sample)
        rate = len(sample) / (time.perf_counter() - started)
        words = statistics.mean(len(t.split()) for t in sample)
        print(f"encode {name} (mean {words:.0f} words): {rate:.1f} texts/s over {len(sample)} texts")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--speed", action="store_true", help="BM25 and encoding timings only")
    parser.add_argument("--bm25-size", type=int, default=100_000, help="sentences in the BM25 timing")
    parser.add_argument(
        "--encoded-chunks", action="store_true", help="also encode analyst-bench chunk text (slow, cached)"
    )
    args = parser.parse_args()

    model = SentenceTransformerEmbedder()
    corpus_embedder = CachingEmbedder(model, CACHE, MODEL)
    query_embedder = MemoEmbedder(model)
    ab_documents, ab_splits = analyst_bench()
    if args.speed:
        bm25_speed(ab_documents, args.bm25_size)
        encode_speed(ab_documents, model)
        return
    cq_documents, cq_questions = clapnq()
    query_embedder.encode([q.text for q in cq_questions + ab_splits["train"] + ab_splits["dev"]])

    ab_index, seconds = build(ab_documents, corpus_embedder)
    sizes = {unit: len(ab_index.passages(unit)) for unit in ("document", "chunk", "sentence")}
    print(
        f"analyst-bench: {sizes} (chunks: 8 sentences, overlap 2); "
        f"index built in {seconds:.1f} s from cached vectors"
    )
    cq_index, _ = build(cq_documents, corpus_embedder)
    cq_answerable = [q for q in cq_questions if q.answerable]
    benchmarks = [
        ("analyst-bench train", ab_index, ab_splits["train"]),
        ("analyst-bench dev", ab_index, ab_splits["dev"]),
        ("CLAPNQ answerable", cq_index, cq_answerable),
        ("CLAPNQ all 200", cq_index, cq_questions),
    ]
    print(
        "\n== Document ranking: gold document's rank (CLAPNQ: the question's own passage);"
        " 50 candidates per retriever, all reranked"
    )
    quality_table(benchmarks, query_embedder)

    print("\n== Evidence reranker ablation (chunk, hybrid min-max, alpha 0.5)")
    quality_table(
        benchmarks, query_embedder, configs=[("chunk", "hybrid", "minmax")], rerankers=tuple(ABLATIONS)
    )

    print("\n== Min-max alpha (weight of dense), chunk hybrid, evidence reranker")
    for alpha in (0.3, 0.5, 0.7):
        print(f"alpha={alpha}")
        quality_table(benchmarks, query_embedder, configs=[("chunk", "hybrid", "minmax")], alpha=alpha)

    print("\n== Candidates per retriever (chunk hybrid min-max)")
    for candidates in (20, 50, 100):
        print(f"candidates={candidates}")
        quality_table(
            benchmarks,
            query_embedder,
            configs=[("chunk", "hybrid", "minmax")],
            candidates=candidates,
            rerank_depth=2 * candidates,
        )

    print("\n== Document vectors: mean of sentence vectors vs mean of chunk vectors (document unit)")
    for mode in ("sentences", "chunks"):
        print(f"document_vectors={mode}")
        a, _ = build(ab_documents, corpus_embedder, document_vectors=mode)
        c, _ = build(cq_documents, corpus_embedder, document_vectors=mode)
        quality_table(
            [(n, a if "analyst" in n else c, q) for n, _, q in benchmarks],
            query_embedder,
            configs=[("document", "dense", "minmax"), ("document", "hybrid", "minmax")],
        )

    print("\n== Chunk vectors: pooled sentence vectors vs encoded chunk text")
    chunk_corpora = [("CLAPNQ", cq_documents, [b for b in benchmarks if "CLAPNQ" in b[0]])]
    if args.encoded_chunks:
        chunk_corpora.append(("analyst-bench", ab_documents, [b for b in benchmarks if "analyst" in b[0]]))
    for label, documents, subset in chunk_corpora:
        for mode in ("pooled", "encoded"):
            index, seconds = build(documents, corpus_embedder, chunk_vectors=mode)
            print(f"{label}, chunk_vectors={mode}: index built in {seconds:.1f} s (cached vectors: 0 s)")
            quality_table(
                [(n, index, q) for n, _, q in subset],
                query_embedder,
                configs=[("chunk", "dense", "minmax"), ("chunk", "hybrid", "minmax")],
            )

    print("\n== Retrieval confidence for refusal: default configuration (chunk hybrid + evidence)")
    print(f"{'':20}{'signal':21}{'questions':13}{'n':>4}  min   p10   p25   p50   p75   p90   max")
    default = RetrievalConfig()
    for name, index, questions in (benchmarks[0], benchmarks[1], benchmarks[3]):
        reranker = EvidenceReranker(index, query_embedder)
        confidence_report(name, index, query_embedder, questions, default, reranker)


if __name__ == "__main__":
    main()
