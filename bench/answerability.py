"""Answerability and confidence: measure the signals, fit the models, report held-out numbers.

Runs the ``default`` pipeline (``qa.pipeline.flow.runner``) over in-memory indexes of
CLAPNQ-dev and analyst-bench (as bench/answer_quality.py does), with the
refusal checks switched off, and records per question the answerability
signals (``qa.pipeline.checks.answerability``), whether generation produced an
answer, the answer's relevance features and its citation F1. Then:

- answerability: a logistic regression over the signals, scored by 5-fold
  cross-validation on CLAPNQ-dev (each fold's model and refusal threshold are
  fitted on the other folds plus analyst-bench train; the threshold maximises
  unanswerable-class F1 keeping answerable recall >= 0.95 on those). Printed:
  refusal (unanswerable-class) and answerable-class P/R/F1, AUC, ECE (10 bins);
- confidence: P(correct) where correct = answered with citation F1 >= 0.5 for an
  answerable question, refused for an unanswerable one; same folds; ECE;
- ``--write``: fits both on all tuning data (CLAPNQ-dev + analyst-bench train,
  never analyst-bench dev/test) and writes qa/pipeline/checks/answerability_model.json.

    QA_BENCH_DATA=/work/shared/data .venv/bin/python bench/answerability.py            # collect + report
    QA_BENCH_DATA=/work/shared/data .venv/bin/python bench/answerability.py --write    # and store the model
    ... --cached    # reuse var/answerability_rows.json (signals only change with the code)
    ... --reader bench/results/reader_heldout.json   # add the passage reader's signal (held out)
    ... --span-reader   # add the shipped span reader's signal (span_answer; not adopted, docs/readers.md)
    ... --json bench/results/answerability.json      # the held-out numbers per fold split, as JSON

``--reader`` takes bench/train_reader.py's packed per-fold models (12 MB, not in
the repository), or the scores they gave, bench/results/reader_heldout.json: a
CLAPNQ question's ``reader_answerable`` comes from the model trained without its
fold, so the logistic models are fitted and scored on held-out reader scores;
the stored models need the shipped reader (qa/pipeline/reading/models/reader.safetensors).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402
from answer_quality import clapnq_cases, with_overrides  # noqa: E402
from answerability_limits import what_limits  # noqa: E402
from answerability_models import (  # noqa: E402
    CALIBRATION_FOLDS,
    CALIBRATION_SEEDS,
    FOLDS,
    SPLITS,
    Decisions,
    Models,
    auc,
    calibration_report,
    confidence_outcome,
    decide,
    ece,
    fit_models,
    folds_of,
    prf,
)
from reader_signal import held_out_readings, report_cost  # noqa: E402
from retrieval_quality import CACHE, DATA, MODEL, analyst_bench, build, clapnq  # noqa: E402

from qa.pipeline.checks.answerability import SIGNAL_NAMES, answerability_signals, hard_rule  # noqa: E402
from qa.pipeline.checks.confidence import fitted  # noqa: E402
from qa.pipeline.checks.relevance import (  # noqa: E402
    answer_relevance,
    judge_context,
    relevant_passages,
)
from qa.pipeline.config.presets import get_preset  # noqa: E402
from qa.pipeline.flow.answering import answer_from_ranking  # noqa: E402
from qa.pipeline.flow.factory import ModelClients, build_pipeline  # noqa: E402
from qa.pipeline.flow.run import PipelineRun  # noqa: E402
from qa.pipeline.flow.runner import retrieve_stage  # noqa: E402
from qa.pipeline.reading.questions import analyse_question  # noqa: E402
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder  # noqa: E402
from review.evaluation.metrics import citation_prf  # noqa: E402
from review.evaluation.reference import load_gold_cases  # noqa: E402
from review.evaluation.types import evidence_key  # noqa: E402

ROWS = REPO / "var" / "answerability_rows.json"
MODEL_FILE = REPO / "qa" / "pipeline" / "checks" / "answerability_model.json"
READER_PASSAGES = 3


def collect_rows(dataset: str, cases, index, embedder, config) -> list[dict]:
    # No LLM here: the preset's no-LLM parts, as on a site without one.
    pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
    top_k = config.retrieval.top_k
    rows = []
    for case in cases:
        _, result = retrieve_stage(pipeline, PipelineRun(question=case.question))
        started = time.perf_counter()
        analysis = analyse_question(case.question)
        signals = answerability_signals(case.question, result.ranked, analysis=analysis)
        ruled = hard_rule(case.question, result.ranked, analysis, signals)
        context = judge_context(case.question, result.ranked[:top_k], analysis=analysis)
        signal_seconds = time.perf_counter() - started
        # What the runner hands generation: the passages context relevance kept, no refusal threshold.
        passages = relevant_passages(result.ranked[:top_k], context)
        answer = answer_from_ranking(case.question, passages, parts=pipeline.answer_parts).answer
        answer = replace(answer, retrieved_documents=tuple(result.documents()))
        started = time.perf_counter()
        relevance = (
            answer_relevance(case.question, answer.sentences, embedder) if not answer.refused else None
        )
        relevance_seconds = time.perf_counter() - started
        cited = {evidence_key(s.document_id, s.label) for s in answer.cited_sentences}
        prf = citation_prf(cited, case.gold_evidence)
        rows.append(
            {
                "dataset": dataset,
                "case_id": case.case_id,
                "question": case.question,
                "answerable": case.answerable,
                "signals": dict(zip(SIGNAL_NAMES, signals.vector().tolist(), strict=True)),
                "generator_refused": answer.refused,
                "forced_refusal": ruled is not None,
                "rule": ruled[1] if ruled else None,
                "answer_type": analysis.answer_type,
                "context": [{**j.to_trace(), "gold": j.document_id in case.gold_documents} for j in context],
                "relevance": relevance.to_trace() if relevance else None,
                "support_share": (
                    sum(s.support == "supported" for s in answer.sentences) / len(answer.sentences)
                    if not answer.refused and answer.sentences
                    else 0.0
                ),
                "citation_f1": prf.f1 if prf else None,
                "top_document": answer.retrieved_documents[:1],
                # What a passage reader (qa.pipeline.reading.reader) scores: the top passages as retrieved.
                "passages": [
                    {
                        "document_id": hit.passage.document_id,
                        "title": hit.passage.document_title,
                        "text": hit.passage.text,
                        "sentences": [s.text for s in hit.passage.sentences],
                    }
                    for hit in result.ranked[:READER_PASSAGES]
                ],
                "gold_documents": list(case.gold_documents),
                "seconds": {"signals": signal_seconds, "answer_relevance": relevance_seconds},
            }
        )
    return rows


class CacheReader:
    """Reads the shared vector cache but never writes it: another bench may be filling it."""

    def __init__(self, cache: CachingEmbedder, model) -> None:
        self.cache, self.model, self.memo = cache, model, {}

    def encode(self, texts):
        missing = [
            t
            for t in dict.fromkeys(texts)
            if t not in self.memo and self.cache._key(t) not in self.cache._rows
        ]
        if missing:
            self.memo.update(zip(missing, self.model.encode(missing), strict=True))
        rows = [
            self.memo[t] if t in self.memo else self.cache._vectors[self.cache._rows[self.cache._key(t)]]
            for t in texts
        ]
        return np.stack(rows)


def cached_or_gold(documents, reader: CacheReader) -> list:
    """The gold documents plus every document whose sentences are all cached already.

    A stand-in for the full 787-document corpus when encoding all of it (~90k
    sentences) does not fit the time: retrieval then has fewer distractors, so
    its R@1 is optimistic; results from it are labelled as such.
    """
    gold = {
        d
        for split in ("train", "dev", "test")
        for c in load_gold_cases(split, data_dir=DATA)
        for d in c.gold_documents
    }
    cache = reader.cache
    kept = [
        d
        for d in documents
        if d.external_id in gold or all(cache._key(s.text) in cache._rows for s in d.sentences)
    ]
    print(f"  analyst-bench subset: {len(kept)} of {len(documents)} documents ({len(gold)} gold)")
    return kept


def gather(args) -> list[dict]:
    if args.cached and ROWS.exists():
        return json.loads(ROWS.read_text())
    config = with_overrides(get_preset("default"), ["min_retrieval_confidence=null"])
    model = SentenceTransformerEmbedder()
    corpus_embedder = embedder = CacheReader(CachingEmbedder(model, CACHE, MODEL), model)
    rows = []
    documents, _ = clapnq()
    index, _ = build(documents, corpus_embedder)
    cases, _ = clapnq_cases()
    rows += collect_rows("clapnq-dev", cases, index, embedder, config)
    if not args.clapnq_only:
        documents, _ = analyst_bench()
        if args.analyst_subset:
            documents = cached_or_gold(documents, corpus_embedder)
        index, _ = build(documents, corpus_embedder)
        for split in ("train", "dev", "test"):
            rows += collect_rows(
                f"analyst-bench-{split}", load_gold_cases(split, data_dir=DATA), index, embedder, config
            )
    ROWS.parent.mkdir(parents=True, exist_ok=True)
    ROWS.write_text(json.dumps(rows))
    return rows


def summarise(name: str, rows: list[dict], decisions: Decisions) -> dict:
    answerable = np.array([row["answerable"] for row in rows])
    refused = decisions.refused
    rp, rr, rf = prf(refused, ~answerable)
    ap, ar, af = prf(~refused, answerable)
    outcomes = np.array([confidence_outcome(r, bool(x)) for r, x in zip(rows, refused, strict=True)])
    cited = [
        (r["citation_f1"] if not x else 0.0)
        for r, x in zip(rows, refused, strict=True)
        if r["citation_f1"] is not None and r["answerable"]
    ]
    print(
        f"{name} (n={len(rows)}, unanswerable {int((~answerable).sum())}): "
        f"refusal P/R/F1 {rp:.3f}/{rr:.3f}/{rf:.3f}  answerable P/R/F1 {ap:.3f}/{ar:.3f}/{af:.3f}  "
        f"AUC p1 {auc(decisions.p_answerable, answerable):.3f} "
        f"p2 {auc(decisions.p_checked, answerable):.3f}  "
        f"ECE p1 {ece(decisions.p_answerable, answerable):.3f}  "
        f"confidence ECE {ece(decisions.confidence, outcomes):.3f} (right {outcomes.mean():.2f})  "
        f"answerable citation F1 (refused = 0) {np.mean(cited) if cited else float('nan'):.3f}"
    )
    return {
        "questions": len(rows),
        "unanswerable": int((~answerable).sum()),
        "unanswerable_refused": int((refused & ~answerable).sum()),
        "answerable_refused": int((refused & answerable).sum()),
        "unanswerable_f1": round(rf, 4),
        "answerable_recall": round(ar, 4),
        "answerable_citation_f1": round(float(np.mean(cited)), 4) if cited else None,
    }


def held_out(clapnq_rows: list[dict], extra: list[dict], args, seed: int = 0) -> Decisions:
    """Each CLAPNQ question decided by the models of the fold split ``seed`` fitted without its fold."""
    fold = folds_of(clapnq_rows, seed=seed)
    n = len(clapnq_rows)
    merged = Decisions(np.empty(n), np.empty(n), np.empty(n, dtype=bool), np.empty(n))
    for k in range(FOLDS):
        train = [r for r, f in zip(clapnq_rows, fold, strict=True) if f != k] + extra
        test = [i for i, f in enumerate(fold) if f == k]
        models = fit_models(train, args.l2, **fit_options(args))
        part = decide([clapnq_rows[i] for i in test], models, with_check=not args.no_check)
        for name in ("p_answerable", "p_checked", "refused", "confidence"):
            getattr(merged, name)[test] = getattr(part, name)
    return merged


def cross_validate(rows: list[dict], args) -> dict:
    """The held-out decisions of each fold split, printed; returned for ``--json``."""
    clapnq_rows = [r for r in rows if r["dataset"] == "clapnq-dev"]
    extra = [r for r in rows if r["dataset"] == "analyst-bench-train"]
    splits = [held_out(clapnq_rows, extra, args, seed) for seed in SPLITS]
    summarise(f"CLAPNQ-dev, {FOLDS}-fold held-out", clapnq_rows, splits[0])
    answerable = np.array([r["answerable"] for r in clapnq_rows])
    cells, table = [], []
    for seed, decisions in zip(SPLITS, splits, strict=True):
        p, r, f = prf(decisions.refused, ~answerable)
        recall = prf(~decisions.refused, answerable)[1]
        cells.append((f, recall))
        table.append(
            {
                "split": seed,
                "unanswerable_precision": round(p, 4),
                "unanswerable_recall": round(r, 4),
                "unanswerable_f1": round(f, 4),
                "answerable_recall": round(recall, 4),
                "auc_p_answerable": round(auc(decisions.p_answerable, answerable), 4),
            }
        )
        print(
            f"  fold split {seed}: unanswerable P/R/F1 {p:.3f}/{r:.3f}/{f:.3f}, "
            f"answerable recall {recall:.3f}"
        )
    means = np.mean(cells, axis=0)
    print(f"  mean over fold splits: unanswerable F1 {means[0]:.3f}, answerable recall {means[1]:.3f}")
    calibration = calibration_report(clapnq_rows, splits, SPLITS)
    return {
        "splits": table,
        "mean_unanswerable_f1": round(float(means[0]), 4),
        "mean_answerable_recall": round(float(means[1]), 4),
        **calibration,
    }


def ceiling(rows: list[dict], args, *, min_recall: float = 0.95, seeds: tuple[int, ...] = (0, 1, 2)) -> dict:
    """An upper bound for the goal (unanswerable F1 at answerable recall >= 0.95 on CLAPNQ-dev): the
    held-out p(answerable) of each fold's model, thresholded at the best value for the held-out
    questions themselves (which no deployed threshold can know), averaged over three fold splits."""
    clapnq_rows = [r for r in rows if r["dataset"] == "clapnq-dev"]
    extra = [r for r in rows if r["dataset"] == "analyst-bench-train"]
    answerable = np.array([r["answerable"] for r in clapnq_rows])
    scores = []
    for seed in seeds:
        fold = folds_of(clapnq_rows, seed=seed)
        p = np.zeros(len(clapnq_rows))
        for k in range(FOLDS):
            train = [r for r, f in zip(clapnq_rows, fold, strict=True) if f != k] + extra
            test = [i for i, f in enumerate(fold) if f == k]
            models = fit_models(train, args.l2, calibrate=False, **fit_options(args))
            p[test] = decide([clapnq_rows[i] for i in test], models).p_answerable
        best = 0.0
        for threshold in np.unique(p):
            refused = p < threshold
            if (~refused & answerable).sum() / answerable.sum() >= min_recall:
                best = max(best, prf(refused, ~answerable)[2])
        scores.append((auc(p, answerable), best))
        if seed == seeds[0]:
            limits = what_limits(clapnq_rows, p, min_recall=min_recall)
    mean_auc, mean_best = np.mean(scores, axis=0)
    print(
        f"  ceiling: CLAPNQ-dev held-out AUC {mean_auc:.3f}; best unanswerable F1 at answerable recall "
        f">= {min_recall} with a threshold chosen on the held-out questions {mean_best:.3f} (seeds {seeds})"
    )
    return {"auc": round(float(mean_auc), 4), "best_f1_at_recall_0.95": round(float(mean_best), 4), **limits}


def report_fitted(rows: list[dict], models: Models, args) -> dict:
    """Each dataset decided by the models fitted on all tuning data; returned for ``--json``."""
    report = {}
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        subset = [r for r in rows if r["dataset"] == dataset]
        tag = (
            " (tuning data, in-sample)" if dataset in ("clapnq-dev", "analyst-bench-train") else " (held out)"
        )
        decisions = decide(subset, models, with_check=not args.no_check)
        report[dataset] = summarise(dataset + tag, subset, decisions)
    return report


def baseline(rows: list[dict], threshold: float = 0.45) -> None:
    """Today's rule: refuse below a best-sentence cosine of 0.45, or when generation refuses."""
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        subset = [r for r in rows if r["dataset"] == dataset]
        cosine = np.array([r["signals"]["best_sentence_cosine"] for r in subset])
        refused = np.array([r["generator_refused"] for r in subset]) | (cosine < threshold)
        answerable = np.array([r["answerable"] for r in subset])
        print(
            f"  baseline cosine<{threshold} {dataset}: refusal F1 {prf(refused, ~answerable)[2]:.3f} "
            f"answerable recall {prf(~refused, answerable)[1]:.3f}  AUC(cosine) {auc(cosine, answerable):.3f}"
        )


