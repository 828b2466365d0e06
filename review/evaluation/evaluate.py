"""Score a set of predictions against gold cases.

Which cases enter which average
-------------------------------
- recall_at_1, recall_at_5, mrr: every case with at least one gold document.
  Retrieved lists are collapsed to a document ranking first (repeats keep their
  first position), so chunk-level retrieval is scored per document.
- citation_precision/recall/f1: macro average over the cases with gold
  evidence ids; see ``convention`` for unanswerable cases that list some.
- evidence_score, answer_token_f1, rouge_l: every case.
- answer_score, combined, jafs: every case, and None (not a partial mean) as
  soon as one case lacks the judge score or support score it needs. A mean over
  the judged subset would not be comparable with the report's, which judged
  all 24 train questions.
- refusal_precision/recall/f1: refusal is the positive class, an unanswerable
  case the gold positive; 0/0 gives None (see metrics.refusal_scores).
- precision/gold_recall/hit_at_{1,5,10,20}, map_at_10, ndcg_at_10: every case with
  gold documents (review.evaluation.ranking defines them).
- exact_match: every case; a refusal is the null answer, which matches an
  unanswerable case (SQuAD 2.0's convention).
- answerable_/unanswerable_precision/recall/f1: each class with a refusal as the
  "unanswerable" prediction.
- latency_<stage>: the median (p50) seconds over the predictions that timed
  that stage.
Every aggregate over no cases is None; the keys are always present (latency
keys only for stages some prediction reports).

A case with no prediction scores as an empty, non-refusing answer that
retrieved and cited nothing and was not judged: missing output is a failure,
not a smaller test set. A prediction for a case id that is not among the cases
is an error, because it almost always means the two sides are keyed
differently ("q1" against "q001").

``convention``: the analyst-bench quirk
---------------------------------------
Two analyst-bench questions are marked unanswerable yet list evidence ids
(train q011, dev q003).

- ``"report"`` (default) scores them as the authors' scorer did, which this
  module reproduces per question on every reference evaluation file: they take
  part in citation P/R/F1 like any case with gold evidence (so a correct
  refusal that cites nothing scores 0 there), and EvidenceScore is the word
  overlap with their evidence sentences, 1.0 without citations only when the
  gold evidence is empty. Use it to compare with the report's table.
- ``"stated"`` follows SOURCE.md's wording instead: unanswerable cases are left
  out of the citation averages (refusal metrics and JAFS measure them), and an
  unanswerable case with no citations gets EvidenceScore 1.0 whatever evidence
  it lists; with citations it gets the word overlap (0.0 when it lists none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from review.evaluation import metrics as m
from review.evaluation import ranking
from review.evaluation.types import EvaluationResult, GoldCase, Prediction

Convention = Literal["report", "stated"]

AGGREGATE_KEYS = (
    "recall_at_1",
    "recall_at_5",
    "mrr",
    "citation_precision",
    "citation_recall",
    "citation_f1",
    "evidence_score",
    "combined",
    "answer_token_f1",
    "rouge_l",
    "refusal_precision",
    "refusal_recall",
    "refusal_f1",
    "jafs",
    "answer_score",
    "confidence_ece",
    *ranking.RANKING_KEYS,
    "exact_match",
    *ranking.CLASS_KEYS,
)


def missing_prediction(case_id: str) -> Prediction:
    return Prediction(case_id=case_id, answer="", refused=False, retrieved_documents=(), cited_evidence=())


def _cited_texts(prediction: Prediction, gold_texts: Mapping[str, str]) -> tuple[str, ...]:
    if prediction.cited_texts:
        return prediction.cited_texts
    keys = m.unique_in_order(prediction.cited_evidence)
    return tuple(gold_texts[key] for key in keys if key in gold_texts)


def _case_evidence_score(
    case: GoldCase,
    prediction: Prediction,
    gold_texts: Mapping[str, str],
    convention: Convention,
) -> float:
    cited = _cited_texts(prediction, gold_texts)
    gold = tuple(gold_texts[key] for key in case.gold_evidence if key in gold_texts)
    if convention == "stated" and not case.answerable:
        if not prediction.cited_evidence and not prediction.cited_texts:
            return 1.0
        if not m.evidence_words(gold):
            return 0.0
    return m.evidence_score(cited, gold)


def score_case(
    case: GoldCase,
    prediction: Prediction,
    gold_texts: Mapping[str, str],
    *,
    convention: Convention = "report",
) -> dict:
    """Every per-case number, as one row of ``EvaluationResult.per_case``.

    Retrieval values are None for a case without gold documents and citation
    values None for one that takes no part in the citation averages.
    """
    retrieved, gold_documents = prediction.retrieved_documents, case.gold_documents
    rank = m.gold_document_rank(retrieved, gold_documents)
    if gold_documents:
        at_1 = m.recall_at_k(retrieved, gold_documents, 1)
        at_5 = m.recall_at_k(retrieved, gold_documents, 5)
        reciprocal = m.reciprocal_rank(retrieved, gold_documents)
    else:
        at_1 = at_5 = reciprocal = None
    in_citation_average = convention == "report" or case.answerable
    citation = m.citation_prf(prediction.cited_evidence, case.gold_evidence)
    if not in_citation_average:
        citation = None
    evidence = _case_evidence_score(case, prediction, gold_texts, convention)
    return {
        "case_id": case.case_id,
        "question_type": ranking.question_type(case.question),
        "answerable": case.answerable,
        "refused": prediction.refused,
        "gold_rank": rank,
        "recall_at_1": at_1,
        "recall_at_5": at_5,
        "reciprocal_rank": reciprocal,
        "citation_precision": citation.precision if citation else None,
        "citation_recall": citation.recall if citation else None,
        "citation_f1": citation.f1 if citation else None,
        "evidence_score": evidence,
        "answer_score": prediction.answer_score,
        "confidence": prediction.confidence,
        "combined": m.combined_score(prediction.answer_score, evidence),
        "answer_token_f1": m.answer_token_f1(prediction.answer, case.reference_answer),
        "rouge_l": m.rouge_l(prediction.answer, case.reference_answer),
        "jafs": m.jafs(
            refused=prediction.refused,
            answerable=case.answerable,
            support_score=prediction.support_score,
        ),
        **ranking.ranking_row(retrieved, gold_documents),
        # A refusal is the null answer; an unanswerable case's reference is null too.
        "exact_match": ranking.exact_match(
            "" if prediction.refused else prediction.answer,
            case.reference_answer if case.answerable else "",
        ),
        "stage_latency": dict(prediction.stage_latency),
    }


def _present(rows: list[dict], key: str) -> list[float]:
    return [row[key] for row in rows if row[key] is not None]


def evaluate(
    cases: Iterable[GoldCase],
    predictions: Iterable[Prediction],
    gold_texts: Mapping[str, str] | None = None,
    *,
    convention: Convention = "report",
) -> EvaluationResult:
    """Aggregate metrics and per-case rows; ``gold_texts`` maps evidence keys to sentence text."""
    if convention not in ("report", "stated"):
        raise ValueError(f"unknown convention {convention!r}")
    cases = list(cases)
    gold_texts = gold_texts or {}
    by_case: dict[str, Prediction] = {}
    for prediction in predictions:
        if prediction.case_id in by_case:
            raise ValueError(f"two predictions for case {prediction.case_id!r}")
        by_case[prediction.case_id] = prediction
    case_ids = {case.case_id for case in cases}
    if len(case_ids) != len(cases):
        raise ValueError("case ids are not unique")
    unknown = sorted(set(by_case) - case_ids)
    if unknown:
        raise ValueError(f"predictions for unknown cases: {', '.join(unknown[:5])}")

    rows = [
        score_case(
            case,
            by_case.get(case.case_id) or missing_prediction(case.case_id),
            gold_texts,
            convention=convention,
        )
        for case in cases
    ]

    refusal = m.refusal_scores((row["refused"], row["answerable"]) for row in rows)
    results: dict[str, float | None] = {
        "recall_at_1": m.mean_or_none(_present(rows, "recall_at_1")),
        "recall_at_5": m.mean_or_none(_present(rows, "recall_at_5")),
        "mrr": m.mean_or_none(_present(rows, "reciprocal_rank")),
        "citation_precision": m.mean_or_none(_present(rows, "citation_precision")),
        "citation_recall": m.mean_or_none(_present(rows, "citation_recall")),
        "citation_f1": m.mean_or_none(_present(rows, "citation_f1")),
        "evidence_score": m.mean_or_none(row["evidence_score"] for row in rows),
        "combined": m.strict_mean(row["combined"] for row in rows),
        "answer_token_f1": m.mean_or_none(row["answer_token_f1"] for row in rows),
        "rouge_l": m.mean_or_none(row["rouge_l"] for row in rows),
        "refusal_precision": refusal.precision,
        "refusal_recall": refusal.recall,
        "refusal_f1": refusal.f1,
        "jafs": m.strict_mean(row["jafs"] for row in rows),
        "answer_score": m.strict_mean(row["answer_score"] for row in rows),
        "confidence_ece": m.expected_calibration_error(confidence_outcomes(rows)),
        **{key: m.mean_or_none(_present(rows, key)) for key in ranking.RANKING_KEYS},
        "exact_match": m.mean_or_none(row["exact_match"] for row in rows),
        **ranking.class_metrics(
            ranking.class_scores((not row["refused"], row["answerable"]) for row in rows)
        ),
    }
    stages = m.unique_in_order(stage for row in rows for stage in row["stage_latency"])
    for stage in stages:
        results[f"latency_{stage}"] = m.median_or_none(
            row["stage_latency"][stage] for row in rows if stage in row["stage_latency"]
        )
    return EvaluationResult(metrics=results, per_case=rows)


def confidence_outcomes(rows: Sequence[dict]) -> list[tuple[float, bool]]:
    """(confidence, whether the case came out right) for each case row that has a confidence:
    what the ECE and the reliability diagram are drawn from (``metrics.confidence_correct``)."""
    return [
        (
            row["confidence"],
            m.confidence_correct(
                refused=row["refused"], answerable=row["answerable"], citation_f1=row.get("citation_f1")
            ),
        )
        for row in rows
        if row.get("confidence") is not None
    ]
