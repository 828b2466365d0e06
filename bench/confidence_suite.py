"""The answer confidence, recalibrated on the whole tuning suite and measured per set.

    nice .venv/bin/python -m bench.confidence_suite collect      # ~6 min here; rows -> bench/results/
    .venv/bin/python -m bench.confidence_suite report [--write]  # seconds: fits and prints

``collect`` runs ``default`` in memory (no LLM, no cross-encoder, the bundled MiniLM) over the
suite's sets that have gold evidence sentences, so "right" (answerable and citation F1 >= 0.5, or a
refusal of an unanswerable question) is scored the same way on each:

- CLAPNQ-dev: all 200 questions (100 answerable);
- the genre set: all 42 (bench/genre.py);
- squad2: a seeded sample of questions over four seeded articles (as ``bench.reply_rules`` draws
  them); the gold evidence is each sentence of the paragraph that contains a reference answer;
- analyst-bench train: all 24, over their gold documents and 30 seeded others.

MTRAG-UN train is left out: its turns carry no gold evidence sentences. No analyst-bench dev/test or
MTRAG-UN test question is read.

Each row keeps the inputs the confidence model may read (``confidence.confidence_inputs``) for an
answer shown to the reader. ``report`` refits the confidence model (logistic, the shipped model's
inputs; the wider candidate inputs are compared, not adopted unless they help) on the answers of
every set together and prints, per set, the calibration error (ECE, 10 bins, every question with a
confidence, as bench/reply_thresholds.py counts it) of:

  shipped      the confidence the shipped model gave
  5-fold       refitted on the pooled suite, each question's from a model fitted without its fold
  set out      refitted on the other sets only: the error a new kind of document would see
  floor        the ECE perfectly calibrated confidences would still score on this many questions

``--write`` stores the model refitted on all rows as ``confidence`` (measured and not adopted:
docs/reply.md says why) in
qa/pipeline/checks/answerability_model.json. Refusals keep their confidence (1 - p(answerable), or
the refusal rule's precision): only an answer's is refitted here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from dataclasses import asdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.answerability_models import calibration_floor
from bench.common import REPO
from qa.pipeline.checks.answerability import LogisticModel
from qa.pipeline.checks.confidence import CONFIDENCE_NAMES, bounded, confidence_inputs, support_share
from review.evaluation.metrics import citation_prf, confidence_correct, expected_calibration_error

ROWS = REPO / "bench" / "results" / "confidence_suite.json"
MODEL_FILE = REPO / "qa" / "pipeline" / "checks" / "answerability_model.json"
SEED = 13
FOLDS = 5
L2 = 1.0
# Inputs compared with the shipped ones: the answer's own relevance and support (the earlier
# confidence model's inputs) on top of them.
WIDER = (*CONFIDENCE_NAMES, "answer_cosine", "answer_coverage", "support_share")


# --- collecting ------------------------------------------------------------------------------------


def row(case_id: str, answerable: bool, run, f1: float | None) -> dict:
    answer, trust = run.answer, run.trust
    shown = not answer.refused and answer.kind != "underspecified"
    inputs = None
    if shown and trust is not None and trust.answer_check is not None:
        verdict = trust.answerability
        signals = asdict(verdict.signals) if verdict is not None and verdict.signals is not None else None
        labels = [s.support for s in answer.sentences]
        inputs = confidence_inputs(
            trust.answer_check.probability, trust.answer_check.relevance, support_share(labels), signals
        )
    return {
        "id": case_id,
        "answerable": answerable,
        "shown": shown,
        "f1": f1,
        "confidence": answer.confidence,
        "inputs": inputs,
    }


def clapnq_rows(config) -> list[dict]:
    from bench.reply_thresholds import clapnq_rows as rows_of

    return rows_of(config, row)


def genre_rows(config) -> list[dict]:
    from bench.reply_thresholds import genre_rows as rows_of

    return rows_of(config, row)


def squad_rows(config, articles: int = 4, questions: int = 200) -> list[dict]:
    """The answerable questions' gold: every sentence holding one of the reference answers."""
    from bench.reply_rules import _embedders, squad_paragraphs
    from bench.retrieval_quality import build
    from qa.pipeline.flow.factory import ModelClients, build_pipeline
    from qa.pipeline.flow.runner import answer_question
    from review.evaluation.predictions import prediction_from_run
    from review.evaluation.types import evidence_key

    documents, cases = [], []
    for doc_id, document, paragraph in squad_paragraphs(articles):
        documents.append(document)
        for qa in paragraph["qas"]:
            answers = frozenset(x["text"] for x in qa.get("answers", ()))
            cases.append((qa["id"], qa["question"], not qa["is_impossible"], doc_id, answers))
    cases = random.Random(SEED).sample(cases, min(questions, len(cases)))
    corpus, embedder = _embedders()
    index, _ = build(documents, corpus)
    # The index labels the sentences the answers cite: the gold keys come from its own.
    sentences = [s for passage in index.passages("document") for s in passage.sentences]
    pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
    rows = []
    for number, (case_id, question, answerable, doc_id, answers) in enumerate(cases, 1):
        gold = [
            evidence_key(doc_id, s.label)
            for s in sentences
            if s.document_id == doc_id and any(text in s.text for text in answers)
        ]
        run = answer_question(question, pipeline=pipeline)
        prf = citation_prf(prediction_from_run(case_id, run).cited_evidence, gold) if answerable else None
        rows.append(row(case_id, answerable, run, prf.f1 if prf else None))
        if number % 20 == 0:
            print(f"  squad2 {number}/{len(cases)}", flush=True)
    return rows


