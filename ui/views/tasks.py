"""Annotation tasks in the browser: list and create, a task's queue and agreement, annotate, adjudicate."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from documents import permissions
from documents.errors import DomainError
from documents.models import Document, Role, Sentence
from documents.selectors import documents_for_user
from review import selectors as review_selectors
from review.evaluation.types import split_evidence_key
from review.models import Annotation, Assignment
from review.selectors import annotation as annotation_selectors
from review.services import annotation as annotation_services
from ui.forms import TaskCreateForm
from ui.views.common import require_role

# How many of the corpus's documents the "open a document" list offers (by external id).
DOCUMENT_CHOICES = 500


def _words(text: str) -> list[str]:
    return [w for w in text.replace(",", " ").split() if w]


@login_required
@require_http_methods(["GET", "POST"])
def tasks(request):
    may_create = permissions.teams_with_role(request.user, Role.REVIEWER)
    benchmarks = review_selectors.benchmarks_for_user(request.user).filter(corpus__team__in=may_create)
    form = TaskCreateForm(request.POST or None, benchmarks=benchmarks)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        require_role(request.user, data["benchmark"].corpus.team, "create annotation tasks")
        try:
            task = annotation_services.annotation_task_create(
                benchmark=data["benchmark"],
                name=data["name"],
                guidelines=data["guidelines"],
                overlap=data["overlap"],
                annotators=annotation_services.annotators_by_username(
                    data["benchmark"], _words(data["annotators"])
                ),
                case_ids=_words(data["case_ids"]),
                prefill=data["prefill"],
                user=request.user,
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Task {task.name} created and assigned.")
            return redirect("task", pk=task.pk)
    return render(
        request,
        "ui/tasks.html",
        {
            "tasks": annotation_selectors.tasks_for_user(request.user),
            "form": form if benchmarks.exists() else None,
        },
        status=400 if form.is_bound and form.errors else 200,
    )


@login_required
@require_http_methods(["GET"])
def task(request, pk: int):
    current = annotation_selectors.task_get_for_user(request.user, pk)
    queue = list(annotation_selectors.queue_for_user(request.user, current))
    measured = annotation_selectors.task_agreement(current)
    cases = dict(current.cases.values_list("pk", "case_id"))
    adjudicated = annotation_selectors.adjudications_of(current)
    agreed = set(current.cases.filter(provenance="agreed").values_list("pk", flat=True))
    items = [
        {
            "agreement": item,
            "case_id": cases.get(int(item.item), ""),
            "adjudicated": int(item.item) in adjudicated,
            "in_gold": int(item.item) in agreed,
        }
        for item in measured.agreement.per_item
    ]
    return render(
        request,
        "ui/task.html",
        {
            "task": current,
            "queue": queue,
            "done": sum(a.status == Assignment.Status.DONE for a in queue),
            "skipped": sum(a.status == Assignment.Status.SKIPPED for a in queue),
            "pending": sum(a.status == Assignment.Status.PENDING for a in queue),
            "agreement": measured.agreement,
            "items": items,
            "disagreements": sum(1 for i in items if i["agreement"].disagreement and not i["adjudicated"]),
            "timing": annotation_selectors.task_timing(current),
            "with_suggestion": annotation_selectors.task_suggestion_agreement(current),
            "can_adjudicate": permissions.has_role(
                request.user, current.benchmark.corpus.team, Role.REVIEWER
            ),
        },
    )


@login_required
@require_http_methods(["POST"])
def task_agreed(request, pk: int):
    """Write the questions the annotators agreed on into gold (reviewers)."""
    current = annotation_selectors.task_get_for_user(request.user, pk)
    require_role(request.user, current.benchmark.corpus.team, "adjudicate")
    written = annotation_services.agreed_to_gold(task=current, reviewer=request.user)
    messages.success(request, f"Wrote {written} agreed question{'' if written == 1 else 's'} into gold.")
    return redirect("task", pk=current.pk)


def _sentence_pks(corpus, keys) -> dict[str, int]:
    """Evidence keys -> the pk of the live sentence under each (keys whose sentence is gone are left out)."""
    wanted = [split_evidence_key(key) for key in keys]
    documents = {doc for doc, _ in wanted}
    rows = Sentence.objects.filter(document__corpus=corpus, document__external_id__in=documents).values_list(
        "pk", "document__external_id", "label"
    )
    live = {f"{doc}#{label}": pk for pk, doc, label in rows}
    return {key: live[key] for key in keys if key in live}


def _ids(values) -> list[int]:
    return list(dict.fromkeys(int(v) for v in values if str(v).isdigit()))


@login_required
@require_http_methods(["GET", "POST"])
def task_annotate(request, pk: int):
    """One assigned question: answerability, evidence by clicking sentences of any opened document."""
    assignment = annotation_selectors.assignment_get_for_user(request.user, pk)
    task = assignment.task
    corpus = task.benchmark.corpus
    readable = documents_for_user(request.user).filter(corpus=corpus, status=Document.Status.READY)
    previous = (
        getattr(assignment, "annotation", None) if assignment.status == Assignment.Status.DONE else None
    )
    suggestion = annotation_selectors.pipeline_suggestion(assignment.gold_case) if task.prefill else None
    error = ""
    if request.method == "POST":
        require_role(request.user, corpus.team, "annotate")
        # A search result's "Open" button carries the document instead of an action.
        action = request.POST.get("action") or ("open" if request.POST.get("open_result") else "save")
        state = {
            "answerability": request.POST.get("answerability", ""),
            "evidence": _ids(request.POST.getlist("evidence")),
            "opened": _ids(request.POST.getlist("opened")),
            "reference_answer": request.POST.get("reference_answer", ""),
            "question_type": request.POST.get("question_type", ""),
            "skip_reason": request.POST.get("skip_reason", ""),
            "query": request.POST.get("query", "").strip()[:300],
            "prefilled": task.prefill and request.POST.get("prefilled") == "1",
        }
        opening = request.POST.get("open_result", "") or (
            request.POST.get("open_document", "") if action == "open" else ""
        )
        if opening.isdigit():
            state["opened"] = list(dict.fromkeys([*state["opened"], int(opening)]))
        try:
            if action == "save":
                annotation_services.annotation_submit(
                    assignment=assignment,
                    answerability=state["answerability"],
                    evidence_sentence_ids=state["evidence"],
                    reference_answer=state["reference_answer"],
                    opened_document_ids=state["opened"],
                    question_type=state["question_type"],
                    prefilled=state["prefilled"],
                )
                messages.success(request, f"Saved your answer to {assignment.gold_case.case_id}.")
                return _next(request, task)
            if action == "skip":
                annotation_services.assignment_skip(assignment=assignment, reason=state["skip_reason"])
                messages.success(request, f"Skipped {assignment.gold_case.case_id}.")
                return _next(request, task)
        except DomainError as exc:
            error = str(exc)
    elif previous is not None:
        state = {
            "answerability": previous.answerability,
            "evidence": list(_sentence_pks(corpus, previous.evidence).values()),
            "opened": list(
                readable.filter(
                    external_id__in=[
                        *previous.opened_documents,
                        *(split_evidence_key(k)[0] for k in previous.evidence),
                    ]
                ).values_list("pk", flat=True)
            ),
            "reference_answer": previous.reference_answer,
            "question_type": previous.question_type,
            "skip_reason": "",
            "query": "",
            "prefilled": previous.prefilled,
        }
    else:
        annotation_services.assignment_open(assignment=assignment)
        state = {
            "answerability": "",
            "evidence": [],
            "opened": [],
            "reference_answer": "",
            "question_type": "",
            "skip_reason": "",
            "query": "",
            "prefilled": False,
        }
        if suggestion is not None:
            state.update(_state_from_suggestion(suggestion, corpus, readable))
    opened = list(readable.filter(pk__in=state["opened"]).order_by("external_id"))
    # Sentences of documents not opened yet; those of opened ones are clicked in their document.
    found = [
        s
        for s in (annotation_selectors.evidence_search(corpus, state["query"]) if state["query"] else [])
        if s.document_id not in {d.pk for d in opened}
    ]
    sentences = Sentence.objects.filter(document__in=opened).order_by("document__external_id", "ordinal")
    by_document: dict[int, list] = {}
    for row in sentences.only("pk", "label", "text", "document_id"):
        by_document.setdefault(row.document_id, []).append(row)
    return render(
        request,
        "ui/task_annotate.html",
        {
            "assignment": assignment,
            "task": task,
            "state": state,
            "selected": set(state["evidence"]),
            "opened": [{"document": d, "sentences": by_document.get(d.pk, [])} for d in opened],
            "choices": readable.exclude(pk__in=[d.pk for d in opened])
            .only("pk", "external_id", "title", "corpus")
            .order_by("external_id")[:DOCUMENT_CHOICES],
            "labels": Annotation.Answerability.choices,
            "found": found,
            "error": error,
            "suggestion": suggestion,
            "suggested": set(_sentence_pks(corpus, suggestion.evidence).values()) if suggestion else set(),
        },
        status=400 if error else 200,
    )


def _state_from_suggestion(suggestion, corpus, readable) -> dict:
    """The annotate form started from GroundedQA's answer: its label, cited sentences and text."""
    return {
        "answerability": suggestion.answerability,
        "evidence": list(_sentence_pks(corpus, suggestion.evidence).values()),
        "opened": list(
            readable.filter(
                external_id__in=[split_evidence_key(key)[0] for key in suggestion.evidence]
            ).values_list("pk", flat=True)
        ),
        "reference_answer": suggestion.text,
        "prefilled": True,
    }


