"""How many sentences an extractive answer should hold: preset variants on the genre set and CLAPNQ-dev.

    .venv/bin/python -m bench.answer_length                       # default and the variants below
    .venv/bin/python -m bench.answer_length --variant answer.extractive_relative_floor=0.8

Each variant is ``default`` with FIELD=VALUE overrides (``|`` joins several); it answers every
question of the genre set (bench/genre.py) and of CLAPNQ-dev in memory (no database, no LLM) and
prints, per set: answerable questions answered, answered and correct (citation F1 >= 0.5 against the
gold sentences), mean citation F1 over the answerable questions, unanswerable questions refused, and
the mean number of sentences cited by an answer shown. Both sets are tuning sets of issue 26; the
genre set's held-out part ("heldout") is printed beside them and chosen on by nothing. No
analyst-bench dev/test or MTRAG-UN test question is read. Writes bench/results/answer_length.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.common import REPO  # noqa: E402

RESULTS = REPO / "bench" / "results" / "answer_length.json"
VARIANTS = (
    "",
    "answer.extractive_min_sentences=1",
    "answer.extractive_relative_floor=0.75",
    "answer.extractive_relative_floor=0.9",
    "answer.extractive_min_sentences=1|answer.extractive_relative_floor=0.75",
    "answer.extractive_padding_floor=0.75",
)


def summary(rows: list[dict]) -> dict[str, float]:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    shown = [r for r in rows if r["shown"]]
    return {
        "answered": sum(r["shown"] for r in answerable) / max(len(answerable), 1),
        "correct": sum(r["shown"] and r["f1"] >= 0.5 for r in answerable) / max(len(answerable), 1),
        "citation_f1": sum(r["f1"] for r in answerable) / max(len(answerable), 1),
        "refused": sum(not r["shown"] for r in unanswerable) / max(len(unanswerable), 1),
        "sentences": sum(r["cited"] for r in shown) / max(len(shown), 1),
    }


def genre_rows(config, part: str = "tuning") -> list[dict]:
    from bench.genre import genre_answers, score

    rows = []
    for question, run, sentences, _ in genre_answers(config, part=part):
        outcome = score(question, run.answer, sentences)
        cited = len(run.answer.cited_sentences) if outcome.answered else 0
        rows.append({"id": question.id, "answerable": question.answerable, "shown": outcome.answered,
                     "f1": outcome.f1, "cited": cited})  # fmt: skip
    return rows


def clapnq_rows(config) -> list[dict]:
    from bench.answer_quality import clapnq_predictions
    from review.evaluation.predictions import evidence_key

    rows = []
    for case, _, run, _ in clapnq_predictions(config):
        answer = run.answer
        shown = not answer.refused and answer.kind != "underspecified"
        cited = {evidence_key(c.document_id, c.label) for s in answer.sentences for c in s.citations}
        cited = cited if shown else set()
        gold = set(case.gold_evidence) if case.answerable else set()
        f1 = 2 * len(cited & gold) / (len(cited) + len(gold)) if cited and gold else 0.0
        rows.append({"id": case.case_id, "answerable": case.answerable, "shown": shown, "f1": f1,
                     "cited": len(cited)})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    from bench.answer_quality import with_overrides
    from qa.pipeline.config.presets import get_preset

    description = __doc__.split("\n\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.answer_length", description=description)
    parser.add_argument("--variant", action="append", help="FIELD=VALUE[|FIELD=VALUE...]; repeatable")
    args = parser.parse_args(argv)
    results = {}
    print(f"{'variant':<72} {'set':<7} answered correct  cit.F1  refused  sentences")
    for variant in args.variant or VARIANTS:
        config = with_overrides(get_preset("default"), [v for v in variant.split("|") if v])
        started = time.perf_counter()
        rows = {"genre": genre_rows(config), "clapnq": clapnq_rows(config)}
        rows["heldout"] = genre_rows(config, part="heldout")  # reported beside, never chosen on
        sets = {name: summary(set_rows) for name, set_rows in rows.items()}
        for name, s in sets.items():
            print(f"{variant or 'default':<72} {name:<7} {s['answered']:8.3f} {s['correct']:7.3f} "
                  f"{s['citation_f1']:7.3f} {s['refused']:8.3f} {s['sentences']:10.2f}")  # fmt: skip
        results[variant or "default"] = {**sets, "rows": rows, "seconds": time.perf_counter() - started}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
