"""The local LLM as an answerability judge, by probability (qa.pipeline.checks.llm_judge).

Phase 1 (``collect``): for each question, the ``default`` preset's retrieval (no LLM, refusal
checks off, as bench/answerability.py collects), the answerability signals, and the judge's
P(yes) on the top ``--passages`` passages, from the local GGUF model through
``LlamaCppLLM.yes_probability``. One JSON line per question is appended to
var/llm_judge/<set>.jsonl, so a run that is stopped continues where it was.
Questions are taken in a fixed order (``ordered``: per answerability class even positions first,
then odd, the classes interleaved), so any prefix keeps the class balance and a run cut at half
has measured every 2nd question of each class.

Phase 2 (``report``): 5-fold cross-fitted logistic answerability models (the first-stage model of
bench/answerability.py: ``LogisticModel`` over the signals, threshold fitted on the training folds
as the best unanswerable F1 keeping answerable recall >= 0.95; a question a hard rule refuses is
refused), fold splits 0, 1, 2 stratified by answerability (``folds_of``): signals alone, the judge
alone, signals + judge. Printed and written to bench/results/llm_judge.json with the seconds per
question, the thread count, the load average while collecting and which questions were measured.
Unlike bench/answerability.py no analyst-bench train rows join the training folds (the judge was
not run on them); the signals-alone row is fitted the same way, so the comparison is like for like.

    QA_LLM_THREADS=1 nice -n 10 .venv/bin/python -m bench.llm_judge collect --set clapnq-dev
    QA_LLM_THREADS=1 nice -n 10 .venv/bin/python -m bench.llm_judge collect --set mtrag-un-train --every 2
    .venv/bin/python -m bench.llm_judge report --json bench/results/llm_judge.json
    .venv/bin/python -m bench llm_judge     # both phases on CLAPNQ-dev

MTRAG-UN: the train split's tasks, each follow-up rewritten to stand alone as bench/mtrag_un.py
does; answerable vs unanswerable only (``--kinds``: partial and underspecified tasks are not judged
by default, as they are not scored here).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from bench.answerability_models import auc, best_threshold, prf  # noqa: E402
from qa.pipeline.checks.answerability import (  # noqa: E402
    SIGNAL_NAMES,
    LogisticModel,
    answerability_signals,
    hard_rule,
)
from qa.pipeline.checks.llm_judge import (  # noqa: E402
    JUDGE_NAMES,
    MAX_WORDS,
    PassageJudge,
    judge_values,
)
from qa.pipeline.reading.questions import analyse_question  # noqa: E402

CACHE_DIR = REPO / "var" / "llm_judge"
DEFAULT_MODEL = REPO / "var" / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SETS = ("clapnq-dev", "mtrag-un-train")
MIN_RECALL = 0.95


def ordered(items: list, every: int, kind_of) -> list:
    """Each answerability class in its own order (even positions first, then odd; or every Nth
    only), the classes merged in proportion: any prefix of a run has the set's class balance, and
    a run cut at half has measured every 2nd question of each class."""
    by_kind: dict[str, list] = {}
    for item in items:
        by_kind.setdefault(kind_of(item), []).append(item)
    keyed = []
    for members in by_kind.values():
        sequence = members[::every] if every > 1 else members[::2] + members[1::2]
        keyed += [((i + 0.5) / len(sequence), n, item) for n, (i, item) in enumerate(enumerate(sequence))]
    return [item for *_, item in sorted(keyed, key=lambda k: (k[0], k[1]))]


def clapnq_questions():
    from bench.answer_quality import clapnq_cases
    from bench.retrieval_quality import clapnq

    documents, _ = clapnq()
    cases, _ = clapnq_cases()
    kinds = {True: "answerable", False: "unanswerable"}
    yield documents, [(c.case_id, c.question, c.question, kinds[c.answerable]) for c in cases]


def mtrag_questions():
    from bench.mtrag_un import history_pairs, rewritten
    from bench.retrieval_quality import DATA
    from review.benchmark_files import read_mtrag_un

    for _, plan in sorted(read_mtrag_un(DATA / "mtrag-un").items()):
        chosen = []
        for case in plan.cases:
            if case.split != "train":
                continue
            searched = rewritten(case.question, history_pairs(case.metadata["conversation"]), "memory")
            standalone = searched.question if searched else case.question
            chosen.append((case.case_id, case.question, standalone, case.metadata["answerability"].lower()))
        yield plan.documents, chosen


def collect(args) -> None:
    from bench.answer_quality import with_overrides
    from bench.retrieval_quality import CACHE, MODEL, MemoEmbedder, build
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.core.llm import LlamaCppLLM
    from qa.pipeline.core.model_parts import default_models
    from qa.pipeline.flow.factory import ModelClients, build_pipeline
    from qa.pipeline.flow.run import PipelineRun
    from qa.pipeline.flow.runner import retrieve_stage
    from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder

    threads = int(os.environ.get("QA_LLM_THREADS") or 1)
    llm = LlamaCppLLM(args.model, n_ctx=2048, n_threads=threads)
    judge = PassageJudge(llm, passages=args.passages)
    path = CACHE_DIR / f"{args.set}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if path.exists():
        done = {json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()}
    config = with_overrides(get_preset("default"), ["min_retrieval_confidence=null"])
    corpus_embedder = CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)
    embedder = MemoEmbedder(corpus_embedder)
    # The passage reader's signal (reader_answerable): CLAPNQ-dev's comes from the readers trained
    # without each question's fold (bench/results/reader_heldout.json, merged in ``report``), since
    # the shipped reader saw CLAPNQ-dev; MTRAG-UN's from the shipped reader, which saw none of it.
    reader = default_models().reader if args.set == "mtrag-un-train" else None
    source = clapnq_questions() if args.set == "clapnq-dev" else mtrag_questions()
    groups = list(source)
    # One order over the whole set (collections one after another), cut as ordered() says.
    kinds = set(args.kinds.split(","))
    chosen = [(g, q) for g, (_, questions) in enumerate(groups) for q in questions if q[3] in kinds]
    plan = ordered(chosen, args.every, lambda item: item[1][3])
    if args.limit:
        plan = plan[: args.limit]
    print(f"{args.set}: {len(plan)} questions planned, {len(done)} already in {path}", flush=True)
    indexes: dict[int, object] = {}
    with path.open("a", encoding="utf-8") as out:
        for position, (group, (case_id, question, standalone, kind)) in enumerate(plan):
            if case_id in done:
                continue
            if group not in indexes:
                indexes.clear()
                index, _ = build(groups[group][0], corpus_embedder)
                indexes[group] = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
            pipeline = indexes[group]
            _, result = retrieve_stage(pipeline, PipelineRun(question=standalone))
            analysis = analyse_question(standalone)
            signals = answerability_signals(standalone, result.ranked, analysis=analysis, reader=reader)
            ruled = hard_rule(standalone, result.ranked, analysis, signals)
            load = os.getloadavg()[0]
            started = time.perf_counter()
            verdict = judge.judge(standalone, result.ranked)
            seconds = time.perf_counter() - started
            row = {
                "id": case_id,
                "set": args.set,
                "position": position,
                "kind": kind,
                "answerable": kind == "answerable",
                "question": standalone,
                "asked": question,
                "signals": dict(zip(SIGNAL_NAMES, signals.vector().tolist(), strict=True)),
                "forced_refusal": ruled is not None,
                "judge": verdict.to_trace(),
                "judge_seconds": round(seconds, 3),
                "threads": threads,
                "load": round(load, 2),
                "max_words": MAX_WORDS,
            }
            out.write(json.dumps(row) + "\n")
            out.flush()
            shown = verdict.p_yes
            print(
                f"  {position + 1}/{len(plan)} {kind:>14} p_yes "
                f"{'-' if shown is None else f'{shown:.3f}'} {seconds:.1f}s load {load:.2f}",
                flush=True,
            )


# --- phase 2 ----------------------------------------------------------------------------------


def judge_features(row: dict) -> dict[str, float]:
    """The judge's inputs as the pipeline computes them (``judge_inputs``), from the stored trace."""
    passages = row["judge"]["passages"]
    return judge_values(passages[0]["p_yes"] if passages else None, row["judge"]["p_yes"])


