"""python -m bench.agreement: how long review.evaluation.agreement takes for a task's figures.

The task page, the agreement API and every adjudication compute the whole task's agreement
(kappa per pair, alpha over all annotators, per question) from scratch. Generated tasks: each
question has a candidate set of ``candidates`` sentences; every annotator labels each question
and chooses three sentences. Not in ``python -m bench``'s default set: name it to run it.
"""

from __future__ import annotations

import random
import time

from bench.common import print_table, write_result
from review.evaluation.agreement import Judgement, agreement

SHAPES = ((20, 2, 100), (100, 3, 200), (500, 3, 200))  # (questions, annotators, candidates per question)
LABELS = ("answerable", "partial", "unanswerable")


def _task(questions: int, annotators: int, candidates: int, seed: int = 0):
    rng = random.Random(seed)
    judgements, sets = [], {}
    for q in range(questions):
        sentences = [f"q{q}#S{s}" for s in range(candidates)]
        sets[f"q{q}"] = set(sentences)
        for a in range(annotators):
            chosen = frozenset(rng.sample(sentences, 3))
            judgements.append(Judgement(f"q{q}", f"a{a}", rng.choice(LABELS), chosen))
    return judgements, sets


def main() -> None:
    rows = []
    for questions, annotators, candidates in SHAPES:
        judgements, sets = _task(questions, annotators, candidates)
        started = time.perf_counter()
        figures = agreement(judgements, sets)
        seconds = time.perf_counter() - started
        rows.append((questions, annotators, candidates, figures.evidence_units, round(seconds, 3)))
    headers = ("questions", "annotators", "candidates", "evidence units", "seconds")
    print_table("Agreement of one task, computed from scratch", headers, rows)
    write_result("agreement", {"rows": [dict(zip(headers, row, strict=True)) for row in rows]}, quick=False)


if __name__ == "__main__":
    main()
