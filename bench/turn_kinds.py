"""Fit the turn-kind model (qa.pipeline.dialogue.turn_kind) on the MTRAG-UN slice's train half.

Each train task runs once through ``default`` with the learned turn kinds on and a model that
always answers: the run records the turn's signals (``run.turn_kind.signals``) and what answering
it gives (an answer, a partial answer, or a refusal by the checks after generation). First turns
have no conversation, so the rules decide them; their reply is recorded as it is. The rows are
cached under var/cache, so refitting costs seconds.

The model is one multinomial logistic regression over the answer kinds (answerable, partial,
underspecified, unanswerable), fitted on train's follow-up turns. Its L2 strength and its two
thresholds (ask back at p(underspecified) >= t1, else refuse at p(unanswerable) >= t2) are chosen
by cross-validation within train, folds grouped by conversation, maximising the mean of the
refusal F1 and the clarifying-question F1 (a question back is right for an underspecified turn,
wrong for any other). The reported train numbers are *nested*: each outer fold's turns are decided
by a model whose L2 and thresholds were chosen without them. Test is never read here; its numbers
come from ``python -m bench.mtrag_un --split all`` with the written model.

    nice -n 10 .venv/bin/python -m bench.turn_kinds            # nested cross-validated train table
    nice -n 10 .venv/bin/python -m bench.turn_kinds --write    # choose by CV on all of train, store the model
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from bench.mtrag_un import history_pairs, rewritten
from bench.retrieval_quality import CACHE, DATA, MODEL, MemoEmbedder, build
from qa.pipeline.checks.answerability import ANSWER_KINDS, UNANSWERABLE, UNDERSPECIFIED
from qa.pipeline.config.presets import get_preset
from qa.pipeline.dialogue.turn_kind import MODEL_PATH, SIGNAL_NAMES, SoftmaxModel, TurnKindModel
from qa.pipeline.flow.factory import ModelClients, build_pipeline
from qa.pipeline.flow.runner import answer_question
from qa.pipeline.search.embedding import CachingEmbedder, SentenceTransformerEmbedder
from review.benchmark_files import read_mtrag_un

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROWS = CACHE / "mtrag_un_turn_rows.json"
# What the model reads: answerability's probability for the turn as searched and as asked, what the
# passages lack (how many focus words; whether only the rewrite's reading), and the rewrite's view
# (a reference it could not resolve, things of that kind the passages name, how far into the
# conversation). ``vague`` is a rule in classify_turn, not an input. Chosen among the sets in
# ALL_INPUTS (``--inputs all``) by repeated nested CV on train (docs/conversation.md): fewer
# inputs did better out of fold, with 11 underspecified follow-ups to learn from.
INPUTS = (
    "answerable",
    "as_asked",
    "missing_words",
    "reading_missing",
    "unresolved",
    "reference_options",
    "earlier_turns",
)
ALL_INPUTS = (
    "answerable",
    "as_asked",
    "reader",
    "best_cosine",
    "focus_coverage",
    "agreement",
    "ruled_out",
    "missing_words",
    "name_missing",
    "reading_missing",
    "unresolved",
    "reference_options",
    "definite_unnamed",
    "pronoun",
    "competing_titles",
    "covered_titles",
    "shared_words",
    "earlier_turns",
)
L2_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
REPEATS = 4
THRESHOLDS = tuple(np.round(np.arange(0.10, 0.91, 0.05), 2))


def collect(refresh: bool) -> list[dict]:
    """One row per train task: gold class, first turn or not, signals, and the reply answering gives."""
    if ROWS.exists() and not refresh:
        return json.loads(ROWS.read_text())
    always_answer = Path(tempfile.mkdtemp()) / "always_answer.json"
    model = TurnKindModel(
        SoftmaxModel(ANSWER_KINDS, ("answerable",), (0.0,), (1.0,), ((0.0,),) * 4, (0.0,) * 4), 2.0, 2.0
    )
    always_answer.write_text(json.dumps(model.to_json()))
    config = get_preset("default")
    config = dataclasses.replace(
        config, turns=dataclasses.replace(config.turns, learned=True, learned_model=str(always_answer))
    )
    corpus_embedder = CachingEmbedder(SentenceTransformerEmbedder(), CACHE, MODEL)
    embedder = MemoEmbedder(corpus_embedder)
    rows = []
    for _, plan in read_mtrag_un(DATA / "mtrag-un").items():
        index, _ = build(plan.documents, corpus_embedder)
        pipeline = build_pipeline(config, index=index, clients=ModelClients(embedder=embedder))
        for case in plan.cases:
            if case.split != "train":
                continue
            searched = rewritten(case.question, history_pairs(case.metadata["conversation"]), "memory")
            run = answer_question(case.question, pipeline=pipeline, rewrite=searched)
            check = run.trust.answer_check if run.trust is not None else None
            rows.append(
                {
                    "case": case.case_id,
                    "conversation": case.case_id.rsplit("-", 1)[0],
                    "kind": case.metadata["answerability"],
                    "first_turn": searched is None,
                    "signals": dataclasses.asdict(run.turn_kind.signals) if run.turn_kind else None,
                    "reply": run.answer.kind,
                    "check_refused": bool(check is not None and not check.addresses_question),
                }
            )
            print(f"{len(rows)} {case.case_id} {rows[-1]['kind']} -> {rows[-1]['reply']}", flush=True)
    ROWS.parent.mkdir(parents=True, exist_ok=True)
    ROWS.write_text(json.dumps(rows))
    return rows


def matrix(rows: list[dict]) -> np.ndarray:
    return np.array([[row["signals"][name] for name in INPUTS] for row in rows], dtype=np.float64)


def folds(rows: list[dict], k: int, salt: str = "") -> np.ndarray:
    """Fold of each row by its conversation's hash: turns of one conversation stay together;
    ``salt`` deals the conversations into other folds (repeated cross-validation)."""
    return np.array(
        [int(hashlib.sha1((salt + r["conversation"]).encode()).hexdigest(), 16) % k for r in rows]
    )


def f1(predicted: np.ndarray, gold: np.ndarray) -> float:
    hits = float((predicted & gold).sum())
    return 2 * hits / (predicted.sum() + gold.sum()) if predicted.sum() + gold.sum() else 0.0


def objective(kinds: np.ndarray, replies: np.ndarray) -> float:
    """Mean of refusal F1 and clarifying-question F1 (each wrong question back or refusal costs)."""
    return (
        f1(replies == UNANSWERABLE, kinds == UNANSWERABLE)
        + f1(replies == UNDERSPECIFIED, kinds == UNDERSPECIFIED)
    ) / 2


def replies_for(decisions: list[str], rows: list[dict], *, check: bool) -> np.ndarray:
    """The reply each turn gets: a first turn the rules' reply; else a question back, a refusal, or
    what answering gives (with ``check``, refused when the answer check says it misses the question,
    as for single questions; the pipeline answers it, recording the check)."""
    out = []
    for decision, row in zip(decisions, rows, strict=True):
        if row["first_turn"] or decision == "rules":
            out.append(row["reply"])
        elif decision != "answerable":
            out.append(decision)
        elif row["check_refused"] and check:
            out.append(UNANSWERABLE)
        else:
            out.append(row["reply"])
    return np.array(out)


def decide(model: TurnKindModel, x: np.ndarray, vague: np.ndarray) -> list[str]:
    p = model.kinds.probabilities(x)
    return [UNDERSPECIFIED if v else model.decide(row) for row, v in zip(p, vague, strict=True)]


def out_of_fold_p(x: np.ndarray, labels: np.ndarray, fold: np.ndarray, l2: float) -> np.ndarray:
    p = np.zeros((len(x), len(ANSWER_KINDS)))
    for f in sorted(set(fold)):
        fitted = SoftmaxModel.fit(x[fold != f], labels[fold != f], ANSWER_KINDS, INPUTS, l2=l2)
        p[fold == f] = fitted.probabilities(x[fold == f])
    return p


def choose(rows: list[dict], *, check: bool, k: int = 5) -> tuple[float, float, float, float]:
    """(L2, clarify threshold, refuse threshold, objective) by k-fold CV over these follow-up rows."""
    x, labels = matrix(rows), np.array([r["kind"] for r in rows])
    vague = np.array([r["signals"]["vague"] > 0 for r in rows])
    fold = folds(rows, k)
    best = None
    for l2 in L2_GRID:
        p = out_of_fold_p(x, labels, fold, l2)
        for t_clarify in THRESHOLDS:
            for t_refuse in THRESHOLDS:
                model = _thresholded(t_clarify, t_refuse)
                decisions = [
                    UNDERSPECIFIED if v else model.decide(row) for row, v in zip(p, vague, strict=True)
                ]
                value = objective(labels, replies_for(decisions, rows, check=check))
                # Ties: the larger L2, then thresholds nearest 0.5 (less fitted to a few turns).
                key = (round(value, 6), l2, -abs(t_clarify - 0.5) - abs(t_refuse - 0.5))
                if best is None or key > best[0]:
                    best = (key, l2, float(t_clarify), float(t_refuse), value)
    _, l2, t_clarify, t_refuse, value = best
    return l2, t_clarify, t_refuse, value


def _thresholded(t_clarify: float, t_refuse: float) -> TurnKindModel:
    dummy = SoftmaxModel(ANSWER_KINDS, (), (), (), ((),) * 4, (0.0,) * 4)
    return TurnKindModel(dummy, t_clarify, t_refuse)


def fitted(rows: list[dict], l2: float, t_clarify: float, t_refuse: float, note: str = "") -> TurnKindModel:
    softmax = SoftmaxModel.fit(matrix(rows), np.array([r["kind"] for r in rows]), ANSWER_KINDS, INPUTS, l2=l2)
    return TurnKindModel(softmax, t_clarify, t_refuse, note)


def nested(rows: list[dict], *, check: bool, salt: str = "") -> list[str]:
    """Each follow-up's decision by a model chosen and fitted without its outer fold."""
    follow = [r for r in rows if not r["first_turn"]]
    fold = folds(follow, 5, salt)
    decisions = {}
    for f in sorted(set(fold)):
        inner = [r for r, g in zip(follow, fold, strict=True) if g != f]
        outer = [r for r, g in zip(follow, fold, strict=True) if g == f]
        l2, t_clarify, t_refuse, _ = choose(inner, check=check, k=4)
        model = fitted(inner, l2, t_clarify, t_refuse)
        vague = np.array([r["signals"]["vague"] > 0 for r in outer])
        for row, decision in zip(outer, decide(model, matrix(outer), vague), strict=True):
            decisions[row["case"]] = decision
        if not salt:
            print(f"  outer fold {f}: L2 {l2}, ask back at {t_clarify:.2f}, refuse at {t_refuse:.2f}")
    return [decisions.get(r["case"], "rules") for r in rows]


