"""bench/answerability.py's models and metrics: fitting the answerability, answer-check and
confidence models on tuning rows, the pipeline's decisions from them, and the scores reported.

Rows are the dicts bench/answerability.py collects (one per question: signals, whether generation
refused, the answer's relevance, its citation F1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from qa.pipeline.checks.answerability import SIGNAL_NAMES, LogisticModel, logit
from qa.pipeline.checks.confidence import (
    ANSWER_CHECK_NAMES,
    CONFIDENCE_NAMES,
    answer_check_features,
    bounded,
    confidence_features,
    fitted,
)
from qa.pipeline.checks.relevance import AnswerRelevance

FOLDS = 5
# Inner folds for the confidence model's cross-fitted training rows (calibration_rows).
CALIBRATION_FOLDS = 5
CALIBRATION_SEEDS = (0, 1, 2)
# Fold splits (seeds) the held-out numbers are reported over; the first is the headline one.
SPLITS = (0, 1, 2)


# --- metrics --------------------------------------------------------------------------------


def prf(predicted: np.ndarray, actual: np.ndarray) -> tuple[float, float, float]:
    hits = float((predicted & actual).sum())
    precision = hits / predicted.sum() if predicted.sum() else 0.0
    recall = hits / actual.sum() if actual.sum() else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return precision, recall, f1


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    pos, neg = scores[positive], scores[~positive]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def ece(probabilities: np.ndarray, outcomes: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over equal-width bins: sum of |mean p - hit rate| weighted by bin size."""
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(probabilities, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        members = which == b
        if members.any():
            total += members.mean() * abs(probabilities[members].mean() - outcomes[members].mean())
    return float(total)


def matrix(rows: list[dict], names, key: str) -> np.ndarray:
    return np.array([[row[key][n] for n in names] for row in rows], dtype=np.float64)


def relevance_of(row: dict) -> AnswerRelevance | None:
    data = row["relevance"]
    if data is None:
        return None
    return AnswerRelevance(
        data["score"],
        data["cosine"],
        data["focus_coverage"],
        data["type_stated"],
        data["addresses"],
        data["reason"],
    )


@dataclass(frozen=True)
class Models:
    answerability: LogisticModel
    answer_check: LogisticModel
    confidence: LogisticModel | None  # None: not fitted (fit_models(..., calibrate=False))
    rule_precision: float | None = None  # share of the hard rule's refusals that were unanswerable
    rule_count: int = 0


def rule_precision(rows: list[dict]) -> tuple[float | None, int]:
    """How often a refusal by the hard rule (an asked-for amount no passage states) was right.

    Laplace-smoothed, (right + 1) / (n + 2): the rule fires rarely (8 of 224 tuning questions, all
    8 right), and 8 of 8 is evidence for about 90%, not for certainty.
    """
    ruled = [r for r in rows if r["forced_refusal"]]
    right = sum(not r["answerable"] for r in ruled)
    return ((right + 1) / (len(ruled) + 2) if ruled else None), len(ruled)


@dataclass(frozen=True)
class Decisions:
    p_answerable: np.ndarray  # before generation
    p_checked: np.ndarray  # after it (the answerability probability where nothing was generated)
    refused: np.ndarray
    confidence: np.ndarray


def decide(rows: list[dict], models: Models, *, with_check: bool = True) -> Decisions:
    """What the pipeline decides for each row: the same order of checks as ``runner.answer_stage``."""
    p1 = models.answerability.probability(matrix(rows, models.answerability.names, "signals"))
    p2 = p1.copy()
    refused = np.zeros(len(rows), dtype=bool)
    confidence = np.zeros(len(rows))
    for i, row in enumerate(rows):
        if row["forced_refusal"]:
            p1[i] = p2[i] = min(p1[i], 0.05)
        early = row["forced_refusal"] or p1[i] < models.answerability.threshold
        relevance = relevance_of(row)
        if early or row["generator_refused"] or relevance is None:
            refused[i] = True
            by_rule = row["forced_refusal"] and models.rule_precision is not None
            confidence[i] = bounded(models.rule_precision if by_rule else 1.0 - p1[i])
            continue
        if with_check:
            features = answer_check_features(p1[i], relevance)
            p2[i] = models.answer_check.probability(features)[0]
            if not relevance.addresses or p2[i] < models.answer_check.threshold:
                refused[i] = True
                confidence[i] = bounded(1.0 - p2[i])
                continue
        if models.confidence is None:  # the gates alone (fitted with calibrate=False)
            confidence[i] = np.nan
            continue
        features = confidence_features(
            p2[i], relevance, row["support_share"], row["signals"], models.confidence
        )
        confidence[i] = bounded(models.confidence.probability(features)[0])
    return Decisions(p1, p2, refused, confidence)


def best_threshold(
    answerable: np.ndarray, probabilities: np.ndarray, refused_anyway: np.ndarray, min_recall: float
) -> float:
    """The threshold with the best unanswerable-class F1 among those keeping answerable recall."""
    best, best_f1 = 0.0, -1.0
    for threshold in np.unique(np.concatenate([[0.0], probabilities])):
        refused = refused_anyway | (probabilities < threshold)
        recall = (~refused & answerable).sum() / max(answerable.sum(), 1)
        f1 = prf(refused, ~answerable)[2]
        if recall >= min_recall and f1 > best_f1:
            best, best_f1 = float(threshold), f1
    return best


# An answer closer to the question, or stating more of its focus words, must never make the check
# less sure it answers: with the reader's signal in p(answerable) the fit gave answer_coverage a
# negative weight (collinear with the rest), and an off-question answer then outscored an on-question one.
NON_NEGATIVE = ("answer_cosine", "answer_coverage")


def fit_monotone(x: np.ndarray, y: np.ndarray, names, *, l2: float) -> LogisticModel:
    """A logistic fit in which each NON_NEGATIVE feature that would get a negative weight is left out (0)."""
    kept = list(range(len(names)))
    while True:
        model = LogisticModel.fit(x[:, kept], y, [names[i] for i in kept], l2=l2)
        wrong = [i for i, c in zip(kept, model.coef, strict=True) if names[i] in NON_NEGATIVE and c < 0]
        if not wrong:
            break
        kept.remove(wrong[0])
    mean, scale, coef = np.zeros(len(names)), np.ones(len(names)), np.zeros(len(names))
    mean[kept], scale[kept], coef[kept] = model.mean, model.scale, model.coef
    return LogisticModel(tuple(names), tuple(mean), tuple(scale), tuple(coef), model.intercept)


def fit_models(
    train: list[dict],
    l2: float,
    *,
    early_recall: float,
    final_recall: float,
    names=SIGNAL_NAMES,
    calibrate: bool = True,
) -> Models:
    """Fit the models in pipeline order, each threshold on the same data; then (``calibrate``) the
    confidence model on cross-fitted decisions (``calibration_rows``)."""
    answerable = np.array([row["answerable"] for row in train])
    x = matrix(train, names, "signals")
    first = LogisticModel.fit(x, answerable.astype(float), names, l2=l2)
    p1 = first.probability(x)
    forced = np.array([row["forced_refusal"] for row in train])
    generator = np.array([row["generator_refused"] or row["relevance"] is None for row in train])
    first = fitted(first, threshold=best_threshold(answerable, p1, forced | generator, early_recall))
    kept = [i for i in range(len(train)) if not (forced[i] or generator[i] or p1[i] < first.threshold)]
    features = np.array([answer_check_features(p1[i], relevance_of(train[i])) for i in kept])
    check = fit_monotone(features, answerable[kept].astype(float), ANSWER_CHECK_NAMES, l2=l2)
    p2 = np.zeros(len(train))
    p2[kept] = check.probability(features)
    off = np.ones(len(train), dtype=bool)
    off[kept] = [not relevance_of(train[i]).addresses for i in kept]
    check = fitted(check, threshold=best_threshold(answerable, p2, off, final_recall))
    models = Models(first, check, None, *rule_precision(train))
    if not calibrate:
        return models
    options = {"early_recall": early_recall, "final_recall": final_recall, "names": names}
    features, outcomes = calibration_rows(train, l2, options)
    return replace(models, confidence=LogisticModel.fit(features, outcomes, CONFIDENCE_NAMES, l2=l2))


def confidence_inputs(checked: float, row: dict) -> list[float]:
    """CONFIDENCE_NAMES of an answered row, as ``confidence.confidence_features`` gives them at run time."""
    available = {"answer_check_logit": logit(checked), **row["signals"]}
    return [available[name] for name in CONFIDENCE_NAMES]


def calibration_rows(train: list[dict], l2: float, options: dict) -> tuple[np.ndarray, np.ndarray]:
    """Confidence features and outcomes of the answered training questions, each decided by models
    fitted on the other CALIBRATION_FOLDS - 1 folds of ``train``: what the models fitted on all of it
    will meet on new questions. In-sample probabilities are surer than that, and a calibration fitted
    on them inherits the overconfidence. Each question comes once per seed of CALIBRATION_SEEDS, so
    that the fit does not hang on one split of ~200 questions."""
    features, outcomes = [], []
    for seed in CALIBRATION_SEEDS:
        fold = folds_of(train, CALIBRATION_FOLDS, seed=seed)
        for k in range(CALIBRATION_FOLDS):
            inner = fit_models(
                [r for r, f in zip(train, fold, strict=True) if f != k], l2, calibrate=False, **options
            )
            held = [r for r, f in zip(train, fold, strict=True) if f == k]
            decisions = decide(held, inner)
            for row, p2, refused in zip(held, decisions.p_checked, decisions.refused, strict=True):
                if not refused:
                    features.append(confidence_inputs(p2, row))
                    outcomes.append(confidence_outcome(row, False))
    return np.array(features), np.array(outcomes, dtype=float)


def folds_of(rows: list[dict], folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """A fold number per CLAPNQ row, stratified by answerability, fixed by the seed."""
    rng = np.random.default_rng(seed)
    fold = np.full(len(rows), -1)
    for label in (True, False):
        members = [i for i, row in enumerate(rows) if row["answerable"] == label]
        rng.shuffle(members)
        for position, i in enumerate(members):
            fold[i] = position % folds
    return fold


def confidence_outcome(row: dict, refused: bool) -> bool:
    if not row["answerable"]:
        return refused
    return not refused and (row["citation_f1"] or 0.0) >= 0.5


def calibration_floor(confidence: np.ndarray, draws: int = 1000, seed: int = 0) -> float:
    """The ECE that perfectly calibrated confidences would score on this many questions: the mean
    over outcomes drawn from the confidences themselves. On 200 questions ten bins hold ~20 each,
    and a bin's hit rate alone wanders by ~0.1 around its mean confidence."""
    rng = np.random.default_rng(seed)
    return float(np.mean([ece(confidence, rng.random(len(confidence)) < confidence) for _ in range(draws)]))


def calibration_report(rows: list[dict], splits: list[Decisions], seeds) -> dict:
    """Confidence ECE, Brier score and the ECE floor for each fold split, their means, and the
    reliability table of the first split; printed, and returned for ``--json``."""
    cells = []
    for decisions in splits:
        outcomes = np.array(
            [confidence_outcome(r, bool(x)) for r, x in zip(rows, decisions.refused, strict=True)]
        )
        confidence = decisions.confidence
        cells.append(
            (
                ece(confidence, outcomes),
                float(np.mean((confidence - outcomes) ** 2)),
                calibration_floor(confidence),
            )
        )
    per_split = ", ".join(f"{seed}: {e:.3f}" for seed, (e, _, _) in zip(seeds, cells, strict=True))
    means = np.mean(cells, axis=0)
    print(
        f"  confidence over fold splits ({per_split}): ECE mean {means[0]:.3f}, Brier {means[1]:.3f}; "
        f"a perfectly calibrated model with the same confidences would score ECE {means[2]:.3f} on average"
    )
    first = splits[0]
    outcomes = np.array([confidence_outcome(r, bool(x)) for r, x in zip(rows, first.refused, strict=True)])
    which = np.clip(np.digitize(first.confidence, np.linspace(0, 1, 11)[1:-1]), 0, 9)
    bins = [
        f"{b / 10:.1f}-{(b + 1) / 10:.1f}: n {int((which == b).sum())} "
        f"p {first.confidence[which == b].mean():.2f} right {outcomes[which == b].mean():.2f}"
        for b in range(10)
        if (which == b).any()
    ]
    print(f"  reliability, split {seeds[0]}: " + "; ".join(bins))
    return {
        "confidence_ece": [round(e, 4) for e, _, _ in cells],
        "confidence_brier": [round(b, 4) for _, b, _ in cells],
        "confidence_ece_mean": round(float(means[0]), 4),
        "confidence_ece_if_calibrated": round(float(means[2]), 4),
    }