def single_signals(rows: list[dict], names) -> None:
    subset = [r for r in rows if r["dataset"] == "clapnq-dev"]
    answerable = np.array([r["answerable"] for r in subset])
    cells = [f"{n} {auc(np.array([r['signals'][n] for r in subset]), answerable):.3f}" for n in names]
    print("  CLAPNQ-dev AUC of each signal alone: " + ", ".join(cells))


def context_report(rows: list[dict]) -> None:
    for dataset in ("clapnq-dev", "analyst-bench-train"):
        judged = [c for r in rows if r["dataset"] == dataset and r["answerable"] for c in r["context"]]
        gold = [c for c in judged if c["gold"]]
        other = [c for c in judged if not c["gold"]]
        share = {
            label: (
                sum(c["label"] == label for c in gold) / max(len(gold), 1),
                sum(c["label"] == label for c in other) / max(len(other), 1),
            )
            for label in ("relevant", "partial", "irrelevant")
        }
        print(f"  context relevance {dataset} answerable, share (gold passages, other passages): {share}")


def fit_options(args) -> dict:
    names = SIGNAL_NAMES if args.reader else tuple(n for n in SIGNAL_NAMES if n != "reader_answerable")
    if getattr(args, "span_reader", False):
        names = (*names, "span_answer")
    return {"early_recall": args.early_recall, "final_recall": args.final_recall, "names": names}