def features(rows: list[dict], names) -> np.ndarray:
    return np.array([[{**r["signals"], **judge_features(r)}[n] for n in names] for r in rows], dtype=float)


def cross_fit(rows: list[dict], names, l2: float, seed: int) -> dict:
    from bench.answerability_models import FOLDS, folds_of

    answerable = np.array([r["answerable"] for r in rows])
    forced = np.array([r["forced_refusal"] for r in rows])
    x = features(rows, names)
    fold = folds_of(rows, seed=seed)
    p = np.zeros(len(rows))
    refused = np.zeros(len(rows), dtype=bool)
    for k in range(FOLDS):
        train, test = fold != k, fold == k
        model = LogisticModel.fit(x[train], answerable[train].astype(float), tuple(names), l2=l2)
        threshold = best_threshold(answerable[train], model.probability(x[train]), forced[train], MIN_RECALL)
        p[test] = model.probability(x[test])
        refused[test] = forced[test] | (p[test] < threshold)
    precision, recall, f1 = prf(refused, ~answerable)
    return {
        "p": p,
        "auc": auc(p, answerable),
        "unanswerable_precision": precision,
        "unanswerable_recall": recall,
        "unanswerable_f1": f1,
        "answerable_recall": prf(~refused, answerable)[1],
    }


