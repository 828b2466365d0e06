"""Evaluation runs: start one, watch its progress, read its metrics beside the report's."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from documents.errors import DomainError
from review import selectors as review_selectors
from review.evaluation import glossary
from review.models import EvaluationRun
from review.services.evaluation import evaluation_run_create, run_metrics_on_annotated_gold
from ui import evaluation
from ui.forms import EvaluationRunForm
from ui.views.common import paginate, require_role

CHART_RUNS = 200


@login_required
@require_http_methods(["GET", "POST"])
def evaluate(request):
    benchmarks = review_selectors.benchmarks_for_user(request.user)
    form = EvaluationRunForm(request.POST or None, benchmarks=benchmarks, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        require_role(request.user, data["benchmark"].corpus.team, "run evaluations")
        try:
            run = evaluation_run_create(
                benchmark=data["benchmark"],
                preset=data["preset"],
                user=request.user,
                split=data["split"],
                limit=data["limit"],
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("evaluation-run", pk=run.pk)
    runs = review_selectors.runs_for_user(request.user).order_by("-created_at")
    page = paginate(request, runs, 20)

    # Charts over the finished runs of one benchmark and split (the latest run's, unless chosen).
    done = runs.filter(status=EvaluationRun.Status.DONE)
    chart_benchmark = request.GET.get("chart_benchmark", "")
    chart_split = request.GET.get("chart_split")
    metric = request.GET.get("metric", "citation_f1")
    metric = metric if metric in evaluation.LINE_METRICS else "citation_f1"
    latest = done.first()
    if not chart_benchmark.isdigit() and latest is not None:
        chart_benchmark = str(latest.benchmark_id)
    if chart_split is None:
        chart_split = latest.split if latest is not None else ""
    chart_runs = []
    if chart_benchmark.isdigit():
        chart_runs = list(done.filter(benchmark_id=int(chart_benchmark), split=chart_split)[:CHART_RUNS])
    return render(
        request,
        "ui/evaluate.html",
        {
            "form": form,
            "page": page,
            "benchmarks": benchmarks,
            "chart_benchmark": chart_benchmark,
            "chart_split": chart_split,
            "metric": metric,
            "line_metrics": [(k, evaluation.METRIC_LABELS[k]) for k in evaluation.LINE_METRICS],
            "presets_chart": evaluation.presets_chart(chart_runs),
            "runs_chart": evaluation.runs_chart(chart_runs, metric),
            "bar_legend": evaluation.legend([evaluation.METRIC_LABELS[k] for k in evaluation.CHART_METRICS]),
            "line_legend": evaluation.legend(evaluation.chart_presets(chart_runs)),
            "chart_run_count": len(chart_runs),
        },
    )


@login_required
@require_GET
def evaluation_run(request, pk: int):
    run = review_selectors.run_get_for_user(request.user, pk)
    results = list(review_selectors.run_case_results(run)) if run.status == EvaluationRun.Status.DONE else []
    type_headers, type_rows = evaluation.question_type_rows([result.metrics for result in results])
    metrics = run.metrics or {}
    # ?gold=annotated: scored again on the cases whose gold annotators agreed on or a reviewer adjudicated.
    annotated_only = request.GET.get("gold") == "annotated" and run.status == EvaluationRun.Status.DONE
    annotated_cases = None
    if annotated_only:
        metrics, annotated_cases = run_metrics_on_annotated_gold(run)
    metric_rows = evaluation.metric_rows(metrics, run.preset)
    return render(
        request,
        "ui/evaluation_run.html",
        {
            "run": run,
            "percent": _percent(run),
            "metric_rows": metric_rows,
            "other_metric_count": sum(not row["headline"] for row in metric_rows),
            "report_citation": glossary.REPORT_CITATION,
            "ece_meaning": glossary.meaning_of("confidence_ece"),
            "risk_coverage_meaning": glossary.meaning_of("risk_coverage"),
            "latencies": evaluation.latency_rows(run.metrics or {}),
            "type_headers": type_headers,
            "latency_histograms": evaluation.latency_histograms([result.metrics for result in results]),
            "calibration": evaluation.calibration([result.metrics for result in results]),
            "selective": evaluation.selective_answering(
                [result.metrics for result in results], run.preset_config or {}
            ),
            "type_rows": type_rows,
            "gold_agreement": evaluation.gold_agreement(results),
            "annotated_only": annotated_only,
            "annotated_cases": annotated_cases,
            "configuration": evaluation.configuration_label(run.preset),
            "cases": evaluation.case_rows(results, run.preset_config or {}),
            "pending": run.status in (EvaluationRun.Status.QUEUED, EvaluationRun.Status.RUNNING),
        },
    )


@login_required
@require_GET
def evaluation_run_progress(request, pk: int):
    """What the run page polls: status and progress as JSON."""
    run = review_selectors.run_get_for_user(request.user, pk)
    return JsonResponse(
        {
            "id": run.pk,
            "status": run.status,
            "done": run.progress_done,
            "total": run.progress_total,
            "percent": _percent(run),
            "error": run.error,
        }
    )


def _percent(run) -> int:
    if run.status == EvaluationRun.Status.DONE:
        return 100
    return int(100 * run.progress_done / run.progress_total) if run.progress_total else 0


@login_required
@require_GET
def metric_glossary(request):
    """Every evaluation metric in plain words, and which report the runs are compared with."""
    return render(
        request,
        "ui/metric_glossary.html",
        {
            "sections": glossary.SECTIONS,
            "headline": [glossary.TERMS[key] for key in glossary.HEADLINE_KEYS],
            "report_citation": glossary.REPORT_CITATION,
        },
    )