def with_span_reader(rows: list[dict]) -> None:
    """Each row's ``span_answer``: the shipped span reader's best span score over its no-answer
    option in the top passage (as ``reader_answerable`` reads the top passage), cached beside the rows.

    Not held out by fold: the span deltas saw no CLAPNQ, but the passage reader under them is the
    shipped one, which did (its held-out per-fold models are not in the repository)."""
    from qa.pipeline.reading.reader import SPAN_WEIGHTS, SpanReader, reader_text

    cache = ROWS.parent / "span_reader_scores.json"
    stamp = f"{SPAN_WEIGHTS.stat().st_size}:{SPAN_WEIGHTS.stat().st_mtime_ns}"
    stored = json.loads(cache.read_text()) if cache.exists() else {}
    if stored.get("_file") != stamp:
        stored = {"_file": stamp}
    reader = None
    for row in rows:
        key = f"{row['dataset']}|{row['case_id']}"
        if key not in stored:
            reader = reader or SpanReader(threads=1)
            stored[key] = -20.0  # nothing retrieved: no span
            for passage in row["passages"][:1]:
                text = reader_text(passage["title"], passage["sentences"])
                stored[key] = reader.span_scores(row["question"], [text])[0][2]
        row["signals"]["span_answer"] = stored[key]
    cache.write_text(json.dumps(stored, indent=0) + "\n")


