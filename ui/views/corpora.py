"""Corpora and their documents: list, create, upload (through the REST API), delete."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import ProtectedError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from documents import permissions, reembedding, services
from documents.errors import DomainError
from documents.models import Document, Role
from documents.parsing import SUPPORTED_EXTENSIONS
from documents.selectors import (
    corpora_with_counts,
    corpus_embedding_jobs,
    corpus_get_for_user,
    corpus_progress,
    document_get_for_user,
    documents_in_progress_for_user,
)
from ui import selectors
from ui.forms import CorpusCreateForm
from ui.views.common import paginate, querystring_without_page, require_role


@login_required
@require_http_methods(["GET", "POST"])
def corpora(request):
    # A corpus is created for a team the user administers.
    teams = permissions.teams_with_role(request.user, Role.ADMIN).order_by("name")
    form = None
    if teams.exists():
        form = CorpusCreateForm(request.POST or None, teams=teams)
        if request.method == "POST" and form.is_valid():
            try:
                corpus = services.corpus_create(
                    name=form.cleaned_data["name"],
                    team=form.cleaned_data["team"],
                    description=form.cleaned_data["description"],
                    actor=request.user,
                )
            except DomainError as exc:
                form.add_error("name", str(exc))
            else:
                messages.success(request, f"Corpus {corpus.name} created. Upload its files below.")
                return redirect("corpus", pk=corpus.pk)
    elif request.method == "POST":
        raise PermissionDenied("Only a team's admins can create its corpora.")
    context = {
        "corpora": corpora_with_counts(request.user),
        "corpora_pending": documents_in_progress_for_user(request.user),
        "form": form,
    }
    return render(request, "ui/corpora.html", context)


@login_required
@require_GET
def corpus(request, pk: int):
    corpus = corpus_get_for_user(request.user, pk=pk)
    search = request.GET.get("q", "").strip()[:200]
    status = request.GET.get("status", "")
    status = status if status in Document.Status.values else ""
    page = paginate(
        request, selectors.corpus_documents(request.user, corpus, search=search, status=status), 50
    )
    return render(
        request,
        "ui/corpus.html",
        {
            "corpus": corpus,
            "page": page,
            "search": search,
            "status": status,
            "statuses": Document.Status.values,
            "progress": corpus_progress(corpus),
            "accept": ",".join(SUPPORTED_EXTENSIONS),
            "querystring": querystring_without_page(request),
            "embedding_model": reembedding.corpus_model(corpus),
            "embedding_job": next(iter(corpus_embedding_jobs(corpus, limit=1)), None),
            "can_change": permissions.can_change_corpus(request.user, corpus),
        },
    )


@login_required
@require_POST
def corpus_reembed(request, pk: int):
    """Queue a re-embedding; the corpus page follows its progress."""
    corpus = corpus_get_for_user(request.user, pk=pk)
    require_role(request.user, corpus.team, "change corpora")
    try:
        job = reembedding.reembedding_start(
            corpus=corpus, model=request.POST.get("model", ""), requested_by=request.user
        )
    except DomainError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Re-embedding {corpus.name} with {job.model} ({job.dimension} dimensions). Questions use "
            "the current model until it is done.",
        )
    return redirect("corpus", pk=corpus.pk)


@login_required
@require_http_methods(["GET", "POST"])
def document_delete(request, pk: int):
    document = document_get_for_user(request.user, pk)
    require_role(request.user, document.corpus.team, "change corpora")
    if request.method == "POST":
        services.document_delete(document=document, actor=request.user)
        messages.success(request, f"Deleted {document.external_id}.")
        return redirect("corpus", pk=document.corpus_id)
    return render(
        request,
        "ui/confirm_delete.html",
        {
            "object_kind": "document",
            "object": document,
            "name": document.external_id,
            "cancel": document.corpus_id,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def corpus_delete(request, pk: int):
    corpus = corpus_get_for_user(request.user, pk=pk)
    require_role(request.user, corpus.team, "change corpora")
    if request.method == "POST":
        try:
            services.corpus_delete(corpus=corpus, actor=request.user)
        except ProtectedError:
            messages.error(request, f"{corpus.name} is used by a benchmark; delete the benchmark first.")
            return redirect("corpus", pk=corpus.pk)
        messages.success(request, f"Deleted corpus {corpus.name} and its documents.")
        return redirect("corpora")
    return render(
        request,
        "ui/confirm_delete.html",
        {
            "object_kind": "corpus",
            "object": corpus,
            "name": corpus.name,
            "cancel": corpus.pk,
            "document_count": corpus.documents.count(),
        },
    )
