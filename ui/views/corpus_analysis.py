"""The corpus analysis page: passage lengths and a map of sentence embeddings."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from documents.selectors import corpus_get_for_user
from ui import corpus_analysis


@login_required
@require_GET
def corpus_analysis_page(request, pk: int):
    corpus = corpus_get_for_user(request.user, pk=pk)
    return render(
        request,
        "ui/corpus_analysis.html",
        {
            "corpus": corpus,
            "lengths": corpus_analysis.length_charts(corpus),
            "map": corpus_analysis.embedding_map(corpus),
        },
    )
