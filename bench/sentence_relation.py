"""The thresholds of the per-sentence relation label (answers / background / off_question).

    nice .venv/bin/python -m bench.sentence_relation             # ~5 min here; rows -> bench/results/
    .venv/bin/python -m bench.sentence_relation --rows bench/results/sentence_relation.json  # reprint

Runs ``default`` in memory (no database, no LLM) over the genre set (bench/genre.py) and CLAPNQ-dev
(../shared/data/clapnq-dev), and keeps one row per sentence of every answer it gives (refusals and
questions back have none): the sentence's score (qa.pipeline.checks.relation.relation_scores) and whether
it is a gold answer sentence (it cites one of the question's gold evidence sentences; a sentence
of an answer to an unanswerable question never is).

The thresholds:
  answers     the lowest t at which, on every set, at least 65% of the sentences labelled "answers"
              (score >= t) are gold answer sentences, each set still labelling >= 5% of its sentences
              so (a green badge a reader can take at its word); where no t gets there, the t of the
              best F1 averaged over the sets;
  background  the highest t under which at most 5% of the gold answer sentences fall: a sentence
              that answers is called "off the question" at most one time in twenty.
Reported per set: the ranking quality of the score (AUC, gold against the rest), precision/recall
of "answers" at the chosen threshold, the share of non-gold
sentences called off_question, and 5-fold cross-fitted figures (threshold chosen on the other
folds). Never run this on analyst-bench dev/test or MTRAG-UN test: they are held out.
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

RESULTS = Path(__file__).resolve().parent / "results" / "sentence_relation.json"
GRID = [round(0.2 + 0.025 * i, 3) for i in range(25)]  # 0.20 .. 0.80
MAX_GOLD_OFF = 0.05
# A green "answers the question" badge a reader can take at its word two times in three or better.
TARGET_PRECISION = 0.65
MIN_LABELLED = 0.05
FOLDS = 5


def _rows(question_id: str, question: str, answer, gold: set[str], embedder) -> list[dict]:
    from qa.pipeline.checks.relation import relation_scores
    from review.evaluation.predictions import evidence_key

    if answer.refused or answer.kind == "underspecified" or not answer.sentences:
        return []
    scores = relation_scores(question, answer.sentences, embedder)
    return [
        {
            "id": question_id,
            "score": score,
            "gold": any(evidence_key(c.document_id, c.label) in gold for c in sentence.citations),
            # What bench/llm_judge_sentences.py asks the LLM judge about; not read here.
            "question": question,
            "text": sentence.text,
            "title": sentence.citations[0].document_title if sentence.citations else "",
        }
        for sentence, score in zip(answer.sentences, scores, strict=True)
    ]


def genre_rows(config) -> list[dict]:
    from bench.genre import genre_answers, gold_sentence_ids
    from review.evaluation.predictions import evidence_key

    rows = []
    for question, run, sentences, embedder in genre_answers(config):
        ids = gold_sentence_ids(question, sentences) if question.answerable else set()
        gold = {evidence_key(s.document_id, s.label) for s in sentences if s.id in ids}
        rows += _rows(question.id, question.question, run.answer, gold, embedder)
    return rows


def clapnq_rows(config) -> list[dict]:
    from bench.answer_quality import clapnq_predictions

    rows = []
    for case, _, run, embedder in clapnq_predictions(config, progress_every=40):
        gold = set(case.gold_evidence) if case.answerable else set()
        rows += _rows(case.case_id, case.question, run.answer, gold, embedder)
    return rows


def f1_at(rows: Sequence[dict], t: float, weight: float = 1.0) -> tuple[float, float, float]:
    """(precision, recall, F1) of "score >= t" as "answers" against gold."""
    tp = sum(weight for r in rows if r["score"] >= t and r["gold"])
    fp = sum(weight for r in rows if r["score"] >= t and not r["gold"])
    fn = sum(weight for r in rows if r["score"] < t and r["gold"])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def choose_answers(sets: Sequence[Sequence[dict]]) -> float:
    """The lowest t at which "answers" is right (precision) at least TARGET_PRECISION of the time on
    every set while each set still labels MIN_LABELLED of its sentences so; where none gets there,
    the t of the best F1 averaged over the sets."""
    for t in GRID:
        points = [f1_at(rows, t) for rows in sets if rows]
        shares = [sum(r["score"] >= t for r in rows) / len(rows) for rows in sets if rows]
        if all(p >= TARGET_PRECISION for p, _, _ in points) and all(s >= MIN_LABELLED for s in shares):
            return t

    def pooled(t: float) -> float:
        weighted = [f1_at(rows, t) for rows in sets if rows]
        return sum(f for _, _, f in weighted) / len(weighted)

    return max(GRID, key=lambda t: (round(pooled(t), 6), -t))


def choose_background(sets: Sequence[Sequence[dict]]) -> float:
    gold = [r["score"] for rows in sets for r in rows if r["gold"]]
    allowed = [t for t in GRID if sum(s < t for s in gold) <= MAX_GOLD_OFF * len(gold)]
    return max(allowed) if allowed else GRID[0]


def describe(name: str, rows: Sequence[dict], answers: float, background: float) -> str:
    precision, recall, f1 = f1_at(rows, answers)
    gold = [r for r in rows if r["gold"]]
    other = [r for r in rows if not r["gold"]]
    pairs = [(g["score"], o["score"]) for g in gold for o in other]
    auc = sum((a > b) + 0.5 * (a == b) for a, b in pairs) / len(pairs) if pairs else float("nan")
    off_other = sum(r["score"] < background for r in other) / len(other) if other else 0.0
    off_gold = sum(r["score"] < background for r in gold) / len(gold) if gold else 0.0
    return (
        f"{name}: {len(rows)} sentences ({len(gold)} gold), AUC {auc:.3f}; "
        f"answers P={precision:.3f} R={recall:.3f} "
        f"F1={f1:.3f}; off_question: {off_other:.1%} of non-gold, {off_gold:.1%} of gold"
    )


def cross_fitted(rows: Sequence[dict], others: Sequence[Sequence[dict]], seed: int = 0) -> str:
    """Each fold labelled at thresholds chosen on the other folds (and ``others``), by question."""
    ids = sorted({r["id"] for r in rows})
    random.Random(seed).shuffle(ids)
    fold_of = {qid: i % FOLDS for i, qid in enumerate(ids)}
    held: list[dict] = []
    chosen = []
    for fold in range(FOLDS):
        train = [r for r in rows if fold_of[r["id"]] != fold]
        answers, background = choose_answers([train, *others]), choose_background([train, *others])
        chosen.append(answers)
        held += [{**r, "t": answers, "b": background} for r in rows if fold_of[r["id"]] == fold]
    tp = sum(r["score"] >= r["t"] and r["gold"] for r in held)
    fp = sum(r["score"] >= r["t"] and not r["gold"] for r in held)
    fn = sum(r["score"] < r["t"] and r["gold"] for r in held)
    p = tp / (tp + fp) if tp + fp else 0.0
    r_ = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r_ / (p + r_) if p + r_ else 0.0
    return (
        f"  cross-fitted ({FOLDS} folds): answers thresholds {sorted(set(chosen))}, "
        f"held-out P={p:.3f} R={r_:.3f} F1={f1:.3f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.sentence_relation", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--preset", default="default")
    parser.add_argument("--rows", type=Path, help="reprint from saved rows instead of running")
    args = parser.parse_args(argv)
    if args.rows:
        sets = json.loads(args.rows.read_text())["sets"]
    else:
        from qa.pipeline.config.presets import get_preset

        config = get_preset(args.preset)
        sets = {"genre": genre_rows(config), "clapnq-dev": clapnq_rows(config)}
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps({"preset": args.preset, "sets": sets}, indent=1))
    answers = choose_answers(list(sets.values()))
    background = choose_background(list(sets.values()))
    print(f"chosen: answers >= {answers}, off_question < {background}")
    for name, rows in sets.items():
        print(describe(name, rows, answers, background))
    print(cross_fitted(sets["clapnq-dev"], [sets["genre"]]))
    print("  'answers' by threshold: precision recall per set (genre, clapnq-dev):")
    for t in GRID:
        cells = "    ".join("{:.3f} {:.3f}".format(*f1_at(rows, t)[:2]) for rows in sets.values())
        print(f"    {t:.3f}  {cells}")


if __name__ == "__main__":
    main()