def report_set(rows: list[dict], l2: float) -> dict:
    rows = [r for r in rows if r["kind"] in ("answerable", "unanswerable")]
    variants = {
        "signals": SIGNAL_NAMES,
        "judge": JUDGE_NAMES,
        "signals+judge": SIGNAL_NAMES + JUDGE_NAMES,
    }
    answerable = np.array([r["answerable"] for r in rows])
    raw = np.array([r["judge"]["p_yes"] if r["judge"]["p_yes"] is not None else 0.5 for r in rows])
    table, held_out = {}, {}
    for name, names in variants.items():
        per_split = [cross_fit(rows, names, l2, seed) for seed in (0, 1, 2)]
        held_out[name] = per_split[0].pop("p")
        for split in per_split[1:]:
            split.pop("p")
        table[name] = {
            key: {
                "mean": round(float(np.mean([s[key] for s in per_split])), 4),
                "per_split": [round(float(s[key]), 4) for s in per_split],
            }
            for key in per_split[0]
        }
    return {
        "rows": len(rows),
        "unanswerable": int((~answerable).sum()),
        "raw_p_yes_auc": round(auc(raw, answerable), 4),
        "models": table,
        "auc_gain_signals_plus_judge_over_signals": auc_gain(
            held_out["signals+judge"], held_out["signals"], answerable
        ),
    }


def auc_gain(with_judge: np.ndarray, without: np.ndarray, answerable: np.ndarray, draws: int = 2000) -> dict:
    """The held-out AUC difference (fold split 0) with a paired bootstrap over questions: the noise
    that the three fold splits alone understate, since they share the questions."""
    rng = np.random.default_rng(0)
    gains = []
    for _ in range(draws):
        pick = rng.integers(0, len(answerable), len(answerable))
        if answerable[pick].all() or not answerable[pick].any():
            continue
        gains.append(auc(with_judge[pick], answerable[pick]) - auc(without[pick], answerable[pick]))
    low, high = np.percentile(gains, [2.5, 97.5])
    return {
        "gain": round(auc(with_judge, answerable) - auc(without, answerable), 4),
        "bootstrap_95": [round(float(low), 4), round(float(high), 4)],
    }


