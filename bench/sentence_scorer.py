"""Would a fitted blend of the extractive generator's own signals choose better answer sentences?

    nice .venv/bin/python -m bench.sentence_scorer     # ~3 min here; rows -> bench/results/
    .venv/bin/python -m bench.sentence_scorer --rows bench/results/sentence_scorer.json   # refit and reprint

The extractive generator ranks each window's sentences by a fixed blend: 0.6 of the embedding
cosine and 0.4 of the rarity-weighted word overlap (``ExtractiveSettings.similarity_weight``). This
bench runs ``default`` in memory (no database, no LLM) over CLAPNQ-dev and both parts of the genre
set, records every sentence the generator ranked (each window of each answerable question) with the
signals it had, and whether the sentence is gold. A logistic regression over those signals and a
few more the generator could compute (its rank, its gap to the window's best on each signal, its
length, whether it is first in its section, whether it shares the best sentence's document or
stands next to it) is fitted on CLAPNQ-dev and the genre tuning part: cross-fitted there (5 folds
by question), and fitted on both for the genre held-out part, which it never sees.

Printed per set: the AUC of gold against the rest for today's blend and the fitted one, the paired
bootstrap 95% interval of the difference (resampling questions), and how often the top-ranked
sentence is gold (what the answer's first sentence is). Reads no analyst-bench dev/test or
MTRAG-UN test question.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RESULTS = Path(__file__).resolve().parent / "results" / "sentence_scorer.json"
FITTED_ON = ("CLAPNQ-dev", "genre tuning")
REPORTED = "genre held-out"
FEATURES = ("similarity", "overlap", "relative", "rank", "similarity_gap", "overlap_gap", "words",
            "first_in_section", "best_document", "next_to_best")  # fmt: skip
FOLDS = 5
SEED = 13


def window_rows(set_name: str, question_id: str, candidates: Sequence, relevance, is_gold) -> list[dict]:
    """One row per sentence the generator ranked in one window: its signals and whether it is gold."""
    similarity, overlap = np.asarray(relevance.similarity), np.asarray(relevance.lexical)
    scores = np.asarray(relevance.scores)
    order = np.argsort(-scores, kind="stable")
    rank = np.empty(len(scores))
    rank[order] = np.arange(len(scores))
    best = candidates[int(order[0])]
    rows = []
    for i, sentence in enumerate(candidates):
        section = [
            c.ordinal
            for c in candidates
            if (c.document_id, c.section) == (sentence.document_id, sentence.section)
        ]
        same_document = sentence.document_id == best.document_id
        rows.append(
            {
                "set": set_name,
                "question": question_id,
                "gold": int(is_gold(sentence)),
                "today": float(scores[i]),
                "similarity": float(similarity[i]),
                "overlap": float(overlap[i]),
                "relative": float(scores[i] / scores.max()) if scores.max() > 0 else 0.0,
                "rank": float(np.log1p(rank[i])),
                "similarity_gap": float(similarity.max() - similarity[i]),
                "overlap_gap": float(overlap.max() - overlap[i]),
                "words": float(np.log1p(len(sentence.text.split()))),
                "first_in_section": float(min(section) == sentence.ordinal),
                "best_document": float(same_document),
                "next_to_best": float(same_document and abs(sentence.ordinal - best.ordinal) == 1),
            }
        )
    return rows


def collect() -> list[dict]:
    """Every ranked window of every answerable question of the three sets, as rows."""
    from bench.answer_quality import clapnq_predictions
    from bench.genre import genre_answers, gold_sentence_ids
    from qa.pipeline.config.presets import get_preset
    from qa.pipeline.drafting.generation import ExtractiveGenerator
    from review.evaluation.types import evidence_key

    ranked: list[tuple] = []
    relevance = ExtractiveGenerator._relevance

    def recording(self, question, candidates):
        scored = relevance(self, question, candidates)
        ranked.append((list(candidates), scored))
        return scored

    def take(set_name: str, question_id: str, is_gold) -> list[dict]:
        taken = [
            row
            for k, (candidates, scored) in enumerate(ranked)
            for row in window_rows(set_name, f"{question_id}#{k}", candidates, scored, is_gold)
        ]
        ranked.clear()
        return taken

    config = get_preset("default")
    rows: list[dict] = []
    ExtractiveGenerator._relevance = recording
    try:
        for part, name in (("tuning", "genre tuning"), ("heldout", REPORTED)):
            for question, _, sentences, _ in genre_answers(config, part=part):
                gold = gold_sentence_ids(question, sentences)
                taken = take(name, question.id, lambda s, gold=gold: s.id in gold)
                rows += taken if question.answerable else []
        ranked.clear()
        for case, _, _, _ in clapnq_predictions(config):
            gold = set(case.gold_evidence)
            taken = take(
                "CLAPNQ-dev", case.case_id, lambda s, gold=gold: evidence_key(s.document_id, s.label) in gold
            )
            rows += taken if case.answerable else []
    finally:
        ExtractiveGenerator._relevance = relevance
    return rows


def _matrix(rows: Sequence[dict]) -> np.ndarray:
    return np.array([[row[f] for f in FEATURES] for row in rows])


def _question(row: dict) -> str:
    return row["question"].split("#")[0]


def fitted_scores(rows: Sequence[dict]) -> list[float]:
    """The fitted blend's score of each row: cross-fitted on the sets it is fitted on, fitted on all
    of them for the reported set."""
    from sklearn.linear_model import LogisticRegression

    def fit(train: Sequence[dict]):
        return LogisticRegression(max_iter=2000).fit(_matrix(train), [r["gold"] for r in train])

    scores = [0.0] * len(rows)
    tuning = [i for i, r in enumerate(rows) if r["set"] in FITTED_ON]
    questions = sorted({_question(rows[i]) for i in tuning})
    random.Random(SEED).shuffle(questions)
    fold = {q: k % FOLDS for k, q in enumerate(questions)}
    for k in range(FOLDS):
        train = [rows[i] for i in tuning if fold[_question(rows[i])] != k]
        held = [i for i in tuning if fold[_question(rows[i])] == k]
        for i, p in zip(held, fit(train).predict_proba(_matrix([rows[i] for i in held]))[:, 1], strict=True):
            scores[i] = float(p)
    reported = [i for i, r in enumerate(rows) if r["set"] not in FITTED_ON]
    if reported:
        model = fit([rows[i] for i in tuning])
        for i, p in zip(
            reported, model.predict_proba(_matrix([rows[i] for i in reported]))[:, 1], strict=True
        ):
            scores[i] = float(p)
    return scores


def top_gold(rows: Sequence[dict], scores: Sequence[float]) -> float:
    """The share of windows holding a gold sentence whose top-scored sentence is gold."""
    windows: dict[str, list[tuple[float, int]]] = {}
    for row, score in zip(rows, scores, strict=True):
        windows.setdefault(row["question"], []).append((score, row["gold"]))
    held = [w for w in windows.values() if any(g for _, g in w)]
    return sum(max(w)[1] for w in held) / max(len(held), 1)


def auc_difference(rows: Sequence[dict], fitted: Sequence[float], draws: int = 1000) -> tuple[float, float]:
    """95% paired bootstrap interval of AUC(fitted) - AUC(today), resampling questions."""
    from sklearn.metrics import roc_auc_score

    gold = np.array([r["gold"] for r in rows])
    today, new = np.array([r["today"] for r in rows]), np.array(fitted)
    by_question: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_question.setdefault(_question(row), []).append(i)
    questions, rng, differences = sorted(by_question), random.Random(SEED), []
    for _ in range(draws):
        picked = [i for q in (rng.choice(questions) for _ in questions) for i in by_question[q]]
        if gold[picked].min() != gold[picked].max():
            differences.append(
                roc_auc_score(gold[picked], new[picked]) - roc_auc_score(gold[picked], today[picked])
            )
    differences.sort()
    return differences[int(0.025 * len(differences))], differences[int(0.975 * len(differences)) - 1]


def report(rows: list[dict]) -> dict:
    from sklearn.metrics import roc_auc_score

    fitted = fitted_scores(rows)
    summary = {}
    print(
        f"{'set':<16} {'sentences':>9} {'gold':>5}  AUC today  fitted  [95% interval]  top gold today  fitted"
    )
    for name in (*FITTED_ON, REPORTED):
        picked = [i for i, r in enumerate(rows) if r["set"] == name]
        these, scores = [rows[i] for i in picked], [fitted[i] for i in picked]
        gold, today = [r["gold"] for r in these], [r["today"] for r in these]
        low, high = auc_difference(these, scores)
        row = {
            "sentences": len(these),
            "gold": sum(gold),
            "auc_today": roc_auc_score(gold, today),
            "auc_fitted": roc_auc_score(gold, scores),
            "difference_ci95": [low, high],
            "top_gold_today": top_gold(these, today),
            "top_gold_fitted": top_gold(these, scores),
        }
        summary[name] = row
        counts = f"{name:<16} {row['sentences']:>9} {row['gold']:>5}"
        aucs = f"{row['auc_today']:9.3f} {row['auc_fitted']:7.3f}  [{low:+.3f}, {high:+.3f}]"
        print(f"{counts}  {aucs}  {row['top_gold_today']:14.3f} {row['top_gold_fitted']:7.3f}")
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.sentence_scorer", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--rows", type=Path, help="refit and reprint from rows an earlier run wrote")
    args = parser.parse_args(argv)
    if args.rows:
        rows = json.loads(args.rows.read_text())["rows"]
    else:
        rows = collect()
    summary = report(rows)
    if not args.rows:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps({"summary": summary, "rows": rows}))


if __name__ == "__main__":
    main()
