"""My questions and answers, newest first, searchable."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from qa.selectors import question_history
from ui.forms import HistorySearchForm
from ui.views.common import LIST_DEFERRED, paginate, querystring_without_page


@login_required
@require_GET
def history(request):
    form = HistorySearchForm(request.GET or None, user=request.user)
    search, corpus, origin = "", None, "asked"
    if form.is_bound and form.is_valid():
        search = form.cleaned_data["q"].strip()
        corpus = form.cleaned_data["corpus"]
        origin = form.cleaned_data["origin"] or "asked"
    # A list needs none of the per-question job JSON (traces run to tens of kB each).
    questions = question_history(request.user, search=search, corpus=corpus, origin=origin).defer(
        *LIST_DEFERRED
    )
    page = paginate(request, questions)
    return render(
        request,
        "ui/history.html",
        {"form": form, "page": page, "search": search, "querystring": querystring_without_page(request)},
    )
