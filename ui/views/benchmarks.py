"""Benchmarks and their gold cases (read-only pages; cases are written by review and annotation)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from review import selectors as review_selectors
from review.evaluation import split_evidence_key
from ui import selectors
from ui.presenters import document_link
from ui.views.common import paginate, querystring_without_page


@login_required
@require_GET
def benchmark(request, pk: int):
    bench = review_selectors.benchmark_get_for_user(request.user, pk)
    split = request.GET.get("split", "")
    page = paginate(request, review_selectors.benchmark_cases(bench, split=split or None), 50)
    return render(
        request,
        "ui/benchmark.html",
        {"benchmark": bench, "page": page, "split": split, "querystring": querystring_without_page(request)},
    )


@login_required
@require_GET
def gold_case(request, benchmark_pk: int, pk: int):
    bench = review_selectors.benchmark_get_for_user(request.user, benchmark_pk)
    case = review_selectors.gold_case_get(bench, pk)
    keys = [split_evidence_key(key) for key in case.gold_evidence]
    pks = selectors.document_pks(request.user, case.corpus, [d for d, _ in keys] + list(case.gold_documents))
    evidence = [
        {
            "document": doc,
            "label": label,
            "text": case.evidence_texts.get(f"{doc}#{label}", ""),
            "url": document_link(pks.get(doc), [label]),
        }
        for doc, label in keys
    ]
    documents = [{"external_id": d, "url": document_link(pks.get(d), [])} for d in case.gold_documents]
    return render(
        request,
        "ui/gold_case.html",
        {
            "benchmark": bench,
            "case": case,
            "evidence": evidence,
            "documents": documents,
            "revisions": list(case.revisions.all()),
        },
    )
