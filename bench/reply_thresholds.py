"""Risk-coverage of selective answering: which confidence threshold shows answers that are right.

    nice .venv/bin/python -m bench.reply_thresholds [--preset default] [--only clapnq|genre]
    .venv/bin/python -m bench.reply_thresholds --rows bench/results/reply_thresholds.json  # reprint

Runs the preset in memory (no database, no LLM) over CLAPNQ-dev (../shared/data/clapnq-dev, as
bench/answer_quality.py loads it) and the genre set (bench/genre.py), keeps one row per question
(answerable?, shown?, citation F1, confidence) in bench/results/reply_thresholds.json, and prints
for each threshold t the risk-coverage curve of qa.pipeline.checks.reply's ``answer_confidence``:

  shown   the share of all questions shown as answers (not refused, not asked back, confidence >= t)
  right   the share of those shown that are right: answerable with citation F1 >= 0.5

It picks the lowest t at which, on every set, shown answers are >= 90% right while at least 5% of
the set's questions are still shown. Where no t gets there, it picks the t whose worst set comes
closest (the highest worst-set share right, each set still showing >= 5%; ties: the lowest t).
Only the threshold is fitted here, so CLAPNQ-dev is also cross-fitted: 5 folds (seeded), each
fold's threshold chosen on the other four (and the genre set) and applied to it. The confidence
model itself was fitted by bench/answerability.py on CLAPNQ-dev (cross-fitted there); the genre
set took no part in any fit. ECE: calibration error of the confidence against "right" (a refusal
of an unanswerable question counts as right), 10 bins, per set. The genre set's held-out part
("genre held-out", bench/genre/heldout/) is printed beside the others and takes no part in the
choice: it shows what the chosen threshold gives on documents nothing was tuned on.
Never run this on analyst-bench dev/test or MTRAG-UN test: they are held out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from review.evaluation.metrics import confidence_correct
from review.evaluation.selective import THRESHOLDS, SelectiveCase, coverage_point, is_shown

RESULTS = Path(__file__).resolve().parent / "results" / "reply_thresholds.json"
TARGET = 0.90
MIN_SHOWN = 0.05  # a threshold that shows (almost) nothing is not an answer policy
FOLDS = 5
HELDOUT = "genre held-out"  # reported beside the tuning sets, never chosen on


def _row(case_id: str, answerable: bool, run, f1: float | None) -> dict:
    answer = run.answer
    return {
        "id": case_id,
        "answerable": answerable,
        "refused": bool(answer.refused),
        "kind": answer.kind,
        "candidate": not answer.refused and answer.kind != "underspecified",
        "f1": f1,
        "confidence": answer.confidence,
    }


def clapnq_rows(config, make_row=_row) -> list[dict]:
    """One ``make_row(case id, answerable, run, citation F1)`` per CLAPNQ-dev question."""
    from bench.answer_quality import clapnq_predictions
    from review.evaluation.metrics import citation_prf

    rows = []
    for case, prediction, run, _ in clapnq_predictions(config, progress_every=20):
        prf = citation_prf(prediction.cited_evidence, case.gold_evidence)
        rows.append(make_row(case.case_id, case.answerable, run, prf.f1 if prf else None))
    return rows


def genre_rows(config, make_row=_row, part: str = "tuning") -> list[dict]:
    """One ``make_row(question id, answerable, run, citation F1)`` per question of the genre set's
    ``part``."""
    from bench.genre import genre_answers, score

    rows = []
    for question, run, sentences, _ in genre_answers(config, part=part):
        f1 = score(question, run.answer, sentences).f1 if question.answerable else None
        rows.append(make_row(question.id, question.answerable, run, f1))
    return rows


def case(row: dict) -> SelectiveCase:
    """A row as review.evaluation.selective reads it: the same definition of shown and right as the
    evaluation page's risk-coverage table (CLAPNQ cases without gold evidence: answering is enough)."""
    right = confidence_correct(refused=False, answerable=row["answerable"], citation_f1=row["f1"])
    return SelectiveCase(row["confidence"], row["candidate"], right)


def is_right(row: dict) -> bool:
    return case(row).right


def shown(row: dict, threshold: float) -> bool:
    return is_shown(case(row), threshold)


def point(rows: Sequence[dict], threshold: float) -> tuple[float, float | None, int]:
    """(share of questions shown as answers, share of shown that are right, how many shown)."""
    at = coverage_point([case(r) for r in rows], threshold)
    return at.shown, at.right, at.count


def choose(sets: Sequence[Sequence[dict]], target: float = TARGET) -> tuple[float, bool]:
    """The threshold for ``sets`` together and whether it meets ``target`` on every one of them."""
    best, best_worst = THRESHOLDS[0], -1.0
    for threshold in THRESHOLDS:
        points = [point(rows, threshold) for rows in sets]
        if any(coverage < MIN_SHOWN or right is None for coverage, right, _ in points):
            continue
        worst = min(right for _, right, _ in points)
        if worst >= target:
            return threshold, True
        if worst > best_worst:
            best, best_worst = threshold, worst
    return best, False