def transfer(train: list[dict], test: list[dict], l2: float) -> dict:
    """Models fitted on every judged CLAPNQ-dev question (threshold at answerable recall 0.95
    there), applied to MTRAG-UN unchanged: what a site running the stored model would see."""
    train = [r for r in train if r["kind"] in ("answerable", "unanswerable")]
    test = [r for r in test if r["kind"] in ("answerable", "unanswerable")]
    result = {}
    for name, names in (("signals", SIGNAL_NAMES), ("signals+judge", SIGNAL_NAMES + JUDGE_NAMES)):
        y = np.array([r["answerable"] for r in train])
        x = features(train, names)
        model = LogisticModel.fit(x, y.astype(float), names, l2=l2)
        forced = np.array([r["forced_refusal"] for r in train])
        threshold = best_threshold(y, model.probability(x), forced, MIN_RECALL)
        answerable = np.array([r["answerable"] for r in test])
        p = model.probability(features(test, names))
        refused = np.array([r["forced_refusal"] for r in test]) | (p < threshold)
        result[name] = {
            "auc": round(auc(p, answerable), 4),
            "unanswerable_f1": round(float(prf(refused, ~answerable)[2]), 4),
            "answerable_recall": round(float(prf(~refused, answerable)[1]), 4),
        }
    return result


READER_HELD_OUT = REPO / "bench" / "results" / "reader_heldout.json"
# Answerable recall the stored model's threshold keeps, as the shipped first-stage model's does:
# the answer check after generation brings the end result to 0.95 (bench/answerability.py).
EARLY_RECALL = 0.98


def load_rows(name: str) -> list[dict]:
    path = CACHE_DIR / f"{name}.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if name == "clapnq-dev":
        # reader_answerable as bench/answerability.py --reader gives it: from the reader trained
        # without the question's fold (the shipped reader saw CLAPNQ-dev).
        held_out = json.loads(READER_HELD_OUT.read_text())
        for row in rows:
            row["signals"]["reader_answerable"] = held_out[f"clapnq-dev|{row['id']}"]
    return rows


def set_size(name: str) -> int:
    """Questions of the set that are judged and scored (answerable or unanswerable)."""
    if name == "clapnq-dev":
        from bench.answer_quality import clapnq_cases

        return len(clapnq_cases()[0])
    from bench.retrieval_quality import DATA
    from review.benchmark_files import read_mtrag_un

    return sum(
        case.split == "train" and case.metadata["answerability"].lower() in ("answerable", "unanswerable")
        for plan in read_mtrag_un(DATA / "mtrag-un").values()
        for case in plan.cases
    )


def write_model(rows: list[dict], l2: float) -> None:
    """Signals + judge fitted on every judged CLAPNQ-dev question, stored beside the shipped model."""
    from qa.pipeline.checks.answerability import JUDGED_KEY, MODEL_PATH
    from qa.pipeline.checks.confidence import fitted

    rows = [r for r in rows if r["kind"] in ("answerable", "unanswerable")]
    names = SIGNAL_NAMES + JUDGE_NAMES
    x = features(rows, names)
    answerable = np.array([r["answerable"] for r in rows])
    forced = np.array([r["forced_refusal"] for r in rows])
    model = LogisticModel.fit(x, answerable.astype(float), names, l2=l2)
    threshold = best_threshold(answerable, model.probability(x), forced, EARLY_RECALL)
    model = fitted(model, threshold=threshold)
    stored = json.loads(MODEL_PATH.read_text())
    stored[JUDGED_KEY] = {
        **model.to_json(),
        "trained_on": (
            f"CLAPNQ-dev ({len(rows)} questions), retrieval by the default preset; judge "
            f"{rows[0]['judge']['model']} on the top {max(len(r['judge']['passages']) for r in rows)} "
            f"passages (qa.pipeline.checks.llm_judge prompt, {rows[0]['max_words']} words at most); "
            f"reader_answerable held out per fold; L2 {l2}; threshold keeps answerable recall >= "
            f"{EARLY_RECALL} before generation; written by bench/llm_judge.py report --write"
        ),
    }
    MODEL_PATH.write_text(json.dumps(stored, indent=1) + "\n")
    print(f"wrote {JUDGED_KEY} to {MODEL_PATH} (threshold {threshold:.3f})")