def summary(rows: list[dict], replies: np.ndarray) -> tuple[float, float, float, float]:
    """(refusal F1, refusal precision, clarified share, clarifying-question F1)."""
    kinds = np.array([r["kind"] for r in rows])
    refused, gold, under = replies == UNANSWERABLE, kinds == UNANSWERABLE, kinds == UNDERSPECIFIED
    precision = float((refused & gold).sum() / refused.sum()) if refused.sum() else 0.0
    clarified = float((replies[under] == UNDERSPECIFIED).mean())
    return f1(refused, gold), precision, clarified, f1(replies == UNDERSPECIFIED, under)


def report(label: str, rows: list[dict], replies: np.ndarray) -> None:
    kinds = np.array([r["kind"] for r in rows])
    refused, gold = replies == UNANSWERABLE, kinds == UNANSWERABLE
    hits = float((refused & gold).sum())
    precision = hits / refused.sum() if refused.sum() else 0.0
    recall = hits / gold.sum() if gold.sum() else 0.0
    under = kinds == UNDERSPECIFIED
    print(
        f"{label}: refusal P/R/F1 {precision:.3f}/{recall:.3f}/{f1(refused, gold):.3f}; "
        f"clarified {float((replies[under] == UNDERSPECIFIED).mean()):.3f}; "
        f"clarify F1 {f1(replies == UNDERSPECIFIED, under):.3f}"
    )
    for kind in ANSWER_KINDS:
        share = [float((replies[kinds == kind] == reply).mean()) for reply in ANSWER_KINDS]
        print(f"    {kind:<15} n={int((kinds == kind).sum()):>3}  " + " / ".join(f"{s:.3f}" for s in share))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--refresh", action="store_true", help="run the train tasks again")
    parser.add_argument("--write", action="store_true", help=f"fit on all of train, write {MODEL_PATH.name}")
    parser.add_argument("--check", action="store_true", help="let the answer check refuse learned answers")
    parser.add_argument("--inputs", help="comma-separated model inputs (default: INPUTS; all: ALL_INPUTS)")
    parser.add_argument("--json", help="write the cross-validated numbers here")
    args = parser.parse_args()
    global INPUTS
    if args.inputs:
        INPUTS = ALL_INPUTS if args.inputs == "all" else tuple(args.inputs.split(","))
    rows = collect(args.refresh)
    check = args.check
    assert all(r["signals"] is not None for r in rows if not r["first_turn"]), "rows lack turn signals"
    print(
        f"train: {len(rows)} tasks, {sum(not r['first_turn'] for r in rows)} follow-ups; answer check {check}"
    )
    report(
        "rules' replies where the rules decide, answers elsewhere",
        rows,
        replies_for(["answerable"] * len(rows), rows, check=check),
    )
    first_deal = replies_for(nested(rows, check=check), rows, check=check)
    report("nested 5-fold CV (train)", rows, first_deal)
    repeated = np.array(
        [
            summary(rows, replies_for(nested(rows, check=check, salt=str(seed)), rows, check=check))
            for seed in range(1, REPEATS + 1)
        ]
    )
    mean = repeated.mean(axis=0)
    print(
        f"nested CV repeated over {REPEATS} other fold deals (mean): refusal F1 {mean[0]:.3f} "
        f"(P {mean[1]:.3f}), clarified {mean[2]:.3f}, "
        f"clarify F1 {mean[3]:.3f}; objective {(mean[0] + mean[3]) / 2:.3f}"
    )
    follow = [r for r in rows if not r["first_turn"]]
    l2, t_clarify, t_refuse, value = choose(follow, check=check)
    counts = ", ".join(f"{k} {sum(r['kind'] == k for r in follow)}" for k in ANSWER_KINDS)
    note = (
        f"MTRAG-UN slice, train half only: its {len(follow)} follow-up turns ({counts}); retrieval and "
        f"answerability by default; L2 {l2} and thresholds by conversation-grouped 5-fold "
        f"cross-validation within train (mean of refusal F1 and clarifying-question F1 {value:.3f})"
    )
    model = fitted(follow, l2, t_clarify, t_refuse, note)
    vague = np.array([r["signals"]["vague"] > 0 for r in follow])
    decisions = dict(zip((r["case"] for r in follow), decide(model, matrix(follow), vague), strict=True))
    in_sample = [decisions.get(r["case"], "rules") for r in rows]
    report(
        f"fitted on all of train (in sample), L2 {l2}, {t_clarify:.2f}/{t_refuse:.2f}",
        rows,
        replies_for(in_sample, rows, check=check),
    )
    for kind, row in zip(model.kinds.kinds, model.kinds.coef, strict=True):
        print(f"  {kind:<15}", {n: round(c, 2) for n, c in zip(INPUTS, row, strict=True)})
    if args.json:
        names = ("refusal_f1", "refusal_precision", "clarified", "clarify_f1")
        numbers = {
            "inputs": list(INPUTS),
            "answer_check": check,
            "nested_cv_first_deal": dict(zip(names, summary(rows, first_deal), strict=True)),
            f"nested_cv_mean_of_{REPEATS}_other_deals": dict(zip(names, map(float, mean), strict=True)),
            "in_sample": dict(
                zip(names, summary(rows, replies_for(in_sample, rows, check=check)), strict=True)
            ),
            "chosen": {"l2": l2, "clarify_threshold": t_clarify, "refuse_threshold": t_refuse},
        }
        Path(args.json).write_text(json.dumps(numbers, indent=1) + "\n")
    if args.write:
        MODEL_PATH.write_text(json.dumps(model.to_json(), indent=1) + "\n")
        print(f"wrote {MODEL_PATH}")
    assert set(INPUTS) <= set(SIGNAL_NAMES)


if __name__ == "__main__":
    main()
