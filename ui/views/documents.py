"""The document viewer: every sentence with its label, some of them highlighted."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from documents.selectors import document_get_for_user, document_sentences
from ui.presenters import parse_highlight


@login_required
@require_GET
def document(request, pk: int):
    """``?highlight=S2,S5`` marks sentences by label; ``?span=3-10`` marks ordinals 3..10 (a chunk)."""
    doc = document_get_for_user(request.user, pk)
    sentences = list(document_sentences(doc))
    highlight = parse_highlight(request.GET.get("highlight", ""), request.GET.get("span", ""), sentences)
    return render(
        request,
        "ui/document.html",
        {
            "document": doc,
            "sentences": sentences,
            "highlighted": highlight.ordinals,
            "missing_labels": highlight.missing,
            "first_highlight": highlight.first,
            "from_question": int(request.GET["from"]) if request.GET.get("from", "").isdigit() else None,
        },
    )


@login_required
@require_GET
def document_pick(request, pk: int):
    """The review page's viewer panel for another document, as an HTML fragment."""
    doc = document_get_for_user(request.user, pk)
    return render(
        request,
        "ui/_pick_sentences.html",
        {
            "panel_document": doc,
            "panel_sentences": list(document_sentences(doc)),
            "cited_sentence_ids": set(),
        },
    )
