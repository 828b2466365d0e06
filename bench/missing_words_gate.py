"""The `missing_words` gate's two thresholds, chosen on the whole tuning suite.

    nice .venv/bin/python -m bench.missing_words_gate collect   # ~7 min on a quiet 2-core machine
    .venv/bin/python -m bench.missing_words_gate report         # the sweep, from the collected rows

The reply rule `missing_words` (qa.pipeline.checks.reply_rules) refuses a question answerability let
through when its passages lack at least ``turns.refuse_missing`` of the question's focus words while
answerability's probability stays below ``turns.refuse_missing_below`` (or when they lack a name the
question asks about, which this bench leaves as it is). Both thresholds were tuned on MTRAG-UN train
alone (3 words, 0.5). Here they are chosen on every set of the tuning suite at once.

``collect`` answers each set of bench.reply_rules once with `default` and the count part of the gate
switched off (``turns.refuse_missing`` = 99), and records for each question: its reply, whether the
reply decision reached `missing_words` (no earlier rule decided), answerability's verdict and
probability, and how many focus words the passages lack. The gate reads only the model's
"answerable" verdict (a verdict rule's partial one carries the rule's probability), and it only
turns a reply it reaches into a refusal, so every pair of thresholds can be replayed exactly from
these rows (``report``) without answering again. ``collect --check`` answers the genre set again
with the preset's own thresholds and compares its replies with the replay.

``report``: the share of right replies (bench.reply_rules.RIGHT: an answer or an answer in part to an
answerable question, a refusal of an unanswerable one, a question back to an underspecified turn) per
set for each pair; the pair that maximises the mean over the tuning sets (ties: the pair nearest
``BEFORE``, the pair MTRAG-UN train alone had chosen); a leave-one-set-out check (the pair chosen on
the other sets, scored on the one left out); and the chosen pair against ``BEFORE``, with a paired
bootstrap interval per set. The genre set's held-out part is scored beside and chooses nothing; no
analyst-bench dev/test or MTRAG-UN test question is read.

Writes bench/results/missing_words_gate_rows.json (collect) and bench/results/missing_words_gate.json
(report).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from bench.common import REPO
from bench.reply_rules import (
    RIGHT,
    analyst_sample,
    bootstrap,
    clapnq_sample,
    genre_sample,
    mtrag_sample,
    reply_of,
    squad_sample,
)
from qa.pipeline.checks import reply_rules
from qa.pipeline.checks.answerability import ANSWERABLE
from qa.pipeline.config.presets import get_preset

ROWS = REPO / "bench" / "results" / "missing_words_gate_rows.json"
RESULTS = REPO / "bench" / "results" / "missing_words_gate.json"
HELDOUT = "genre held-out"
TUNING_POOLED = "tuning sets, pooled"
# The rules of the "before" phase that come after `missing_words`: a question one of them decided
# was still read by the gate first.
AFTER_GATE = ("missing_words", "weak_retrieval")
# The thresholds as they were chosen on MTRAG-UN train alone.
BEFORE = (3, 0.5)
COUNTS = (1, 2, 3, 4)
BELOW = tuple(round(0.05 * i, 2) for i in range(0, 21))


def samples(config) -> list:
    return [
        genre_sample(config),
        clapnq_sample(1),
        squad_sample(4, 200),
        analyst_sample(30),
        mtrag_sample(40),
        genre_sample(config, "heldout"),
    ]


def collect_rows(sample, config) -> list[dict]:
    """One row per question of ``sample``: its reply with the gate's count part off, and what the gate
    reads where the reply decision reached it."""
    decide = reply_rules.decide
    seen: list[dict] = []

    def recording(phase, evidence, rules_off=()):
        decision = decide(phase, evidence, rules_off)
        if phase == "before" and (decision is None or decision.rule in AFTER_GATE):
            verdict = evidence.before.verdict if evidence.before is not None else None
            if verdict is not None and evidence.lacking is not None:
                seen.append(
                    {"verdict": verdict.kind, "p": verdict.probability, "lacking": len(evidence.lacking)}
                )
        return decision

    reply_rules.decide = recording
    rows = []
    try:
        for case in sample.cases:
            seen.clear()
            answer = sample.answer(config, case)
            gate = seen[0] if seen else None
            rows.append(
                {
                    "set": sample.name,
                    "id": case.id,
                    "expected": case.expected,
                    "reply": reply_of(answer),
                    "reached": gate is not None,
                    "verdict": gate["verdict"] if gate else None,
                    "p": gate["p"] if gate else None,
                    "lacking": gate["lacking"] if gate else 0,
                }
            )
    finally:
        reply_rules.decide = decide
    return rows


def replayed(row: dict, count: int, below: float) -> str:
    """The row's reply with the gate at (``count``, ``below``), as qa.pipeline.flow.stages applies it:
    only to the model's "answerable" verdict."""
    gated = row["reached"] and row["verdict"] == ANSWERABLE
    if gated and row["lacking"] >= count and row["p"] < below:
        return "refuse"
    return row["reply"]


