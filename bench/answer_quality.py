"""Answer quality of a preset, end to end, without the database: for tuning answering and refusal.

The same pipeline code the workers run (``qa.pipeline.flow.factory.build_pipeline`` and
``qa.pipeline.flow.runner.answer_question``)
over an in-memory index of the full corpus built from cached sentence vectors
(see bench/retrieval_quality.py), scored by the evaluation harness's own metric
code (``review.evaluation``). The numbers to report come from
``manage.py evaluate`` against the database; this script is the fast loop
for trying answering settings (a few seconds per split once vectors are cached).

    .venv/bin/python -m bench.answer_quality                    # default preset, all splits + CLAPNQ
    .venv/bin/python -m bench.answer_quality --preset bm25 --cases   # per-case lines too
"""

from __future__ import annotations

import argparse
import json
import os
import random

from bench.retrieval_quality import CACHE, DATA, MODEL, MemoEmbedder, analyst_bench, build, clapnq
from qa.pipeline.config.presets import get_preset
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import PipelineRun
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder
from review.benchmark_files import read_clapnq
from review.evaluation.evaluate import evaluate
from review.evaluation.predictions import prediction_from_run
from review.evaluation.reference import load_gold_cases, load_gold_sentence_texts
from review.evaluation.types import GoldCase, Prediction

# The model loads lazily, after these are set: nothing here downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHOWN = ("recall_at_1", "recall_at_5", "citation_precision", "citation_recall", "citation_f1")
SHOWN += ("evidence_score", "answer_token_f1", "refusal_precision", "refusal_recall", "refusal_f1", "jafs")
SHOWN += ("confidence_ece",)


def clapnq_cases() -> tuple[list[GoldCase], dict[str, str]]:
    plan = read_clapnq([DATA / "clapnq-dev"])
    cases = [
        GoldCase(c.case_id, c.question, c.gold_documents, c.gold_evidence, c.reference_answer, c.answerable)
        for c in plan.cases
    ]
    return cases, {key: text for c in plan.cases for key, text in c.evidence_texts.items()}


def predict(case: GoldCase, index, embedder, config) -> tuple[Prediction, PipelineRun]:
    # No LLM here: presets that ask for one run with their no-LLM substitutes, as on a site without one.
    pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
    run = answer_question(case.question, pipeline=pipeline)  # the agentic preset: in parts, combined
    return prediction_from_run(case.case_id, run), run


def clapnq_predictions(config, *, progress_every: int = 0):
    """Each CLAPNQ-dev case with the preset's prediction and run, over the in-memory index (the
    cached encoder's vectors); and the query embedder, for benches that score answer sentences."""
    corpus_embedder = CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)
    embedder = MemoEmbedder(corpus_embedder)
    documents, _ = clapnq()
    index, _ = build(documents, corpus_embedder)
    cases, _ = clapnq_cases()
    for number, case in enumerate(cases, 1):
        prediction, run = predict(case, index, embedder, config)
        yield case, prediction, run, embedder
        if progress_every and number % progress_every == 0:
            print(f"  CLAPNQ-dev {number}/{len(cases)}", flush=True)


def report(name: str, cases, gold_texts, index, embedder, config, show_cases: bool, convention: str) -> None:
    predictions = []
    for case in cases:
        prediction, run = predict(case, index, embedder, config)
        predictions.append(prediction)
        if show_cases:
            confidence = run.answering.retrieval_confidence if run.answering else None
            print(
                f"  {case.case_id} answerable={case.answerable} refused={prediction.refused} "
                f"conf={confidence} top={prediction.retrieved_documents[:1]} "
                f"gold={case.gold_documents} cited={list(prediction.cited_evidence)} "
                f"gold_ev={list(case.gold_evidence)}"
            )
    result = evaluate(cases, predictions, gold_texts, convention=convention)
    cells = "  ".join(
        f"{key}={value:.3f}" if value is not None else f"{key}=-"
        for key, value in result.metrics.items()
        if key in SHOWN
    )
    print(f"{name} ({len(cases)}): {cells}")


def with_overrides(config, assignments: list[str]):
    """The preset with FIELD=VALUE overrides applied (values parsed as JSON, else kept as text)."""
    data = config.to_dict()
    for assignment in assignments:
        path, _, raw = assignment.partition("=")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        target = data
        *parents, leaf = path.split(".")
        for part in parents:
            target = target[part]
        if leaf not in target:
            raise SystemExit(f"--set {assignment}: the preset has no field {path!r}")
        target[leaf] = value
    return type(config).from_dict(data)


def with_distractors(documents: list, count: int) -> list:
    """The gold documents and ``count`` others, sampled with a fixed seed (a quick, smaller corpus)."""
    gold = [d for d in documents if d.external_id.startswith("gold/")]
    others = [d for d in documents if not d.external_id.startswith("gold/")]
    return gold + random.Random(0).sample(others, min(count, len(others)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default="default")
    parser.add_argument("--cases", action="store_true", help="print one line per case")
    parser.add_argument("--only", choices=("analyst-bench", "clapnq"), help="one benchmark only")
    parser.add_argument("--convention", default="report", choices=("report", "stated"))
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a preset field, e.g. answer.passages_per_attempt=2 or min_retrieval_confidence=0.4",
    )
    parser.add_argument(
        "--distractors",
        type=int,
        metavar="N",
        help="analyst-bench over its gold documents and N others (a seeded sample) instead of all 787",
    )
    parser.add_argument("--split", choices=("train", "dev", "test"), help="one analyst-bench split only")
    args = parser.parse_args()

    config = with_overrides(get_preset(args.preset), args.set)
    model = SentenceTransformerEmbedder()
    corpus_embedder = CachingEmbedder(model, CACHE, MODEL)
    # Answering encodes questions and context sentences: the disk cache serves both.
    embedder = MemoEmbedder(corpus_embedder)
    if args.only != "clapnq":
        documents, _ = analyst_bench()
        if args.distractors is not None:
            documents = with_distractors(documents, args.distractors)
        index, _ = build(documents, corpus_embedder)
        gold_texts = load_gold_sentence_texts(data_dir=DATA)
        for split in (args.split,) if args.split else ("train", "dev", "test"):
            cases = load_gold_cases(split, data_dir=DATA)
            report(
                f"analyst-bench {split}",
                cases,
                gold_texts,
                index,
                embedder,
                config,
                args.cases,
                args.convention,
            )
    if args.only != "analyst-bench":
        documents, _ = clapnq()
        index, _ = build(documents, corpus_embedder)
        cases, gold_texts = clapnq_cases()
        report("CLAPNQ-dev", cases, gold_texts, index, embedder, config, args.cases, args.convention)


if __name__ == "__main__":
    main()
