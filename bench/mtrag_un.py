"""MTRAG-UN per answerability class, without the database: the fast loop for conversations.

The same pipeline code the workers run (``build_pipeline``, ``answer_question``),
over one in-memory index per collection (the pooled reference passages, as
``import_benchmark --format mtrag-un`` stores them), each task asked as the
follow-up it is: its earlier turns rewrite it first. Scored by
``review.evaluation.classes`` (refusal F1, clarifying questions, citation
precision per class). Tune on ``--split train``; report ``--split test``.

    .venv/bin/python -m bench.mtrag_un --split train
    .venv/bin/python -m bench.mtrag_un --split test --rewrite prefix     # the old rewrite, for comparison
    .venv/bin/python -m bench.mtrag_un --split test --expand             # pseudo-relevance feedback on
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence

from bench.answer_quality import with_overrides
from bench.retrieval_quality import CACHE, DATA, MODEL, MemoEmbedder, build
from qa.pipeline.config.presets import get_preset
from qa.pipeline.dialogue import conversation
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder
from review.benchmark_files import read_mtrag_un
from review.evaluation.classes import CLASSES, ClassCase, class_metrics
from review.evaluation.evaluate import evaluate
from review.evaluation.predictions import prediction_from_run
from review.evaluation.types import GoldCase

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def history_pairs(turns: Sequence[dict]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for turn in turns:
        if turn["speaker"] == "user":
            pairs.append((turn["text"], ""))
        elif pairs:
            pairs[-1] = (pairs[-1][0], turn["text"])
    return pairs


def rewritten(question: str, history: list[tuple[str, str]], mode: str) -> conversation.Rewrite | None:
    if not history:
        return None
    if mode == "none":
        return conversation.Rewrite(question, question)
    if mode == "prefix":
        return conversation.Rewrite(conversation.prefix_rewrite(question, history), question, "prefix")
    return conversation.rewrite(question, history)


def run_collection(plan, split: str, index, embedder, config, mode: str, show: bool):
    pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
    rows = []
    for case in plan.cases:
        if split != "all" and case.split != split:
            continue
        history = history_pairs(case.metadata["conversation"])
        searched = rewritten(case.question, history, mode)
        run = answer_question(case.question, pipeline=pipeline, rewrite=searched)
        prediction = prediction_from_run(case.case_id, run)
        rows.append((case, prediction, run))
        if show:
            shown = (searched.question if searched else case.question)[:90]
            # A clarifying question is shown whole: it is the reply to read.
            reply = prediction.answer if prediction.kind == "underspecified" else prediction.answer[:90]
            print(
                f"  {case.split:<5} {case.metadata['answerability']:>14} -> {prediction.kind:<14} "
                f"| {case.question[:70]!r} | searched as {shown!r} | {reply!r}",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="train", choices=("train", "test", "all"))
    parser.add_argument("--preset", default="default")
    parser.add_argument("--rewrite", default="memory", choices=("memory", "prefix", "none"))
    parser.add_argument("--collection", action="append", help="only these collections")
    parser.add_argument("--cases", action="store_true", help="one line per case")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--json", help="write the metrics here")
    parser.add_argument("--dump", help="write one JSON line per turn here (error analysis)")
    args = parser.parse_args()

    config = with_overrides(get_preset(args.preset), args.set)
    corpus_embedder = CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)
    embedder = MemoEmbedder(corpus_embedder)
    plans = read_mtrag_un(DATA / "mtrag-un")
    rows = []
    started = time.perf_counter()
    for collection, plan in plans.items():
        if args.collection and collection not in args.collection:
            continue
        index, _ = build(plan.documents, corpus_embedder)
        rows += run_collection(plan, args.split, index, embedder, config, args.rewrite, args.cases)
    seconds = time.perf_counter() - started
    # One run over all tasks reports each half too: the same replies, split by conversation.
    splits = ("train", "test", "all") if args.split == "all" else (args.split,)
    results = {}
    for split in splits:
        chosen = [row for row in rows if split == "all" or row[0].split == split]
        results[split] = split_metrics(chosen)
        print_table(results[split], args, len(chosen), seconds, split)
    if args.dump:
        dump_turns(rows, args.dump)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(
                {"args": vars(args), "metrics": results[args.split], "splits": results}, handle, indent=1
            )


def dump_turns(rows, path: str) -> None:
    """One line per turn: its class, the reply, the note (which rule decided) and answerability's
    numbers, so the biggest buckets of errors can be counted (train only when tuning)."""
    with open(path, "w", encoding="utf-8") as handle:
        for case, prediction, run in rows:
            verdict = run.trust.answerability if run.trust is not None else None
            signals = verdict.signals if verdict is not None else None
            searched = run.conversation
            line = {
                "case": case.case_id,
                "split": case.split,
                "class": case.metadata["answerability"],
                "reply": prediction.kind,
                "question": case.question,
                "searched": searched.question if searched else case.question,
                "resolved": [list(pair) for pair in searched.resolved] if searched else [],
                "unresolved": list(searched.unresolved) if searched else [],
                "carried": list(searched.carried) if searched else [],
                "definite": list(searched.definite) if searched else [],
                "open_references": list(searched.open_references) if searched else [],
                "missing": list(run.answer.missing) if run.answer is not None else [],
                "turn_kind": run.turn_kind.reason if run.turn_kind is not None else None,
                "note": run.answer.note if run.answer is not None else "",
                "answer": prediction.answer[:300],
                "verdict": verdict.kind if verdict else None,
                "probability": round(verdict.probability, 4) if verdict else None,
                "by_rule": verdict.by_rule if verdict else None,
                "reader": round(signals.reader_answerable, 4) if signals else None,
                "best_cosine": round(signals.best_sentence_cosine, 4) if signals else None,
                "focus_coverage": round(signals.focus_coverage, 4) if signals else None,
            }
            handle.write(json.dumps(line) + "\n")


def split_metrics(rows) -> dict:
    cases = [ClassCase(c.case_id, c.metadata["answerability"], c.gold_evidence) for c, _, _ in rows]
    metrics = class_metrics(cases, {p.case_id: p for _, p, _ in rows})
    gold = [
        GoldCase(c.case_id, c.question, c.gold_documents, c.gold_evidence, c.reference_answer, c.answerable)
        for c, _, _ in rows
    ]
    overall = evaluate(gold, [p for _, p, _ in rows], {}, convention="stated").metrics
    metrics.update({k: overall[k] for k in ("recall_at_1", "recall_at_5")})
    return metrics


REPLIES = ("answerable", "partial", "underspecified", "unanswerable")


def print_table(metrics: dict, args, count: int, seconds: float, split: str) -> None:
    def cell(value):
        return "-" if value is None else f"{value:.3f}"

    print(
        f"MTRAG-UN {split}, preset {args.preset}, rewrite {args.rewrite} {args.set}: {count} tasks "
        f"({seconds:.0f} s)"
    )
    print(f"{'class':<15}{'n':>4}  answered  partial  clarified  refused  cite-P")
    for kind in CLASSES:
        shares = [cell(metrics[f"{kind}_replied_{reply}"]) for reply in REPLIES]
        precision = cell(metrics[f"{kind}_citation_precision"])
        print(
            f"{kind:<15}{int(metrics[f'{kind}_cases']):>4}  {shares[0]:>8}  {shares[1]:>7}  {shares[2]:>9}"
            f"  {shares[3]:>7}  {precision:>6}"
        )
    print(
        f"refusal P/R/F1 {cell(metrics['refusal_precision'])}/{cell(metrics['refusal_recall'])}/"
        f"{cell(metrics['refusal_f1'])}; clarified {cell(metrics['clarified'])}; "
        f"answerable cite-P {cell(metrics['answerable_citation_precision'])}; "
        f"R@1 {cell(metrics['recall_at_1'])} R@5 {cell(metrics['recall_at_5'])}"
    )


if __name__ == "__main__":
    main()