def right_share(rows: list[dict], count: int, below: float) -> float:
    return sum(replayed(r, count, below) in RIGHT[r["expected"]] for r in rows) / len(rows)


def choose(by_set: dict[str, list[dict]], names: list[str], before: tuple[int, float]) -> tuple[int, float]:
    """The pair with the best mean right share over ``names``; ties go to the pair nearest ``before``."""

    def key(pair):
        mean = sum(right_share(by_set[n], *pair) for n in names) / len(names)
        return (round(mean, 9), -abs(pair[0] - before[0]) - abs(pair[1] - before[1]))

    return max(((c, b) for c in COUNTS for b in BELOW), key=key)


def report(rows: list[dict], before: tuple[int, float]) -> dict:
    by_set: dict[str, list[dict]] = {}
    for row in rows:
        by_set.setdefault(row["set"], []).append(row)
    tuning = [name for name in by_set if name != HELDOUT]
    chosen = choose(by_set, tuning, before)
    left_out = {}
    for name in tuning:
        pair = choose(by_set, [n for n in tuning if n != name], before)
        left_out[name] = {
            "chosen_without_it": list(pair),
            "right": right_share(by_set[name], *pair),
            "right_before": right_share(by_set[name], *before),
        }
    per_set = {}
    pooled = {TUNING_POOLED: [r for name in tuning for r in by_set[name]]}
    for name, set_rows in {**by_set, **pooled}.items():
        deltas = [
            int(replayed(r, *chosen) in RIGHT[r["expected"]])
            - int(replayed(r, *before) in RIGHT[r["expected"]])
            for r in set_rows
        ]
        low, high = bootstrap(deltas)
        changed = [
            f"{r['id']}: {replayed(r, *before)} -> {replayed(r, *chosen)} (gold {r['expected']})"
            for r in set_rows
            if replayed(r, *before) != replayed(r, *chosen)
        ]
        per_set[name] = {
            "questions": len(set_rows),
            "right_before": right_share(set_rows, *before),
            "right_chosen": right_share(set_rows, *chosen),
            "change": sum(deltas) / len(deltas),
            "ci95": [low, high],
            "changes": changed,
        }
    grid = {
        f"{c},{b}": {name: round(right_share(by_set[name], c, b), 4) for name in by_set}
        for c in COUNTS
        for b in BELOW
    }
    return {
        "before": list(before),
        "chosen": list(chosen),
        "tuning_sets": tuning,
        "sets": per_set,
        "leave_one_set_out": left_out,
        "grid": grid,
    }


def print_report(result: dict) -> None:
    before, chosen = result["before"], result["chosen"]
    shipped = result["shipped"]
    print(
        f"before (MTRAG-UN train alone): {before[0]} words below {before[1]}; chosen on the tuning sets: "
        f"{chosen[0]} words below {chosen[1]}; the preset ships {shipped[0]} below {shipped[1]}"
    )
    print(f"{'set':24}{'questions':>10}{'before':>8}{'chosen':>8}{'change':>9}  95% interval")
    for name, row in result["sets"].items():
        low, high = row["ci95"]
        print(
            f"{name:24}{row['questions']:>10}{row['right_before']:>8.3f}{row['right_chosen']:>8.3f}"
            f"{row['change']:>+9.3f}  [{low:+.3f}, {high:+.3f}]"
        )
    print("leave one set out (chosen on the others, scored on it):")
    for name, row in result["leave_one_set_out"].items():
        pair = row["chosen_without_it"]
        print(f"  {name:24} {pair[0]} words below {pair[1]}: {row['right_before']:.3f} -> {row['right']:.3f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.missing_words_gate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("command", choices=("collect", "report"))
    parser.add_argument("--rows", type=Path, default=ROWS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--check", action="store_true", help="collect: replay the preset's own thresholds on genre"
    )
    args = parser.parse_args(argv)
    preset = get_preset("default")
    shipped = (preset.turns.refuse_missing, preset.turns.refuse_missing_below)
    if args.command == "collect":
        config = replace(preset, turns=replace(preset.turns, refuse_missing=99))
        rows = []
        for sample in samples(config):
            rows += collect_rows(sample, config)
            args.rows.write_text(json.dumps(rows, indent=0) + "\n", encoding="utf-8")
            print(f"{sample.name}: {len(sample.cases)} questions", flush=True)
            if args.check and sample.name == "genre":
                own = {r["id"]: r["reply"] for r in collect_rows(genre_sample(preset), preset)}
                replays = {r["id"]: replayed(r, *shipped) for r in rows if r["set"] == "genre"}
                differ = [i for i in own if own[i] != replays[i]]
                print(f"check: {len(differ)} of {len(own)} genre replies differ from the replay {differ}")
        return
    result = {**report(json.loads(args.rows.read_text(encoding="utf-8")), BEFORE), "shipped": list(shipped)}
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print_report(result)


if __name__ == "__main__":
    main()
