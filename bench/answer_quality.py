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

With ``--llm local`` the presets that ask for an LLM get the local GGUF model through the
site's ``llamacpp`` client (``QA_LLM_MODEL``, default var/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf;
``QA_LLM_THREADS``, default 1 here), so the report's and the policy study's LLM presets run
without a database. ``--json-dir`` writes one JSON per preset as it finishes, seconds per
question included; ``--judge`` also scores answers 1-5 with the same LLM and the evaluation
harness's judge prompt (slow: one more generation per question):

    QA_LLM_THREADS=1 nice -n 15 .venv/bin/python -m bench.answer_quality --llm local \
        --only analyst-bench --split train --preset vanilla basic advanced --json-dir bench/results
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
import time
from pathlib import Path

from bench.common import REPO
from bench.retrieval_quality import CACHE, DATA, MODEL, MemoEmbedder, analyst_bench, build, clapnq
from qa.pipeline.config.presets import get_preset
from qa.pipeline.core.llm import LLMError, build_llm
from qa.pipeline.core.protocols import LLM
from qa.pipeline.drafting.prompts import judge_answer
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.run import PipelineRun
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder
from review.benchmark_files import read_clapnq
from review.evaluation.evaluate import evaluate, missing_prediction
from review.evaluation.predictions import prediction_from_run
from review.evaluation.reference import load_gold_cases, load_gold_sentence_texts
from review.evaluation.types import GoldCase, Prediction

# The model loads lazily, after these are set: nothing here downloads.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHOWN = ("recall_at_1", "recall_at_5", "citation_precision", "citation_recall", "citation_f1")
SHOWN += ("evidence_score", "answer_token_f1", "refusal_precision", "refusal_recall", "refusal_f1", "jafs")
SHOWN += ("confidence_ece", "answer_score")
LOCAL_GGUF = REPO / "var" / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def local_llm(environ=os.environ) -> LLM:
    """The site's llamacpp client from the same settings the site reads (QA_LLM_MODEL,
    QA_LLM_THREADS); one thread unless told, since a bench shares the machine."""
    model = environ.get("QA_LLM_MODEL") or str(LOCAL_GGUF)
    threads = int(environ.get("QA_LLM_THREADS") or 1)
    try:
        return build_llm("llama_cpp", model_path=model, n_threads=threads)
    except LLMError as exc:
        raise SystemExit(
            f"--llm local: {exc} (QA_LLM_MODEL names the .gguf file; `make local-llm` makes it)"
        ) from exc


def clapnq_cases() -> tuple[list[GoldCase], dict[str, str]]:
    plan = read_clapnq([DATA / "clapnq-dev"])
    cases = [
        GoldCase(c.case_id, c.question, c.gold_documents, c.gold_evidence, c.reference_answer, c.answerable)
        for c in plan.cases
    ]
    return cases, {key: text for c in plan.cases for key, text in c.evidence_texts.items()}


def predict(
    case: GoldCase, index, embedder, config, llm: LLM | None = None
) -> tuple[Prediction, PipelineRun]:
    # Without an LLM, presets that ask for one run with their no-LLM substitutes, as on a site without one.
    pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder, llm=llm))
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