def analyst_rows(config, distractors: int = 30) -> list[dict]:
    from bench.answer_quality import predict, with_distractors
    from bench.reply_rules import _embedders
    from bench.retrieval_quality import DATA, analyst_bench, build
    from review.evaluation.reference import load_gold_cases

    corpus, embedder = _embedders()
    index, _ = build(with_distractors(analyst_bench()[0], distractors), corpus)
    rows = []
    for case in load_gold_cases("train", data_dir=DATA):
        prediction, run = predict(case, index, embedder, config)
        prf = citation_prf(prediction.cited_evidence, case.gold_evidence)
        rows.append(row(case.case_id, case.answerable, run, prf.f1 if prf else None))
    return rows


COLLECTORS = {
    "CLAPNQ-dev": clapnq_rows,
    "genre": genre_rows,
    "squad2": squad_rows,
    "analyst-bench train": analyst_rows,
}


def collect(path: Path, only: list[str]) -> None:
    """Each set's rows, written as soon as the set is done (an interrupted run keeps the sets done)."""
    from qa.pipeline.config.presets import get_preset

    config = get_preset("default")
    stored = json.loads(path.read_text()) if path.exists() else {"preset": "default", "sets": {}}
    for name, rows_of in COLLECTORS.items():
        if only and name not in only:
            continue
        print(f"{name} ...", flush=True)
        stored["sets"][name] = rows_of(config)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=1))
    print(f"wrote {path}")


# --- fitting and reporting ---------------------------------------------------------------------------


def is_right(r: dict) -> bool:
    return confidence_correct(refused=not r["shown"], answerable=r["answerable"], citation_f1=r["f1"])


def fittable(r: dict) -> bool:
    return r["shown"] and r["inputs"] is not None


def fit(rows: list[dict], names: tuple[str, ...]) -> LogisticModel:
    x = np.array([[r["inputs"][n] for n in names] for r in rows])
    y = np.array([is_right(r) for r in rows], dtype=float)
    return LogisticModel.fit(x, y, names, l2=L2)


def predicted(model: LogisticModel, r: dict) -> float:
    return bounded(model.probability(np.array([r["inputs"][n] for n in model.names]))[0])


def ece(rows: list[dict], confidence: dict[str, float]) -> float | None:
    """Every question with a confidence; an answer's from ``confidence`` where it was refitted."""
    pairs = [
        (confidence.get(r["id"], r["confidence"]), is_right(r)) for r in rows if r["confidence"] is not None
    ]
    return expected_calibration_error(pairs)


def cross_fitted(sets: dict[str, list[dict]], names: tuple[str, ...]) -> dict[str, float]:
    """Each answer's confidence from a model fitted on the other folds of the pooled suite."""
    pooled = [r for rows in sets.values() for r in rows if fittable(r)]
    order = list(range(len(pooled)))
    random.Random(SEED).shuffle(order)
    out = {}
    for fold in range(FOLDS):
        held = {i for k, i in enumerate(order) if k % FOLDS == fold}
        model = fit([pooled[i] for i in range(len(pooled)) if i not in held], names)
        out.update({pooled[i]["id"]: predicted(model, pooled[i]) for i in held})
    return out


