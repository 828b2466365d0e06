"""Annotation tasks in the browser: list and create, a task's queue and agreement, annotate, adjudicate."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from documents import permissions
from documents.errors import DomainError
from documents.models import Document, Role
from documents.selectors import corpora_for_user, corpus_get_for_user, documents_for_user
from review import selectors as review_selectors
from review.models import Annotation, Assignment
from review.selectors import annotate_page
from review.selectors import annotation as annotation_selectors
from review.services import annotation as annotation_services
from review.services import asked_tasks
from ui.review_forms import AskedTaskForm, TaskCreateForm, annotate_state_from_post
from ui.views.common import require_role


def _words(text: str) -> list[str]:
    return [w for w in text.replace(",", " ").split() if w]


def _tasks_page(request, *, form=None, asked_form=None):
    may_create = permissions.teams_with_role(request.user, Role.REVIEWER)
    benchmarks = review_selectors.benchmarks_for_user(request.user).filter(corpus__team__in=may_create)
    corpora = corpora_for_user(request.user).filter(team__in=may_create)
    form = TaskCreateForm(benchmarks=benchmarks) if form is None else form
    asked_form = AskedTaskForm(corpora=corpora) if asked_form is None else asked_form
    return render(
        request,
        "ui/tasks.html",
        {
            "tasks": annotation_selectors.tasks_for_user(request.user),
            "form": form if benchmarks.exists() else None,
            "asked_form": asked_form if corpora.exists() else None,
        },
        status=400 if form.errors or asked_form.errors else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def tasks(request):
    if request.method == "GET":
        return _tasks_page(request)
    may_create = permissions.teams_with_role(request.user, Role.REVIEWER)
    benchmarks = review_selectors.benchmarks_for_user(request.user).filter(corpus__team__in=may_create)
    form = TaskCreateForm(request.POST, benchmarks=benchmarks)
    if form.is_valid():
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
    return _tasks_page(request, form=form)


def _posted_corpus_readable(request) -> None:
    """A corpus of another team is not disclosed: not found (404), as the API answers, not a form error."""
    key = request.POST.get("corpus", "").strip()
    if key.isdigit():
        corpus_get_for_user(request.user, pk=int(key))


@login_required
@require_http_methods(["POST"])
def tasks_from_questions(request):
    """A task over the questions analysts asked on a corpus (reviewers of its team)."""
    corpora = corpora_for_user(request.user)
    form = AskedTaskForm(request.POST, corpora=corpora)
    _posted_corpus_readable(request)
    if form.is_valid():
        data = form.cleaned_data
        require_role(request.user, data["corpus"].team, "create annotation tasks")
        try:
            task = asked_tasks.annotation_task_over_asked(
                corpus=data["corpus"],
                questions=data["questions"],
                benchmark_name=data["benchmark"],
                name=data["name"],
                guidelines=data["guidelines"],
                overlap=data["overlap"],
                annotators=annotation_services.members_by_username(
                    data["corpus"].team, _words(data["annotators"])
                ),
                prefill=data["prefill"],
                limit=data["limit"],
                user=request.user,
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            count = task.cases.count()
            messages.success(
                request,
                f"Task {task.name} created over {count} asked question{'' if count == 1 else 's'} "
                f"(benchmark {task.benchmark.name}).",
            )
            return redirect("task", pk=task.pk)
    return _tasks_page(request, asked_form=form)


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


def _ids(values) -> list[int]:
    return list(dict.fromkeys(int(v) for v in values if str(v).isdigit()))


@login_required
@require_http_methods(["GET", "POST"])
def task_annotate(request, pk: int):
    """One assigned question: answerability, evidence by clicking sentences of any opened document, rubric."""
    assignment = annotation_selectors.assignment_get_for_user(request.user, pk)
    task = assignment.task
    readable = documents_for_user(request.user).filter(
        corpus=task.benchmark.corpus, status=Document.Status.READY
    )
    suggestion = annotation_selectors.pipeline_suggestion(assignment.gold_case) if task.prefill else None
    error = ""
    if request.method == "POST":
        require_role(request.user, task.benchmark.corpus.team, "annotate")
        action, state = annotate_state_from_post(request.POST, prefill=task.prefill)
        if action in ("save", "skip"):
            try:
                said = annotation_services.annotate_page_act(
                    assignment=assignment, action=action, state=state
                )
            except DomainError as exc:
                error = str(exc)
            else:
                messages.success(request, said)
                return _next(request, task)
    else:
        annotation_services.assignment_open(assignment=assignment)
        state = annotate_page.initial_state(assignment, readable, suggestion)
    context = annotate_page.annotate_page(
        assignment=assignment, state=state, readable=readable, suggestion=suggestion
    )
    return render(request, "ui/task_annotate.html", {**context, "error": error}, status=400 if error else 200)


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
        live = annotate_page.sentence_pks(corpus, keys)
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
