"""The review queue and the review page: accept, flag, correct, add to a benchmark."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from documents import permissions
from documents.errors import DomainError
from documents.models import Role
from documents.selectors import corpora_for_user, corpus_get_for_user
from review import selectors as review_selectors
from review.errors import ReviewConflict
from review.selectors import annotation as annotation_selectors
from review.services import annotation as annotation_services
from review.services import benchmarks as benchmark_services
from review.services import reviews as review_services
from ui import selectors
from ui.presenters import answer_view, content_view
from ui.review_forms import (
    AcceptForm,
    CorrectionForm,
    FlagForm,
    GoldFromAnswerForm,
    ReviewQueueFilterForm,
    ReviewSplitForm,
    sentence_reference,
)
from ui.views.common import paginate, querystring_without_page, require_role


@login_required
@require_GET
def review_queue(request):
    data = request.GET if request.GET else {"status": "unreviewed"}
    form = ReviewQueueFilterForm(data, user=request.user)
    filters = {}
    if form.is_valid():
        filters = {
            "status": form.cleaned_data["status"] or None,
            "corpus": form.cleaned_data["corpus"].pk if form.cleaned_data["corpus"] else None,
            "preset": form.cleaned_data["preset"] or None,
            "least_confident_first": form.cleaned_data["order"] == "confidence",
            "origin": form.cleaned_data["origin"] or "asked",
            "assigned_to": request.user.pk if form.cleaned_data["mine"] else None,
        }
    answers = review_selectors.review_queue(request.user, **filters).defer(
        "retrieved_documents", "question__trace", "question__config"
    )
    page = paginate(request, answers)
    return _queue_page(request, form=form, page=page)


def _queue_page(request, *, form, page=None, split_form=None):
    splittable = corpora_for_user(request.user).filter(
        team__in=permissions.teams_with_role(request.user, Role.REVIEWER)
    )
    if split_form is None:
        split_form = ReviewSplitForm(corpora=splittable)
    if page is None:
        page = paginate(request, review_selectors.review_queue(request.user, status="unreviewed"))
    return render(
        request,
        "ui/review_queue.html",
        {
            "form": form,
            "page": page,
            "querystring": querystring_without_page(request),
            "split_form": split_form if splittable.exists() else None,
            "progress": annotation_selectors.review_progress_for_user(request.user),
        },
        status=400 if split_form.errors else 200,
    )


def _posted_corpus_readable(request) -> None:
    """A corpus of another team is not disclosed: not found (404), as the API answers, not a form error."""
    key = request.POST.get("corpus", "").strip()
    if key.isdigit():
        corpus_get_for_user(request.user, pk=int(key))


@login_required
@require_POST
def review_queue_split(request):
    """Hand a corpus's unreviewed answers to team members, one reviewer each, least confident first."""
    form = ReviewSplitForm(request.POST, corpora=corpora_for_user(request.user))
    _posted_corpus_readable(request)
    if form.is_valid():
        corpus = form.cleaned_data["corpus"]
        require_role(request.user, corpus.team, "split the review queue")
        try:
            assigned = annotation_services.review_queue_split(
                corpus=corpus,
                reviewers=annotation_services.members_by_username(
                    corpus.team, form.cleaned_data["reviewers"].replace(",", " ").split()
                ),
                user=request.user,
                limit=form.cleaned_data["limit"],
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request, f"Handed {assigned} answer{'' if assigned == 1 else 's'} of {corpus.name} out."
            )
            return redirect(f"{reverse('review-queue')}?status=unreviewed&corpus={corpus.pk}")
    queue = ReviewQueueFilterForm({"status": "unreviewed"}, user=request.user)
    return _queue_page(request, form=queue, split_form=form)


def _editor_rows(content) -> list[dict]:
    return [
        {
            "text": sentence.text,
            "cites": " ".join(
                sentence_reference(c.document_external_id, c.label)
                for c in sentence.citations
                if c.sentence_id
            ),
            "lost": [c for c in sentence.citations if not c.sentence_id],
        }
        for sentence in content.sentences
    ]


