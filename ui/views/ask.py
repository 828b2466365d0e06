"""Ask a question, watch its job, read the answer and its trace."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from documents.errors import DomainError
from documents.selectors import documents_for_user
from qa.pipeline.config.parameters import described
from qa.scopes import corpus_sources, scope_for
from qa.selectors import question_get_for_user, question_history, question_run, team_presets_for_user
from qa.services import question_ask
from ui import selectors
from ui.forms import AskForm, default_preset
from ui.presenters import (
    attach_sentence_refs,
    cited_sentence_ids,
    passage_url,
    preset_groups_view,
    trace_view,
    turn_view,
)
from ui.views.common import LIST_DEFERRED

RECENT_QUESTIONS = 8


def _ask_page(request, form, *, turns=(), conversation=None, status=200):
    return render(
        request,
        "ui/ask.html",
        {
            "form": form,
            "turns": [turn_view(q) for q in turns],
            "conversation": conversation,
            "has_corpora": form.fields["corpus"].queryset.exists(),
            "recent": question_history(request.user).defer(*LIST_DEFERRED)[:RECENT_QUESTIONS],
            "preset_groups": preset_groups_view(),
            "team_presets": [
                {"preset": saved, "set": described(saved.parameters)}
                for saved in team_presets_for_user(request.user)
            ],
            "any_pending": any(q.status in ("queued", "running") for q in turns),
            "sources": sorted({s for c in form.fields["corpus"].queryset for s in corpus_sources(c)}),
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def ask(request):
    if request.method == "GET":
        initial = {"preset": default_preset()}
        corpus_id = request.GET.get("corpus", "")
        if corpus_id.isdigit():
            initial["corpus"] = corpus_id
        form = AskForm(user=request.user, initial=initial)
        if request.GET.get("preset") in form.preset_names():  # "Ask with it" on the presets page
            form.initial["preset"] = request.GET["preset"]
        return _ask_page(request, form)

    form = AskForm(request.POST, user=request.user)
    conversation = None
    conversation_id = request.POST.get("conversation", "")
    if conversation_id.isdigit():
        conversation = selectors.conversation_get_for_user(request.user, int(conversation_id))
        if conversation is None:
            form.add_error(
                None, "That conversation is not yours, or its corpus is no longer shared with you."
            )
    if form.is_valid():
        try:
            scope = scope_for(
                corpus=form.cleaned_data["corpus"],
                published_from=form.cleaned_data["published_from"],
                published_to=form.cleaned_data["published_to"],
                sources=form.cleaned_data["sources"],
            )
            question = question_ask(
                user=request.user,
                corpus=form.cleaned_data["corpus"],
                text=form.cleaned_data["question"],
                preset=form.cleaned_data["preset"],
                conversation=conversation,
                parameters=form.cleaned_data["parameters"],
                scope=scope,
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect(reverse("question", args=[question.pk]) + f"#q-{question.pk}")
    turns = []
    if conversation is not None and conversation.questions.exists():
        turns = selectors.conversation_turns(
            request.user, conversation.questions.order_by("-created_at").first()
        )
    return _ask_page(request, form, turns=turns, conversation=conversation)


@login_required
@require_GET
def question(request, pk: int):
    """The conversation a question belongs to, with a form for a follow-up."""
    current = question_get_for_user(request.user, pk)
    turns = selectors.conversation_turns(request.user, current)
    own = current.user_id == request.user.pk and current.conversation_id is not None
    latest = turns[-1]
    form = AskForm(
        user=request.user,
        initial={
            "corpus": current.corpus_id,
            "preset": latest.preset,
            "conversation": current.conversation_id if own else None,
        },
    )
    if latest.preset not in form.preset_names():  # a team preset deleted since
        form.initial["preset"] = default_preset()
    return _ask_page(request, form, turns=turns, conversation=current.conversation if own else None)


@login_required
@require_GET
def question_turn(request, pk: int):
    """One turn as an HTML fragment: the ask page swaps it in when its job finishes."""
    question = question_get_for_user(request.user, pk)
    return render(request, "ui/_turn.html", {"turn": turn_view(question)})


@login_required
@require_GET
def question_trace(request, pk: int):
    question = question_get_for_user(request.user, pk)
    trace = trace_view(question_run(question))
    external_ids = {row["document"] for row in trace["candidates"] + trace["reranked"] if row["document"]}
    external_ids |= {hit.document for r in trace["retrievers"] for hit in r.hits}
    document_pks = dict(
        documents_for_user(request.user)
        .filter(corpus_id=question.corpus_id, external_id__in=external_ids)
        .values_list("external_id", "pk")
    )
    keys = {p["key"] for attempt in trace["attempts"] for p in attempt["passages"]}
    spans = selectors.passage_spans(request.user, question.corpus, keys)
    for attempt in trace["attempts"]:
        for passage in attempt["passages"]:
            passage["url"] = passage_url(passage["key"], spans, document_pks)
    attach_sentence_refs(
        trace, selectors.sentence_refs(request.user, question.corpus, cited_sentence_ids(trace))
    )
    wall = None
    if question.finished_at and question.created_at:
        wall = (question.finished_at - question.created_at).total_seconds()
    return render(
        request,
        "ui/trace.html",
        {
            "question": question,
            "trace": trace,
            "turn": turn_view(question),
            "document_pks": document_pks,
            "config_json": json.dumps(question.config, indent=2, sort_keys=True),
            "wall_seconds": wall,
        },
    )
