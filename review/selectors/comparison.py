"""Reads for comparing evaluation runs side by side, in a fixed number of queries.

Ordering every case by how much the runs disagree needs only a few per-case
numbers, read out of the stored JSON by the database; the answers, citations
and gold cases are then read for the one page of cases shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from review.evaluation.compare import QUALITY_KEYS, GoldCaseView
from review.models import EvaluationCaseResult, EvaluationRun, GoldCase
from review.selectors.benchmarks import evaluation_case_id, runs_for_user

MAX_COMPARED_RUNS = 8


def comparison_runs(user, run_ids: Sequence[int]) -> list[EvaluationRun]:
    """The user's runs among ``run_ids`` (at most MAX_COMPARED_RUNS), in the order given."""
    wanted = list(dict.fromkeys(run_ids))[:MAX_COMPARED_RUNS]
    by_pk = {run.pk: run for run in runs_for_user(user).filter(pk__in=wanted)}
    return [by_pk[pk] for pk in wanted if pk in by_pk]


def _results(runs: Sequence[EvaluationRun]):
    return EvaluationCaseResult.objects.filter(run__in=[run.pk for run in runs])


def comparison_scores(runs: Sequence[EvaluationRun]) -> list[dict[str, dict]]:
    """Per run: case id ("split/case_id") -> the per-case numbers case quality reads. One query."""
    position = {run.pk: index for index, run in enumerate(runs)}
    scores: list[dict[str, dict]] = [{} for _ in runs]
    fields = [f"metrics__{key}" for key in QUALITY_KEYS]
    rows = _results(runs).values_list("run_id", "gold_case__split", "gold_case__case_id", *fields)
    for run_id, split, case_id, *values in rows:
        scores[position[run_id]][f"{split}/{case_id}"] = dict(zip(QUALITY_KEYS, values, strict=True))
    return scores


def comparison_page(
    runs: Sequence[EvaluationRun], case_ids: Sequence[str]
) -> tuple[list[GoldCaseView], list[dict[str, dict]]]:
    """The gold cases ``case_ids`` (in that order) and each run's stored result for them. Two queries."""
    wanted = {tuple(case_id.split("/", 1)) for case_id in case_ids}
    splits = {split for split, _ in wanted}
    names = {name for _, name in wanted}
    position = {run.pk: index for index, run in enumerate(runs)}
    results: list[dict[str, dict]] = [{} for _ in runs]
    rows = _results(runs).filter(gold_case__split__in=splits, gold_case__case_id__in=names)
    for run_id, split, case_id, prediction, metrics, error in rows.values_list(
        "run_id", "gold_case__split", "gold_case__case_id", "prediction", "metrics", "error"
    ):
        if (split, case_id) in wanted:
            results[position[run_id]][f"{split}/{case_id}"] = {
                "prediction": prediction,
                "metrics": metrics,
                "error": error,
            }
    cases = GoldCase.objects.filter(
        benchmark__in={run.benchmark_id for run in runs}, split__in=splits, case_id__in=names
    ).only(
        "split", "case_id", "question", "reference_answer", "answerable", "gold_evidence", "evidence_texts"
    )
    views: dict[str, GoldCaseView] = {}
    for case in cases:
        key = evaluation_case_id(case)
        if key in case_ids:
            views.setdefault(
                key,
                GoldCaseView(
                    case_id=key,
                    question=case.question,
                    reference_answer=case.reference_answer,
                    answerable=case.answerable,
                    gold_evidence=tuple(case.gold_evidence or ()),
                    evidence_texts=case.evidence_texts or {},
                ),
            )
    return [views[case_id] for case_id in case_ids if case_id in views], results