def report(args) -> dict:
    results: dict = {"min_answerable_recall": MIN_RECALL, "l2": args.l2, "sets": {}}
    for name in SETS:
        rows = load_rows(name)
        if not rows:
            continue
        if len(rows) < 20:
            print(f"{name}: only {len(rows)} questions judged; no models fitted")
            continue
        planned = set_size(name)
        subset = (
            "all"
            if len(rows) >= planned
            else f"{len(rows)} of {planned}: the first of each class in the fixed order (``ordered``)"
        )
        seconds = [r["judge_seconds"] for r in rows]
        summary = report_set(rows, args.l2)
        summary.update(
            {
                "questions_judged": len(rows),
                "kinds": {k: sum(r["kind"] == k for r in rows) for k in sorted({r["kind"] for r in rows})},
                "questions": subset,
                "seconds_per_question": {
                    "mean": round(float(np.mean(seconds)), 2),
                    "p50": round(float(np.median(seconds)), 2),
                    "p90": round(float(np.percentile(seconds, 90)), 2),
                },
                "passages_per_question": max(len(r["judge"]["passages"]) for r in rows),
                "threads": sorted({r["threads"] for r in rows}),
                "load_average_1min": {
                    "mean": round(float(np.mean([r["load"] for r in rows])), 2),
                    "max": round(float(np.max([r["load"] for r in rows])), 2),
                },
                "judge_errors": sum(any(p.get("error") for p in r["judge"]["passages"]) for r in rows),
                "model": rows[0]["judge"]["model"],
                "max_words": rows[0]["max_words"],
            }
        )
        results["sets"][name] = summary
        print(
            f"{name}: {summary['rows']} questions ({summary['unanswerable']} unanswerable), "
            f"judge {summary['seconds_per_question']['mean']:.1f} s/question "
            f"(p50 {summary['seconds_per_question']['p50']:.1f}), threads {summary['threads']}, "
            f"load {summary['load_average_1min']['mean']:.2f}; raw P(yes) AUC {summary['raw_p_yes_auc']:.3f}"
        )
        gain = summary["auc_gain_signals_plus_judge_over_signals"]
        print(f"  AUC gain of signals + judge over signals (split 0): {gain['gain']} {gain['bootstrap_95']}")
        for variant, metrics in summary["models"].items():
            print(
                f"  {variant:<14} AUC {metrics['auc']['mean']:.3f} {metrics['auc']['per_split']}  "
                f"unanswerable F1 {metrics['unanswerable_f1']['mean']:.3f} "
                f"{metrics['unanswerable_f1']['per_split']}  answerable recall "
                f"{metrics['answerable_recall']['mean']:.3f}"
            )
    clapnq_rows, mtrag_rows = load_rows("clapnq-dev"), load_rows("mtrag-un-train")
    if len(clapnq_rows) >= 20 and len(mtrag_rows) >= 20:
        results["clapnq_fitted_on_mtrag_un"] = transfer(clapnq_rows, mtrag_rows, args.l2)
        print(f"fitted on CLAPNQ-dev, applied to MTRAG-UN train: {results['clapnq_fitted_on_mtrag_un']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    if args.write:
        write_model(load_rows("clapnq-dev"), args.l2)
    return results


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="phase", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--set", choices=SETS, default="clapnq-dev")
    c.add_argument("--model", default=str(DEFAULT_MODEL))
    c.add_argument("--passages", type=int, default=1, help="top passages judged per question")
    c.add_argument("--every", type=int, default=1, help="only every Nth question of the fixed order")
    c.add_argument("--limit", type=int, default=0)
    c.add_argument(
        "--kinds",
        default="answerable,unanswerable",
        help="MTRAG-UN answerability classes to judge (partial and underspecified are not scored)",
    )
    r = sub.add_parser("report")
    r.add_argument("--l2", type=float, default=1.0)
    r.add_argument("--json", default="")
    r.add_argument(
        "--write",
        action="store_true",
        help="store signals + judge fitted on all judged CLAPNQ-dev questions in answerability_model.json",
    )
    return parser


def run(bench_args=None) -> dict:
    """``python -m bench llm_judge``: collect CLAPNQ-dev (resuming), then report."""
    collect(parser().parse_args(["collect", "--set", "clapnq-dev"]))
    return report(parser().parse_args(["report", "--json", str(REPO / "bench/results/llm_judge.json")]))


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    collect(args) if args.phase == "collect" else report(args)


if __name__ == "__main__":
    main()