def with_reader(rows: list[dict], args) -> None:
    """Each row's ``reader_answerable``: held out for CLAPNQ (bench/reader_signal.py), 0 without --reader."""
    scores = [0.0] * len(rows)
    if args.reader:
        clapnq_rows = [r for r in rows if r["dataset"] == "clapnq-dev"]
        scores = held_out_readings(rows, Path(args.reader), folds_of(clapnq_rows).tolist(), ROWS.parent)
    for row, score in zip(rows, scores, strict=True):
        row["signals"]["reader_answerable"] = score


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cached", action="store_true", help="reuse var/answerability_rows.json")
    parser.add_argument("--clapnq-only", action="store_true")
    parser.add_argument(
        "--analyst-subset",
        action="store_true",
        help="analyst-bench over gold + already-cached documents only",
    )
    parser.add_argument("--write", action="store_true", help="fit on all tuning data and write the model")
    parser.add_argument(
        "--write-rule", action="store_true", help="only add the hard rule's precision to the stored models"
    )
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument(
        "--early-recall", type=float, default=0.98, help="answerable recall kept before generation"
    )
    parser.add_argument("--final-recall", type=float, default=0.95, help="answerable recall kept in the end")
    parser.add_argument("--no-check", action="store_true", help="leave out the answer check")
    parser.add_argument("--ceiling", action="store_true", help="the best F1 any threshold could reach")
    parser.add_argument("--json", help="write the held-out numbers (and the ceiling) to this file")
    parser.add_argument(
        "--reader",
        help="bench/train_reader.py's packed models (fold0. .. fold4., final.) or their held-out scores "
        "(.json): adds the reader's signal",
    )
    parser.add_argument(
        "--span-reader",
        action="store_true",
        help="add the shipped span reader's signal (span_answer: best span over no answer, top passage)",
    )
    args = parser.parse_args()
    rows = gather(args)
    with_reader(rows, args)
    if args.span_reader:
        with_span_reader(rows)
    baseline(rows)
    single_signals(rows, fit_options(args)["names"])
    context_report(rows)
    summary = {"command": " ".join(sys.argv), "held_out": cross_validate(rows, args)}
    if args.ceiling:
        summary["ceiling"] = ceiling(rows, args)
    tuning = [r for r in rows if r["dataset"] in ("clapnq-dev", "analyst-bench-train")]
    models = fit_models(tuning, args.l2, **fit_options(args))
    summary["stored_models"] = report_fitted(rows, models, args)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    for stage in ("signals", "answer_relevance"):
        seconds = statistics.median(r["seconds"][stage] for r in rows)
        print(f"  {stage} per question: p50 {seconds * 1000:.1f} ms")
    if args.reader:
        report_cost(rows)
    print(f"  hard-rule refusals on the tuning data: {models.rule_count}, precision {models.rule_precision}")
    if args.write:
        write_models(rows, models, args)
    elif args.write_rule:
        write_rule_only(models, args)