def _next(request, task):
    """The user's next pending item of the task, or the task page when none is left."""
    following = (
        annotation_selectors.queue_for_user(request.user, task)
        .filter(status=Assignment.Status.PENDING)
        .first()
    )
    if following is None:
        return redirect("task", pk=task.pk)
    return redirect("task-annotate", pk=following.pk)


@login_required
@require_http_methods(["GET", "POST"])
def task_adjudicate(request, pk: int):
    """The task's disagreements, annotators side by side; the reviewer's decision becomes the gold case."""
    current = annotation_selectors.task_get_for_user(request.user, pk)
    corpus = current.benchmark.corpus
    require_role(request.user, corpus.team, "adjudicate")
    error, error_case = "", None
    if request.method == "POST":
        case_pk = request.POST.get("case", "")
        case = review_selectors.gold_case_get(current.benchmark, int(case_pk) if case_pk.isdigit() else 0)
        try:
            annotation_services.adjudicate(
                task=current,
                gold_case=case,
                adjudicator=request.user,
                answerability=request.POST.get("answerability", ""),
                evidence_sentence_ids=_ids(request.POST.getlist("evidence")),
                reference_answer=request.POST.get("reference_answer", ""),
            )
        except DomainError as exc:
            error, error_case = str(exc), case.pk
        else:
            messages.success(request, f"Gold case {case.case_id} now holds your decision.")
            return redirect(reverse("task-adjudicate", args=[current.pk]))
    measured = annotation_selectors.task_agreement(current)
    adjudicated = annotation_selectors.adjudications_of(current)
    questions = dict(current.cases.values_list("pk", "question"))
    case_ids = dict(current.cases.values_list("pk", "case_id"))
    items = []
    for item in measured.agreement.per_item:
        if not item.disagreement:
            continue
        rows = measured.annotations[item.item]
        keys = list(dict.fromkeys(key for row in rows for key in row.evidence))
        texts = {key: text for row in rows for key, text in row.evidence_texts.items()}
        live = _sentence_pks(corpus, keys)
        case_pk = int(item.item)
        items.append(
            {
                "case": case_pk,
                "case_id": case_ids.get(case_pk, ""),
                "question": questions.get(case_pk, ""),
                "agreement": item,
                "annotations": rows,
                "evidence": [
                    {
                        "key": key,
                        "text": texts.get(key, ""),
                        "pk": live.get(key),
                        "by": [r.assignment.annotator.get_username() for r in rows if key in r.evidence],
                    }
                    for key in keys
                ],
                "adjudication": adjudicated.get(case_pk),
                "error": error if error_case == case_pk else "",
            }
        )
    return render(
        request,
        "ui/task_adjudicate.html",
        {"task": current, "items": items, "labels": Annotation.Answerability.choices},
        status=400 if error else 200,
    )
