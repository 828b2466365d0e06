"""The review queue and the review page: accept, flag, correct, add to a benchmark."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from documents.selectors import document_sentences, documents_for_user
from groundedqa_site.api import ClientError
from qa.selectors import question_get_for_user
from review import selectors as review_selectors
from review.services import benchmarks as benchmark_services
from review.services import gold as gold_services
from review.services import reviews as review_services
from ui import selectors
from ui.forms import AcceptForm, CorrectionForm, FlagForm, GoldFromAnswerForm, ReviewQueueFilterForm
from ui.presenters import answer_view, content_view
from ui.views.common import paginate, querystring_without_page


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
        }
    answers = review_selectors.review_queue(request.user, **filters).defer(
        "retrieved_documents", "question__trace", "question__config"
    )
    page = paginate(request, answers)
    return render(
        request,
        "ui/review_queue.html",
        {"form": form, "page": page, "querystring": querystring_without_page(request)},
    )


def _editor_rows(content) -> list[dict]:
    return [
        {
            "text": sentence.text,
            "cites": " ".join(str(c.sentence_id) for c in sentence.citations if c.sentence_id),
            "lost": [c for c in sentence.citations if not c.sentence_id],
        }
        for sentence in content.sentences
    ]


def _review_page(request, answer, *, forms=None, status=200):
    question = question_get_for_user(request.user, answer.question_id)
    corpus = question.corpus
    history = list(review_selectors.review_history(answer))
    version = len(history)
    content = review_selectors.answer_current_content(answer)
    cited_ids = [c.document_external_id for s in content.sentences for c in s.citations]
    retrieved = list(answer.retrieved_documents or [])[:10]
    pks = selectors.document_pks(request.user, corpus, cited_ids + retrieved)
    # The viewer panel: the document asked for, else the first cited, else the top retrieved one.
    panel_choices = [(eid, pks[eid]) for eid in dict.fromkeys(cited_ids + retrieved) if eid in pks]
    panel_document = None
    requested = request.GET.get("doc", "")
    if requested.isdigit():
        panel_document = documents_for_user(request.user).filter(pk=int(requested), corpus=corpus).first()
    if panel_document is None and panel_choices:
        panel_document = documents_for_user(request.user).filter(pk=panel_choices[0][1]).first()
    panel_sentences = list(document_sentences(panel_document)) if panel_document else []
    cited_sentence_ids = {c.sentence_id for s in content.sentences for c in s.citations if c.sentence_id}

    forms = forms or {}
    initial = {"base_version": version}
    correction = forms.get("correct") or CorrectionForm(initial={**initial, "refused": content.refused})
    editor_rows = correction.rows if correction.is_bound else _editor_rows(content)
    benchmarks = review_selectors.benchmarks_for_user(request.user).filter(corpus=corpus)
    latest = history[-1] if history else None
    return render(
        request,
        "ui/review.html",
        {
            "answer": answer,
            "question": question,
            "generated": answer_view(question.answer),
            "content": content_view(content, pks) if content.correction_version else None,
            "history": [
                {
                    "review": r,
                    "content": content_view(review_selectors.review_content(r, answer=answer), pks)
                    if r.action == "correct"
                    else None,
                }
                for r in history
            ],
            "version": version,
            "latest": latest,
            "accept_form": forms.get("accept") or AcceptForm(initial=initial),
            "flag_form": forms.get("flag") or FlagForm(initial=initial),
            "correction_form": correction,
            "editor_rows": editor_rows or [{"text": "", "cites": ""}],
            "gold_form": forms.get("gold") or GoldFromAnswerForm(benchmarks=benchmarks),
            "can_add_to_benchmark": latest is not None and latest.action in ("accept", "correct"),
            "gold_cases": selectors.gold_cases_from_answer(answer),
            "panel_document": panel_document,
            "panel_sentences": panel_sentences,
            "panel_choices": panel_choices,
            "cited_sentence_ids": cited_sentence_ids,
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
    form_class = {"accept": AcceptForm, "flag": FlagForm, "correct": CorrectionForm}.get(action)
    if action == "gold":
        return _add_to_benchmark(request, answer)
    if form_class is None:
        messages.error(request, "Choose accept, flag or correct.")
        return redirect("review-answer", pk=answer.pk)
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
    except review_services.ReviewConflict as conflict:
        # Keep what the reviewer typed, on the version they have now seen.
        fresh = request.POST.copy()
        fresh["base_version"] = str(conflict.current_version)
        return _review_page(
            request, answer, forms={action: form_class(fresh), "conflict": conflict}, status=409
        )
    except ClientError as exc:
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
        # One transaction: a new benchmark is not left behind when the case is refused.
        with transaction.atomic():
            if data["new_benchmark"]:
                benchmark = benchmark_services.benchmark_create(
                    name=data["new_benchmark"], corpus=corpus, user=request.user
                )
            else:
                benchmark = benchmarks.get(name=data["benchmark"])
            case = gold_services.gold_case_from_answer(
                answer=answer, benchmark=benchmark, split=data["split"], user=request.user
            )
    except ClientError as exc:
        form.add_error(None, str(exc))
        return _review_page(request, answer, forms={"gold": form}, status=400)
    messages.success(request, f"Added to benchmark {benchmark.name} as {case.split}/{case.case_id}.")
    return redirect(reverse("review-answer", args=[answer.pk]) + "#benchmark")
