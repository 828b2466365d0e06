"""Where analyst-bench citation F1 is lost, question by question (issue 11).

Runs a preset (``default`` unless told) over an in-memory index, as
bench/answer_quality.py does, and prints per question: the outcome (answered,
refused, clarifying question), whether the answer came from the gold document,
the sentences cited against the gold evidence, and a bucket naming the largest
loss: ``wrong document``, ``refused``, ``clarified``, ``too many`` (precision
lost to extra sentences), ``too few`` (gold sentences left out), ``both``. A
summary adds up what each bucket costs in mean F1.

    .venv/bin/python -m bench.citation_errors --split train          # gold + cached documents
    .venv/bin/python -m bench.citation_errors --split train --full   # all 787 (encodes what is not cached)

Without ``--full`` the corpus is the gold documents plus every document whose
sentences are all in var/cache already, read without writing the cache (another
bench may be filling it), so retrieval sees fewer distractors than on the full
corpus: its R@1 is optimistic, and the citation numbers are labelled as such.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

from bench.answer_quality import predict, with_overrides
from bench.answerability import CacheReader, cached_or_gold
from bench.retrieval_quality import CACHE, DATA, MODEL, MemoEmbedder, analyst_bench, build
from qa.pipeline.config.presets import get_preset
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder
from review.evaluation.evaluate import evaluate
from review.evaluation.metrics import citation_prf
from review.evaluation.reference import load_gold_cases
from review.evaluation.types import split_evidence_key

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def bucket(case, prediction, kind: str) -> str:
    """The largest loss of one case, by what went wrong first."""
    if kind == "underspecified":
        return "clarified"
    if prediction.refused:
        return "refused" if case.gold_evidence else "refused (right)"
    cited_documents = {split_evidence_key(key)[0] for key in prediction.cited_evidence}
    gold_documents = {split_evidence_key(key)[0] for key in case.gold_evidence}
    if not case.gold_evidence:
        return "answered unanswerable"
    if not cited_documents & gold_documents:
        return "wrong document"
    score = citation_prf(prediction.cited_evidence, case.gold_evidence)
    if score.f1 == 1.0:
        return "exact"
    extra, left = score.precision < 1.0, score.recall < 1.0
    return "both" if extra and left else "too many" if extra else "too few"


def labels(keys) -> str:
    return " ".join(split_evidence_key(key)[1] for key in keys)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default="default")
    parser.add_argument("--split", default="train", choices=("train", "dev", "test"))
    parser.add_argument("--full", action="store_true", help="all 787 documents (fills the cache)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    args = parser.parse_args()

    config = with_overrides(get_preset(args.preset), args.set)
    model = SentenceTransformerEmbedder()
    cache = CachingEmbedder(model, CACHE, MODEL)
    corpus_embedder = cache if args.full else CacheReader(cache, model)
    documents, _ = analyst_bench()
    if not args.full:
        documents = cached_or_gold(documents, corpus_embedder)
    index, _ = build(documents, corpus_embedder)
    embedder = MemoEmbedder(corpus_embedder)
    cases = load_gold_cases(args.split, data_dir=DATA)
    predictions, costs = [], Counter()
    counts = Counter()
    for case in cases:
        prediction, run = predict(case, index, embedder, config)
        predictions.append(prediction)
        name = bucket(case, prediction, prediction.kind)
        score = citation_prf(prediction.cited_evidence, case.gold_evidence)
        counts[name] += 1
        if score is not None:
            costs[name] += 1.0 - score.f1
        f1 = f"{score.f1:.2f}" if score else "-"
        top = prediction.retrieved_documents[0] if prediction.retrieved_documents else "-"
        print(f"{case.case_id} [{name}] F1 {f1} top-is-gold={top in case.gold_documents}")
        print(f"    Q: {case.question}")
        print(f"    cited: {labels(prediction.cited_evidence)}   gold: {labels(case.gold_evidence)}")
    result = evaluate(cases, predictions, {}, convention="report")
    n = sum(1 for c in cases if c.gold_evidence)
    metrics = result.metrics
    print(f"\n{args.split}: citation F1 {metrics['citation_f1']:.3f} over {n} cases with gold evidence")
    refused = [p.refused for p in predictions]
    unanswerable = [r for r, c in zip(refused, cases, strict=True) if not c.answerable]
    for_answerable = [r for r, c in zip(refused, cases, strict=True) if c.answerable]
    print(
        f"  R@1 {metrics['recall_at_1']:.3f}  R@5 {metrics['recall_at_5']:.3f}  refused {sum(unanswerable)} "
        f"of {len(unanswerable)} unanswerable, {sum(for_answerable)} of {len(for_answerable)} answerable"
    )
    answerable = [m for c, m in zip(cases, result.per_case, strict=True) if c.answerable and c.gold_evidence]
    if answerable:
        mean = sum(row["citation_f1"] for row in answerable) / len(answerable)
        print(f"  answerable only (refused = 0): citation F1 {mean:.3f} over {len(answerable)}")
    for name, count in counts.most_common():
        print(f"  {name:22} {count:2} cases, costs {costs[name] / max(n, 1):.3f} of mean F1")


if __name__ == "__main__":
    main()
