"""Several evaluation runs side by side: a grid of their metrics, and each case's answers with the
gold evidence marked. Three queries for the data, whatever the number of cases
(review.selectors.comparison)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from review.evaluation.compare import case_spreads, compare_cases, metric_grid, order_cases
from review.selectors.comparison import MAX_COMPARED_RUNS, comparison_page, comparison_runs, comparison_scores
from ui.evaluation import METRIC_LABELS
from ui.views.common import querystring_without_page

CASES_PER_PAGE = 25
ORDERS = {"disagree": "Most disagreement first", "case": "Case id"}


def _run_ids(request) -> list[int]:
    """``?runs=3&runs=5`` (the evaluation list's checkboxes) or ``?runs=3,5``."""
    ids = []
    for value in request.GET.getlist("runs"):
        ids += [int(part) for part in value.split(",") if part.strip().isdigit()]
    return ids


@login_required
@require_GET
def compare_runs(request):
    runs = comparison_runs(request.user, _run_ids(request))
    order = request.GET.get("order", "disagree")
    order = order if order in ORDERS else "disagree"
    differ_only = request.GET.get("show") == "differ"
    context = {
        "runs": runs,
        "max_runs": MAX_COMPARED_RUNS,
        "orders": ORDERS,
        "order": order,
        "differ_only": differ_only,
    }
    if len(runs) >= 2:
        case_ids = order_cases(
            case_spreads(comparison_scores(runs)),
            disagreement_first=order == "disagree",
            differ_only=differ_only,
        )
        page = Paginator(case_ids, CASES_PER_PAGE).get_page(request.GET.get("page"))
        cases, results = comparison_page(runs, list(page.object_list))
        context.update(
            grid=[
                {"label": METRIC_LABELS.get(row.metric, row.metric), "row": row, "cells": _cells(row)}
                for row in metric_grid([run.metrics or {} for run in runs])
            ],
            page=page,
            cases=[
                {
                    "case": item.case,
                    "spread": item.spread,
                    "columns": list(zip(runs, item.answers, strict=True)),
                }
                for item in compare_cases(cases, results)
            ],
            case_count=len(case_ids),
            benchmarks=sorted({run.benchmark.name for run in runs}),
            querystring=querystring_without_page(request),
        )
    return render(request, "ui/evaluation_compare.html", context)


def _cells(row) -> list[dict]:
    return [{"value": value, "best": index in row.best} for index, value in enumerate(row.values)]