def cross_fitted(rows: Sequence[dict], others: Sequence[Sequence[dict]] = (), seed: int = 0) -> dict:
    """Each CLAPNQ-dev fold answered at the threshold chosen on the other folds (and ``others``):
    the held-out share shown and the share of those right."""
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    shown_rows, chosen = [], []
    for fold in range(FOLDS):
        held = {i for k, i in enumerate(order) if k % FOLDS == fold}
        rest = [rows[i] for i in range(len(rows)) if i not in held]
        threshold, _ = choose([rest, *others])
        chosen.append(threshold)
        shown_rows += [rows[i] for i in held if shown(rows[i], threshold)]
    right = sum(is_right(r) for r in shown_rows)
    return {
        "thresholds": chosen,
        "shown": len(shown_rows) / max(len(rows), 1),
        "right": right / len(shown_rows) if shown_rows else None,
    }


def calibration_error(rows: Sequence[dict]) -> float | None:
    from review.evaluation.metrics import confidence_correct, expected_calibration_error

    pairs = [
        (
            r["confidence"],
            confidence_correct(refused=not r["candidate"], answerable=r["answerable"], citation_f1=r["f1"]),
        )
        for r in rows
        if r["confidence"] is not None
    ]
    return expected_calibration_error(pairs)


def report(sets: dict[str, list[dict]]) -> dict:
    for name, rows in sets.items():
        answerable = sum(r["answerable"] for r in rows)
        print(
            f"\n{name}: {len(rows)} questions ({answerable} answerable); ECE {_fmt(calibration_error(rows))}"
        )
        print("  threshold  shown  right  (n shown)")
        for threshold in THRESHOLDS:
            coverage, right, count = point(rows, threshold)
            print(f"  {threshold:9.2f}  {coverage:5.3f}  {_fmt(right):>5}  ({count})")
        alone, met = choose([rows])
        print(f"  this set alone: {alone} ({'meets' if met else 'closest to'} {TARGET:.0%} right)")
    default, met = choose([rows for name, rows in sets.items() if name != HELDOUT])
    why = (
        f"every set >= {TARGET:.0%} right"
        if met
        else f"no threshold reaches {TARGET:.0%} on every set: the one whose worst set comes closest"
    )
    print(f"\ndefault answer_confidence: {default} ({why})")
    summary = {"default": default, "meets_target": met, "at_default": {}}
    for name, rows in sets.items():
        coverage, right, count = point(rows, default)
        summary["at_default"][name] = {"shown": coverage, "right": right, "count": count}
        print(f"  {name} at {default}: shown {coverage:.3f}, right {_fmt(right)} ({count} shown)")
    if "CLAPNQ-dev" in sets:
        others = [rows for name, rows in sets.items() if name not in ("CLAPNQ-dev", HELDOUT)]
        fitted = cross_fitted(sets["CLAPNQ-dev"], others)
        summary["clapnq_cross_fitted"] = fitted
        print(
            f"CLAPNQ-dev {FOLDS}-fold (threshold chosen on the other folds and the other sets: "
            f"{fitted['thresholds']}): shown {fitted['shown']:.3f}, right {_fmt(fitted['right'])}"
        )
        alone = cross_fitted(sets["CLAPNQ-dev"])
        summary["clapnq_cross_fitted_alone"] = alone
        print(
            f"CLAPNQ-dev {FOLDS}-fold (threshold chosen on the other folds alone: "
            f"{alone['thresholds']}): shown {alone['shown']:.3f}, right {_fmt(alone['right'])}"
        )
    return summary


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> None:
    from bench.answer_quality import with_overrides
    from qa.pipeline.config.presets import get_preset

    parser = argparse.ArgumentParser(
        prog="python -m bench.reply_thresholds", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--preset", default="default")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--only", choices=("clapnq", "genre"))
    parser.add_argument("--rows", type=Path, help="reprint the curve from rows an earlier run wrote")
    parser.add_argument("--write", type=Path, default=RESULTS, help="where the rows go")
    args = parser.parse_args(argv)
    if args.rows:
        sets = json.loads(args.rows.read_text())["sets"]
    else:
        config = with_overrides(get_preset(args.preset), args.set)
        sets = {}
        if args.only != "clapnq":
            sets["genre"] = genre_rows(config)
            sets[HELDOUT] = genre_rows(config, part="heldout")
        if args.only != "genre":
            sets["CLAPNQ-dev"] = clapnq_rows(config)
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(json.dumps({"preset": args.preset, "set": args.set, "sets": sets}, indent=1))
    report(sets)


if __name__ == "__main__":
    main()