def _review_page(request, answer, *, forms=None, status=200):
    page = selectors.review_page(request.user, answer, requested_document=request.GET.get("doc", ""))
    forms = forms or {}
    initial = {"base_version": page.version}
    correction = forms.get("correct") or CorrectionForm(initial={**initial, "refused": page.content.refused})
    editor_rows = correction.rows if correction.is_bound else _editor_rows(page.content)
    corrected = page.content.correction_version is not None
    return render(
        request,
        "ui/review.html",
        {
            "answer": answer,
            "question": page.question,
            "generated": answer_view(page.question.answer),
            "content": content_view(page.content, page.document_pks) if corrected else None,
            "history": [
                {
                    "review": r,
                    "content": content_view(page.corrections[r.pk], page.document_pks)
                    if r.pk in page.corrections
                    else None,
                }
                for r in page.history
            ],
            "version": page.version,
            "latest": page.latest,
            "accept_form": forms.get("accept") or AcceptForm(initial=initial),
            "flag_form": forms.get("flag") or FlagForm(initial=initial),
            "correction_form": correction,
            "editor_rows": editor_rows or [{"text": "", "cites": ""}],
            "gold_form": forms.get("gold") or GoldFromAnswerForm(benchmarks=page.benchmarks),
            "can_add_to_benchmark": page.latest is not None and page.latest.action in ("accept", "correct"),
            "gold_cases": page.gold_cases,
            "panel_document": page.panel_document,
            "panel_sentences": page.panel_sentences,
            "panel_choices": page.panel_choices,
            "cited_sentence_ids": page.cited_sentence_ids,
            "conflict": forms.get("conflict"),
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def review_answer(request, pk: int):
    answer = review_selectors.answer_get_for_user(request.user, pk)
    if request.method == "GET":
        return _review_page(request, answer)

    action = request.POST.get("action", "")
    team = answer.question.corpus.team
    require_role(request.user, team, "edit gold cases" if action == "gold" else "review answers")
    form_class = {"accept": AcceptForm, "flag": FlagForm, "correct": CorrectionForm}.get(action)
    if action == "gold":
        return _add_to_benchmark(request, answer)
    if form_class is None:
        messages.error(request, "Choose accept, flag or correct.")
        return redirect("review-answer", pk=answer.pk)
    if form_class is CorrectionForm:
        corpus = answer.question.corpus
        form = CorrectionForm(
            request.POST,
            resolve=lambda pairs: selectors.sentence_ids_by_reference(request.user, corpus, pairs),
        )
    else:
        form = form_class(request.POST)
    if not form.is_valid():
        return _review_page(request, answer, forms={action: form}, status=400)
    data = form.cleaned_data
    try:
        if action == "accept":
            review_services.answer_accept(
                answer=answer,
                reviewer=request.user,
                base_version=data["base_version"],
                comment=data["comment"],
            )
        elif action == "flag":
            review_services.answer_flag(
                answer=answer,
                reviewer=request.user,
                base_version=data["base_version"],
                reason=data["reason"],
                comment=data["comment"],
            )
        else:
            review_services.answer_correct(
                answer=answer,
                reviewer=request.user,
                base_version=data["base_version"],
                sentences=[review_services.CorrectionSentence(text, ids) for text, ids in data["sentences"]],
                reason=data["reason"],
                comment=data["comment"],
                refused=data["refused"],
            )
    except ReviewConflict as conflict:
        # Keep what the reviewer typed, on the version they have now seen.
        fresh = request.POST.copy()
        fresh["base_version"] = str(conflict.current_version)
        return _review_page(
            request, answer, forms={action: form_class(fresh), "conflict": conflict}, status=409
        )
    except DomainError as exc:
        form.add_error(None, str(exc))
        return _review_page(request, answer, forms={action: form}, status=400)
    messages.success(
        request, {"accept": "Accepted.", "flag": "Flagged.", "correct": "Correction saved."}[action]
    )
    return redirect(reverse("review-answer", args=[answer.pk]) + "#history")


def _add_to_benchmark(request, answer):
    corpus = answer.question.corpus
    benchmarks = review_selectors.benchmarks_for_user(request.user).filter(corpus=corpus)
    form = GoldFromAnswerForm(request.POST, benchmarks=benchmarks)
    if not form.is_valid():
        return _review_page(request, answer, forms={"gold": form}, status=400)
    data = form.cleaned_data
    try:
        case = benchmark_services.gold_case_add(
            benchmark_name=data["new_benchmark"] or data["benchmark"],
            new=bool(data["new_benchmark"]),
            corpus=corpus,
            split=data["split"],
            user=request.user,
            answer=answer,
        )
    except DomainError as exc:
        form.add_error(None, str(exc))
        return _review_page(request, answer, forms={"gold": form}, status=400)
    messages.success(request, f"Added to benchmark {case.benchmark.name} as {case.split}/{case.case_id}.")
    return redirect(reverse("review-answer", args=[answer.pk]) + "#benchmark")