def write_models(rows: list[dict], models: Models, args) -> None:
    counts = {name: sum(r["dataset"] == name for r in rows) for name in ("clapnq-dev", "analyst-bench-train")}
    trained_on = (
        f"CLAPNQ-dev ({counts['clapnq-dev']} questions) and analyst-bench train "
        f"({counts['analyst-bench-train']} questions"
        f"{', over gold + cached documents only' if args.analyst_subset else ''}), "
        "retrieval by the default preset; "
        f"L2 {args.l2}; thresholds keep answerable recall >= {args.early_recall} before generation and "
        f">= {args.final_recall} in the end; written by bench/answerability.py --write"
    )
    if args.reader:
        trained_on += (
            "; reader_answerable: the passage reader's score of the top passage, for CLAPNQ-dev by the "
            "reader trained without the question's fold, for analyst-bench by the shipped one (which "
            "saw no analyst-bench)"
        )
    payload = {
        name: fitted(getattr(models, name), trained_on=trained_on).to_json()
        for name in ("answerability", "answer_check")
    }
    payload["confidence"] = fitted(
        models.confidence,
        trained_on=(
            "Platt scaling of the answer check's logit: the questions of the same data that the "
            f"pipeline answers, each decided by models fitted without it ({CALIBRATION_FOLDS} folds, "
            f"seeds {', '.join(map(str, CALIBRATION_SEEDS))}; bench/answerability_models.py "
            "calibration_rows); right = answerable and citation F1 >= 0.5. " + trained_on
        ),
    ).to_json()
    payload["refusal_rule"] = rule_payload(models, trained_on)
    # The model that reads the LLM judge is bench/llm_judge.py's to refit: kept as it is.
    judged = json.loads(MODEL_FILE.read_text()).get("answerability_llm_judge")
    if judged:
        payload["answerability_llm_judge"] = judged
    MODEL_FILE.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {MODEL_FILE.relative_to(REPO)}")


def rule_payload(models: Models, trained_on: str) -> dict:
    return {"precision": models.rule_precision, "count": models.rule_count, "trained_on": trained_on}


def write_rule_only(models: Models, args) -> None:
    """Add the rule's precision to the stored models without refitting them (``--write-rule``)."""
    stored = json.loads(MODEL_FILE.read_text())
    counts = f"{models.rule_count} rule refusals of CLAPNQ-dev and analyst-bench train" + (
        " (over gold + cached documents only)" if args.analyst_subset else ""
    )
    stored["refusal_rule"] = rule_payload(models, counts + ", written by bench/answerability.py --write-rule")
    MODEL_FILE.write_text(json.dumps(stored, indent=1) + "\n")
    print(f"wrote refusal_rule (precision {models.rule_precision}) into {MODEL_FILE.relative_to(REPO)}")


if __name__ == "__main__":
    main()
