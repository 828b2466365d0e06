"""Why the CLAPNQ-dev answerability goal (unanswerable F1 >= 0.85 at answerable recall >= 0.95) is
out of reach, in numbers: ``bench/answerability.py``'s ceiling report calls ``what_limits`` with the
held-out p(answerable) of one fold split."""

from __future__ import annotations

import statistics

import numpy as np
from answerability_models import auc


def what_limits(rows: list[dict], p: np.ndarray, *, min_recall: float = 0.95, goal_f1: float = 0.85) -> dict:
    """Why the goal (unanswerable F1 >= 0.85 at answerable recall >= 0.95) is out of reach, in numbers:
    how many unanswerable questions the held-out p(answerable) puts below the answerable ones it may
    refuse, how many the goal needs there, and the AUC that would take (a binormal ROC with equal
    variances: the usual reading of an AUC as a separation); what the signals do when retrieval
    brings the question's own passage first; and the refusals no threshold controls, which cap
    answerable recall whatever p says."""
    answerable = np.array([r["answerable"] for r in rows])
    n_answerable, n_unanswerable = int(answerable.sum()), int((~answerable).sum())
    allowed = int(np.floor((1 - min_recall) * n_answerable + 1e-9))  # answerable refusals the recall allows
    threshold = np.sort(p[answerable])[allowed]
    caught = int(((p < threshold) & ~answerable).sum())
    # The fewest unanswerable refusals giving goal_f1 when `allowed` answerable ones are refused too.
    needed = next(
        k
        for k in range(n_unanswerable + 1)
        if k and 2 * k / (2 * k + allowed + (n_unanswerable - k)) >= goal_f1
    )
    normal = statistics.NormalDist()
    false_rate = allowed / n_answerable

    def binormal_auc(caught_share: float) -> float:
        separation = normal.inv_cdf(min(caught_share, 0.999)) + normal.inv_cdf(1 - false_rate)
        return normal.cdf(separation / 2**0.5)

    own = np.array([bool(r["top_document"]) and r["top_document"][0] in r["gold_documents"] for r in rows])
    reader = np.array([r["signals"]["reader_answerable"] for r in rows])
    cosine = np.array([r["signals"]["best_sentence_cosine"] for r in rows])
    hard = np.array(
        [
            r["forced_refusal"]
            or r["generator_refused"]
            or r["relevance"] is None
            or not r["relevance"]["addresses"]
            for r in rows
        ]
    )
    hard_answerable = int((hard & answerable).sum())
    hard_elsewhere = int((hard & answerable & ~own).sum())
    limits = {
        "unanswerable_below_threshold": caught,
        "unanswerable_needed": needed,
        "binormal_auc_held_out": round(binormal_auc(caught / n_unanswerable), 4),
        "binormal_auc_needed": round(binormal_auc(needed / n_unanswerable), 4),
        "own_passage_first_answerable": round(float(own[answerable].mean()), 4),
        "own_passage_first_unanswerable": round(float(own[~answerable].mean()), 4),
        "auc_where_own_passage_first": round(auc(p[own], answerable[own]), 4),
        "reader_auc_where_own_passage_first": round(auc(reader[own], answerable[own]), 4),
        "cosine_auc_where_own_passage_first": round(auc(cosine[own], answerable[own]), 4),
        "answerable_refused_by_rules": hard_answerable,
        "answerable_recall_cap": round(1 - hard_answerable / n_answerable, 4),
    }
    print(
        f"  what limits it (fold split 0): with {allowed} of {n_answerable} answerable questions below the "
        f"threshold, {caught} of {n_unanswerable} unanswerable ones are (F1 {goal_f1} needs {needed}: a "
        f"binormal AUC of {limits['binormal_auc_needed']:.3f}, against {limits['binormal_auc_held_out']:.3f} "
        f"for what is reached). Retrieval puts the question's own passage first for "
        f"{limits['own_passage_first_answerable']:.0%} of answerable and "
        f"{limits['own_passage_first_unanswerable']:.0%} of unanswerable questions; where it does, AUC of "
        f"p(answerable) {limits['auc_where_own_passage_first']:.3f}, the reader alone "
        f"{limits['reader_auc_where_own_passage_first']:.3f}, the best cosine alone "
        f"{limits['cosine_auc_where_own_passage_first']:.3f}. Refusals no threshold controls (rules, "
        f"the answer check's off-question floor, generation): {hard_answerable} answerable "
        f"({hard_elsewhere} with another document first), so answerable recall cannot pass "
        f"{limits['answerable_recall_cap']:.2f}"
    )
    return limits
