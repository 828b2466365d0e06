"""Reads of benchmarks, gold cases and evaluation runs, scoped to the user's teams."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet
from django.http import Http404

from documents.selectors import corpora_for_user
from review.evaluation import GoldCase as GoldValue
from review.evaluation.classes import ClassCase
from review.models import Benchmark, EvaluationCaseResult, EvaluationRun, GoldCase


def benchmarks_for_user(user) -> QuerySet[Benchmark]:
    return (
        Benchmark.objects.filter(corpus__in=corpora_for_user(user))
        .select_related("corpus")
        .annotate(
            case_count=Count("cases", distinct=True),
            train_count=Count("cases", filter=Q(cases__split="train"), distinct=True),
            dev_count=Count("cases", filter=Q(cases__split="dev"), distinct=True),
            test_count=Count("cases", filter=Q(cases__split="test"), distinct=True),
        )
        .order_by("name")
    )


def benchmark_get_for_user(user, key) -> Benchmark:
    """A benchmark by name, or by id when ``key`` is all digits and no name matches; else Http404."""
    qs = benchmarks_for_user(user)
    benchmark = qs.filter(name=str(key)).first()
    if benchmark is None and str(key).isdigit():
        benchmark = qs.filter(pk=int(key)).first()
    if benchmark is None:
        raise Http404("No such benchmark.")
    return benchmark


def benchmark_cases(benchmark: Benchmark, *, split: str | None = None) -> QuerySet[GoldCase]:
    qs = GoldCase.objects.filter(benchmark=benchmark).select_related("corpus")
    if split:
        qs = qs.filter(split=split)
    return qs.order_by("split", "case_id")


def gold_case_get(benchmark: Benchmark, pk) -> GoldCase:
    case = benchmark_cases(benchmark).prefetch_related("revisions__changed_by").filter(pk=pk).first()
    if case is None:
        raise Http404("No such gold case.")
    return case


def evaluation_case_id(case: GoldCase) -> str:
    """The case's id inside one evaluation: split-qualified, since q001 exists in every split."""
    return f"{case.split}/{case.case_id}"


def class_cases(cases) -> list[ClassCase]:
    """The cases' answerability classes (MTRAG-UN's), or [] when any case has none."""
    kinds = [(case.metadata or {}).get("answerability") for case in cases]
    if not cases or not all(kinds):
        return []
    return [
        ClassCase(evaluation_case_id(case), kind, tuple(case.gold_evidence))
        for case, kind in zip(cases, kinds, strict=True)
    ]


def gold_value(case: GoldCase) -> GoldValue:
    """The gold case as review.evaluation's value."""
    return GoldValue(
        case_id=evaluation_case_id(case),
        question=case.question,
        gold_documents=tuple(case.gold_documents),
        gold_evidence=tuple(case.gold_evidence),
        reference_answer=case.reference_answer,
        answerable=case.answerable,
        rubric=case.rubric,
    )


def gold_case_record(case: GoldCase) -> dict:
    """A case as one line of the JSONL export (what ``import_benchmark --format jsonl`` reads)."""
    return {
        "case_id": case.case_id,
        "split": case.split,
        "question": case.question,
        "gold_documents": list(case.gold_documents),
        "gold_evidence": [
            {"key": key, "text": case.evidence_texts.get(key, "")} for key in case.gold_evidence
        ],
        "reference_answer": case.reference_answer,
        "answerable": case.answerable,
        "rubric": case.rubric,
        "provenance": case.provenance,
        "revision": case.revision,
        "source_answer": case.source_answer_id,
        "metadata": case.metadata,
    }


def runs_for_user(user) -> QuerySet[EvaluationRun]:
    return (
        EvaluationRun.objects.filter(benchmark__corpus__in=corpora_for_user(user))
        .select_related("benchmark", "created_by")
        .order_by("-created_at", "-pk")
    )


def run_get_for_user(user, pk) -> EvaluationRun:
    run = runs_for_user(user).filter(pk=pk).first()
    if run is None:
        raise Http404("No such evaluation run.")
    return run


def run_cases(run: EvaluationRun) -> list[GoldCase]:
    """The gold cases a run answers, in a stable order, cut to its limit."""
    cases = benchmark_cases(run.benchmark, split=run.split or None)
    if run.case_limit:
        cases = cases[: run.case_limit]
    return list(cases)


def run_case_results(run: EvaluationRun) -> QuerySet[EvaluationCaseResult]:
    return (
        EvaluationCaseResult.objects.filter(run=run)
        .select_related("gold_case")
        .order_by("gold_case__split", "gold_case__case_id")
    )