def report(
    name: str,
    cases,
    gold_texts,
    index,
    embedder,
    config,
    show_cases: bool,
    convention: str,
    *,
    llm: LLM | None = None,
    judge: LLM | None = None,
) -> dict:
    """Print the split's metrics; return them with each case's seconds, for ``--json-dir``."""
    predictions, rows = [], []
    substitutions: set[str] = set()
    for case in cases:
        clock = time.perf_counter()
        try:
            prediction, run = predict(case, index, embedder, config, llm)
            error = ""
        except LLMError as exc:
            # Scored as the evaluation page scores a case that got no answer: not refused, nothing cited.
            prediction, run, error = missing_prediction(case.case_id), None, f"{type(exc).__name__}: {exc}"
            print(f"  {case.case_id}: no answer ({error})", flush=True)
        seconds = time.perf_counter() - clock
        if run is not None:
            substitutions.update(run.substitutions)
        if judge is not None and run is not None:
            try:
                score = judge_answer(
                    judge, case.question, prediction.answer, case.reference_answer, case.rubric
                )
            except LLMError:
                score = None  # unjudged, as the evaluation harness leaves it
            prediction = dataclasses.replace(prediction, answer_score=None if score is None else float(score))
        predictions.append(prediction)
        rows.append(
            {
                "case_id": case.case_id,
                "answerable": case.answerable,
                "refused": prediction.refused,
                "seconds": round(seconds, 2),
                "error": error,
                "answer": prediction.answer,
                "answer_score": prediction.answer_score,
                "retrieved": list(prediction.retrieved_documents[:5]),
                "cited": list(prediction.cited_evidence),
                "gold_evidence": list(case.gold_evidence),
            }
        )
        if show_cases and run is not None:
            confidence = run.answering.retrieval_confidence if run.answering else None
            print(
                f"  {case.case_id} answerable={case.answerable} refused={prediction.refused} "
                f"conf={confidence} top={prediction.retrieved_documents[:1]} "
                f"gold={case.gold_documents} cited={list(prediction.cited_evidence)} "
                f"gold_ev={list(case.gold_evidence)} {seconds:.1f}s",
                flush=True,
            )
    result = evaluate(cases, predictions, gold_texts, convention=convention)
    cells = "  ".join(
        f"{key}={value:.3f}" if value is not None else f"{key}=-"
        for key, value in result.metrics.items()
        if key in SHOWN
    )
    seconds = [row["seconds"] for row in rows]
    print(f"{name} ({len(cases)}): {cells}  s/question={statistics.mean(seconds):.1f}", flush=True)
    return {
        "metrics": result.metrics,
        "seconds_per_question": {
            "mean": round(statistics.mean(seconds), 2),
            "median": round(statistics.median(seconds), 2),
            "max": round(max(seconds), 2),
            "total": round(sum(seconds), 1),
        },
        "refusals": {
            "refused": sum(row["refused"] for row in rows),
            "refused_unanswerable": sum(row["refused"] and not row["answerable"] for row in rows),
            "unanswerable": sum(not row["answerable"] for row in rows),
        },
        "substitutions": sorted(substitutions),
        "cases": rows,
    }


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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", nargs="+", default=["default"], help="one or more, run in order")
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
    parser.add_argument(
        "--llm",
        choices=("none", "local"),
        default="none",
        help="local: the GGUF model of QA_LLM_MODEL through the llamacpp client (QA_LLM_THREADS, default 1)",
    )
    parser.add_argument("--judge", action="store_true", help="score answers 1-5 with the --llm model")
    parser.add_argument(
        "--json-dir",
        type=Path,
        help="write <benchmark>_<split>_<tag>_<preset>.json here as each preset finishes",
    )
    parser.add_argument(
        "--tag", default="", help="part of the JSON file names (default: local_llm with --llm local)"
    )
    args = parser.parse_args(argv)
    if args.judge and args.llm == "none":
        parser.error("--judge needs --llm local")
    return args


def result_path(directory: Path, benchmark: str, split: str, tag: str, preset: str) -> Path:
    name = "_".join(part for part in (benchmark.replace("-", "_"), split, tag, preset) if part)
    return directory / f"{name}.json"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    llm = local_llm() if args.llm == "local" else None
    tag = args.tag or ("local_llm" if llm is not None else "")
    model = SentenceTransformerEmbedder()
    corpus_embedder = CachingEmbedder(model, CACHE, MODEL)
    # Answering encodes questions and context sentences: the disk cache serves both.
    embedder = MemoEmbedder(corpus_embedder)
    benchmarks = []
    if args.only != "clapnq":
        documents, _ = analyst_bench()
        if args.distractors is not None:
            documents = with_distractors(documents, args.distractors)
        index, _ = build(documents, corpus_embedder)
        gold_texts = load_gold_sentence_texts(data_dir=DATA)
        for split in (args.split,) if args.split else ("train", "dev", "test"):
            benchmarks.append(
                ("analyst-bench", split, load_gold_cases(split, data_dir=DATA), gold_texts, index)
            )
    if args.only != "analyst-bench":
        documents, _ = clapnq()
        index, _ = build(documents, corpus_embedder)
        cases, gold_texts = clapnq_cases()
        benchmarks.append(("clapnq", "dev", cases, gold_texts, index))
    for preset in args.preset:
        config = with_overrides(get_preset(preset), args.set)
        for benchmark, split, cases, gold_texts, index in benchmarks:
            load_before = os.getloadavg()
            result = report(
                f"{preset}: {benchmark} {split}",
                cases,
                gold_texts,
                index,
                embedder,
                config,
                args.cases,
                args.convention,
                llm=llm,
                judge=llm if args.judge else None,
            )
            if args.json_dir is None:
                continue
            document = {
                "benchmark": benchmark,
                "split": split,
                "path": "bench.answer_quality (in-memory index of the full corpus, no database)",
                "llm": getattr(llm, "name", None),
                "llm_threads": int(os.environ.get("QA_LLM_THREADS") or 1) if llm is not None else None,
                "judge": getattr(llm, "name", None) if args.judge else None,
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
                "preset": {"name": preset, "overrides": args.set, "config": config.to_dict()},
                **result,
            }
            path = result_path(args.json_dir, benchmark, split, tag, preset)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(document, indent=2, default=str) + "\n")
            print(f"  wrote {path}", flush=True)


if __name__ == "__main__":
    main()
