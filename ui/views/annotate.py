"""Annotation: write a benchmark question on a document and select its evidence sentences."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from documents.errors import DomainError
from documents.models import Document
from documents.selectors import (
    corpora_for_user,
    document_get_for_user,
    document_sentences,
    documents_for_user,
)
from review import selectors as review_selectors
from review.services import benchmarks as benchmark_services
from ui.review_forms import AnnotateForm
from ui.views.common import require_role

DOCUMENT_CHOICES = 30


@login_required
@require_http_methods(["GET", "POST"])
def annotate(request):
    document_id = request.GET.get("document", "")
    if not document_id.isdigit():
        return _choose_document(request)
    document = document_get_for_user(request.user, int(document_id))
    sentences = list(document_sentences(document))
    benchmarks = review_selectors.benchmarks_for_user(request.user).filter(corpus_id=document.corpus_id)
    initial = {"split": request.GET.get("split", "dev"), "benchmark": request.GET.get("benchmark", "")}
    form = AnnotateForm(request.POST or None, initial=initial, sentences=sentences, benchmarks=benchmarks)
    if request.method == "POST":
        require_role(request.user, document.corpus.team, "edit gold cases")
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        annotation = benchmark_services.Annotation(
            document=document,
            question=data["question"],
            evidence_sentence_ids=tuple(data["evidence"]) if not data["unanswerable"] else (),
            reference_answer=data["reference_answer"],
            answerable=not data["unanswerable"],
        )
        try:
            case = benchmark_services.gold_case_add(
                benchmark_name=data["new_benchmark"] or data["benchmark"],
                new=bool(data["new_benchmark"]),
                corpus=document.corpus,
                split=data["split"],
                user=request.user,
                annotation=annotation,
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            name = case.benchmark.name
            messages.success(request, f"Added {case.split}/{case.case_id} to {name}. Write the next one.")
            query = f"?document={document.pk}&benchmark={name}&split={case.split}"
            return redirect(reverse("annotate") + query)
    selected = {int(v) for v in form["evidence"].value() or [] if str(v).isdigit()}
    return render(
        request,
        "ui/annotate.html",
        {"document": document, "sentences": sentences, "form": form, "selected": selected},
        status=400 if form.is_bound and form.errors else 200,
    )


def _choose_document(request):
    corpora = corpora_for_user(request.user)
    corpus_id = request.GET.get("corpus", "")
    search = request.GET.get("q", "").strip()[:200]
    corpus = corpora.filter(pk=int(corpus_id)).first() if corpus_id.isdigit() else corpora.first()
    documents = []
    if corpus is not None:
        qs = documents_for_user(request.user).filter(corpus=corpus, status=Document.Status.READY)
        if search:
            qs = qs.filter(title__icontains=search) | qs.filter(external_id__icontains=search)
        documents = list(
            qs.only("pk", "external_id", "title", "corpus_id").order_by("external_id")[:DOCUMENT_CHOICES]
        )
    return render(
        request,
        "ui/annotate_choose.html",
        {
            "corpora": corpora,
            "corpus": corpus,
            "search": search,
            "documents": documents,
            "limit": DOCUMENT_CHOICES,
        },
    )
