"""The intrinsics page of a corpus: cite a pasted text, judge a question's answerability and its
passages' relevance, check an answer. Reads only; the same functions as the REST endpoints."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from documents.errors import DomainError
from documents.selectors import corpus_get_for_user
from qa import intrinsics
from ui import selectors
from ui.forms import CiteTextForm, QuestionCheckForm
from ui.presenters import document_link


def _with_links(corpus, support: dict) -> dict:
    """Each citation gains the document viewer's URL, its sentence highlighted."""
    cited = [c for s in support["sentences"] for c in s["citations"]]
    documents = selectors.sentence_document_pks(corpus, [c["id"] for c in cited])
    for citation in cited:
        citation["url"] = document_link(
            documents.get(citation["id"]), [citation["label"]], citation["ordinal"]
        )
    return support


@login_required
@require_http_methods(["GET", "POST"])
def corpus_intrinsics(request, pk: int):
    corpus = corpus_get_for_user(request.user, pk=pk)
    tool = request.POST.get("tool") if request.method == "POST" else None
    cite_form = CiteTextForm(request.POST if tool == "cite" else None)
    check_form = QuestionCheckForm(request.POST if tool == "check" else None, user=request.user)
    cited = report = None
    status = 200
    try:
        if tool == "cite" and cite_form.is_valid():
            cited = _with_links(
                corpus, intrinsics.cite_data(corpus=corpus, text=cite_form.cleaned_data["text"])
            )
        elif tool == "check" and check_form.is_valid():
            data = check_form.cleaned_data
            report = intrinsics.question_report(
                corpus=corpus, question=data["question"], preset=data["preset"], answer=data["answer"]
            )
            if report["support"]:
                _with_links(corpus, report["support"])
        elif tool in ("cite", "check"):
            status = 400
    except DomainError as exc:
        (cite_form if tool == "cite" else check_form).add_error(None, str(exc))
        status = 400
    return render(
        request,
        "ui/intrinsics.html",
        {
            "corpus": corpus,
            "cite_form": cite_form,
            "check_form": check_form,
            "cited": cited,
            "report": report,
        },
        status=status,
    )