def set_out(sets: dict[str, list[dict]], names: tuple[str, ...]) -> dict[str, float]:
    """Each set's answers from a model fitted on the other sets only."""
    out: dict[str, float] = {}
    for name, rows in sets.items():
        if len(sets) < 2:
            break
        model = fit([r for other, rs in sets.items() if other != name for r in rs if fittable(r)], names)
        out.update({r["id"]: predicted(model, r) for r in rows if fittable(r)})
    return out


def log_loss(rows: list[dict], confidence: dict[str, float]) -> float:
    answered = [r for r in rows if fittable(r)]
    p = np.array([confidence[r["id"]] for r in answered])
    y = np.array([is_right(r) for r in answered], dtype=float)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def report(sets: dict[str, list[dict]]) -> dict:
    summary: dict = {"sets": {}, "inputs": {}}
    candidates = {"shipped inputs": tuple(CONFIDENCE_NAMES), "wider inputs": WIDER}
    pooled_rows = [r for rows in sets.values() for r in rows]
    for label, names in candidates.items():
        loss = log_loss(pooled_rows, cross_fitted(sets, names))
        summary["inputs"][label] = {"names": list(names), "cross_fitted_log_loss": loss}
        print(f"{label} {names}: pooled 5-fold log loss of the answers' confidence {loss:.4f}")
    chosen = min(candidates, key=lambda k: summary["inputs"][k]["cross_fitted_log_loss"])
    names = candidates[chosen]
    summary["chosen"] = chosen
    folds, out = cross_fitted(sets, names), set_out(sets, names)
    print(f"\nchosen: {chosen}\n")
    heads = ("questions", "answers", "shipped", "5-fold", "set out", "floor")
    print(f"{'set':22} " + " ".join(f"{head:>9}" for head in heads))
    for name, rows in sets.items():
        known = [r["confidence"] for r in rows if r["confidence"] is not None]
        figures = {
            "questions": len(rows),
            "answers": sum(fittable(r) for r in rows),
            "shipped": ece(rows, {}),
            "five_fold": ece(rows, folds),
            "set_out": ece(rows, out),
            "floor": calibration_floor(np.array(known)) if known else None,
        }
        summary["sets"][name] = figures
        print(
            f"{name:22} {figures['questions']:9d} {figures['answers']:9d} {_f(figures['shipped']):>9} "
            f"{_f(figures['five_fold']):>9} {_f(figures['set_out']):>9} {_f(figures['floor']):>9}"
        )
    return summary


def write(sets: dict[str, list[dict]], names: tuple[str, ...]) -> None:
    rows = [r for rs in sets.values() for r in rs if fittable(r)]
    counts = ", ".join(f"{name} {sum(fittable(r) for r in rs)}" for name, rs in sets.items())
    model = fit(rows, names)
    stored = json.loads(MODEL_FILE.read_text())
    stored["confidence"] = LogisticModel(
        **{
            **model.__dict__,
            "trained_on": (
                f"the answers default showed on the tuning suite ({counts}; {len(rows)} in all), "
                "right = answerable and citation F1 >= 0.5; inputs from the shipped answer check and "
                f"answerability models; L2 {L2}; written by bench/confidence_suite.py report --write"
            ),
        }
    ).to_json()
    MODEL_FILE.write_text(json.dumps(stored, indent=1) + "\n")
    print(f"wrote confidence into {MODEL_FILE.relative_to(REPO)}")


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.confidence_suite", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("command", choices=("collect", "report"))
    parser.add_argument("--rows", type=Path, default=ROWS)
    parser.add_argument("--only", action="append", default=[], choices=tuple(COLLECTORS))
    parser.add_argument("--write", action="store_true", help="store the refitted model (report)")
    parser.add_argument("--json", type=Path, help="where report writes its summary")
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args.rows, args.only)
        return
    sets = json.loads(args.rows.read_text())["sets"]
    summary = report(sets)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    if args.write:
        write(sets, tuple(summary["inputs"][summary["chosen"]]["names"]))


if __name__ == "__main__":
    main()
