"""Annotation tasks: create one, assign its items, take annotations and skips, adjudicate disagreements.

An item is a gold case of the task's benchmark. Each is assigned to ``overlap`` distinct
annotators, balanced (the least-loaded annotator takes the next item) and never twice to one
person; assigning again is idempotent, so it also serves to hand a skipped item to someone else.
An adjudication writes the reviewer's decision into the gold case as a new revision, with the
annotators, the adjudicator and the item's agreement in its provenance.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from documents import permissions
from documents.models import Document, Role, Sentence
from review import selectors as review_selectors
from review.benchmark_files import rubric_problem
from review.errors import AnnotationInvalid, AssignmentConflict
from review.evaluation.types import evidence_key, split_evidence_key
from review.models import (
    Adjudication,
    Annotation,
    AnnotationTask,
    Assignment,
    Benchmark,
    GoldCase,
    ReviewAssignment,
)
from review.selectors import annotation as annotation_selectors
from review.selectors.annotate_page import AnnotateState
from review.services.gold import apply_changes, bump_version, lock_benchmark


def balanced_assignment(
    items: Sequence[Hashable],
    annotators: Sequence[Hashable],
    overlap: int,
    existing: Iterable[tuple[Hashable, Hashable, bool]] = (),
) -> list[tuple[Hashable, Hashable]]:
    """The (item, annotator) pairs to add so every item has ``overlap`` active annotators.

    ``existing`` holds (item, annotator, active) for assignments made before; a skipped one is
    not active, so its item is owed another annotator, but never the one who skipped it. Each
    missing place goes to the annotator with the fewest assignments so far (ties: the order of
    ``annotators``), which keeps loads within one of each other when every item needs the same
    number. Deterministic, and empty when nothing is missing.
    """
    order = {annotator: index for index, annotator in enumerate(annotators)}
    load = Counter({annotator: 0 for annotator in annotators})
    assigned: dict[Hashable, set] = defaultdict(set)
    active: Counter = Counter()
    for item, annotator, is_active in existing:
        assigned[item].add(annotator)
        if annotator in load:
            load[annotator] += 1
        if is_active:
            active[item] += 1
    new = []
    for item in items:
        missing = overlap - active[item]
        free = sorted((a for a in annotators if a not in assigned[item]), key=lambda a: (load[a], order[a]))
        for annotator in free[: max(missing, 0)]:
            new.append((item, annotator))
            assigned[item].add(annotator)
            load[annotator] += 1
    return new


def annotation_task_create(
    *,
    benchmark: Benchmark,
    name: str,
    annotators: Sequence,
    overlap: int = 2,
    guidelines: str = "",
    case_ids: Sequence[str] | None = None,
    prefill: bool = False,
    user,
) -> AnnotationTask:
    """A task over the benchmark's cases (or those named), assigned at once; the caller checked the role."""
    name = (name or "").strip()
    if not name:
        raise AnnotationInvalid("Name the annotation task.")
    people = list(dict.fromkeys(annotators))
    if not people:
        raise AnnotationInvalid("Name at least one annotator.")
    if not 1 <= overlap <= len(people):
        raise AnnotationInvalid(
            f"Overlap {overlap}: each question needs that many different annotators; "
            f"name between 1 and {len(people)}."
        )
    team = benchmark.corpus.team
    unable = [p.get_username() for p in people if not permissions.has_role(p, team, Role.ANNOTATOR)]
    if unable:
        raise AnnotationInvalid(
            f"{', '.join(unable)}: not annotators of team {team.name!r} "
            "(viewers and non-members cannot annotate)."
        )
    cases = GoldCase.objects.filter(benchmark=benchmark)
    if case_ids:
        wanted = list(dict.fromkeys(str(c) for c in case_ids))
        cases = cases.filter(case_id__in=wanted)
        missing = sorted(set(wanted) - set(cases.values_list("case_id", flat=True)))
        if missing:
            raise AnnotationInvalid(f"No case {', '.join(missing)} in benchmark {benchmark.name!r}.")
    if not cases.exists():
        raise AnnotationInvalid(f"Benchmark {benchmark.name!r} has no cases to annotate.")
    with transaction.atomic():
        task = AnnotationTask.objects.create(
            benchmark=benchmark,
            name=name,
            guidelines=guidelines or "",
            overlap=overlap,
            prefill=bool(prefill),
            created_by=user,
        )
        task.annotators.set(people)
        task.cases.set(cases)
        assignments_ensure(task=task)
    return task


def assignments_ensure(*, task: AnnotationTask) -> int:
    """Assign every item that lacks annotators (see balanced_assignment); the number added."""
    with transaction.atomic():
        # Two callers at once would compute the same missing places from the same state.
        AnnotationTask.objects.select_for_update().filter(pk=task.pk).first()
        team = task.benchmark.corpus.team
        # Someone whose role was lowered below annotator (or who left the team) gets no new items.
        annotators = [
            user.pk
            for user in task.annotators.order_by("username")
            if permissions.has_role(user, team, Role.ANNOTATOR)
        ]
        items = list(task.cases.order_by("split", "case_id").values_list("pk", flat=True))
        existing = [
            (case, annotator, status != Assignment.Status.SKIPPED)
            for case, annotator, status in Assignment.objects.filter(task=task).values_list(
                "gold_case_id", "annotator_id", "status"
            )
        ]
        pairs = balanced_assignment(items, annotators, task.overlap, existing)
        created = Assignment.objects.bulk_create(
            [Assignment(task=task, gold_case_id=case, annotator_id=annotator) for case, annotator in pairs],
            ignore_conflicts=True,  # (task, case, annotator) is unique: a repeat adds nothing
        )
    return len(created)


def _evidence(corpus, sentence_ids: Sequence[int]) -> list[Sentence]:
    wanted = list(dict.fromkeys(int(pk) for pk in sentence_ids))
    sentences = list(
        Sentence.objects.filter(pk__in=wanted, document__corpus=corpus)
        .select_related("document")
        .order_by("document__external_id", "ordinal")
    )
    missing = sorted(set(wanted) - {s.pk for s in sentences})
    if missing:
        raise AnnotationInvalid(
            f"Sentence id(s) {', '.join(map(str, missing))} are not sentences of corpus {corpus.name!r}."
        )
    return sentences


def _check_answerability(answerability: str, sentences: Sequence[Sentence]) -> None:
    if answerability not in Annotation.Answerability.values:
        raise AnnotationInvalid(
            f"Answerability {answerability!r}: use one of {', '.join(Annotation.Answerability.values)}."
        )
    if answerability == Annotation.Answerability.UNANSWERABLE and sentences:
        raise AnnotationInvalid(
            "An unanswerable question has no evidence; remove the sentences or change it."
        )
    if answerability != Annotation.Answerability.UNANSWERABLE and not sentences:
        raise AnnotationInvalid(f"An {answerability} question needs at least one evidence sentence.")


def annotation_submit(
    *,
    assignment: Assignment,
    answerability: str,
    evidence_sentence_ids: Sequence[int] = (),
    reference_answer: str = "",
    opened_document_ids: Sequence[int] = (),
    question_type: str = "",
    prefilled: bool = False,
    rubric: dict | None = None,
) -> Annotation:
    """The annotator's answer for their assignment (a later submission replaces it).

    ``prefilled``: the annotator started from GroundedQA's suggestion (a task with ``prefill``);
    the suggestion is looked up here and stored with the answer, never taken from the client.
    """
    corpus = assignment.task.benchmark.corpus
    sentences = _evidence(corpus, evidence_sentence_ids)
    _check_answerability(answerability, sentences)
    problem = rubric_problem(rubric)
    if problem:
        raise AnnotationInvalid(problem[0].upper() + problem[1:] + ".")
    suggestion = None
    if prefilled:
        if not assignment.task.prefill:
            raise AnnotationInvalid("This task does not pre-fill answers; send prefilled false.")
        suggestion = annotation_selectors.pipeline_suggestion(assignment.gold_case)
        if suggestion is None:
            raise AnnotationInvalid(
                f"GroundedQA has no answer to case {assignment.gold_case.case_id} to start from; "
                "send prefilled false."
            )
    opened = dict(
        Document.objects.filter(corpus=corpus, pk__in=list(opened_document_ids)).values_list(
            "pk", "external_id"
        )
    )
    unknown = sorted(set(map(int, opened_document_ids)) - set(opened))
    if unknown:
        raise AnnotationInvalid(
            f"Document id(s) {', '.join(map(str, unknown))} are not in corpus {corpus.name!r}."
        )
    keys = [evidence_key(s.document.external_id, s.label) for s in sentences]
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        annotation, _ = Annotation.objects.update_or_create(
            assignment=locked,
            defaults={
                "answerability": answerability,
                "evidence": keys,
                "evidence_texts": {key: s.text for key, s in zip(keys, sentences, strict=True)},
                "opened_documents": sorted(set(opened.values())),
                "reference_answer": (reference_answer or "").strip(),
                "question_type": (question_type or "").strip()[:50],
                "prefilled": suggestion is not None,
                "suggestion": suggestion.as_json() if suggestion is not None else {},
                "rubric": rubric or None,
            },
        )
        locked.status = Assignment.Status.DONE
        locked.skip_reason = ""
        # The first submission ends the timed span; editing the answer later is not annotating time.
        locked.submitted_at = locked.submitted_at or timezone.now()
        locked.save(update_fields=["status", "skip_reason", "submitted_at", "updated_at"])
    return annotation


def annotate_page_act(*, assignment: Assignment, action: str, state: AnnotateState) -> str:
    """Save or skip an item as the annotate page's form left it; what the page tells the annotator."""
    if action == "skip":
        assignment_skip(assignment=assignment, reason=state.skip_reason)
        return f"Skipped {assignment.gold_case.case_id}."
    annotation_submit(
        assignment=assignment,
        answerability=state.answerability,
        evidence_sentence_ids=state.evidence,
        reference_answer=state.reference_answer,
        opened_document_ids=state.opened,
        question_type=state.question_type,
        prefilled=state.prefilled,
        rubric=state.rubric(),
    )
    return f"Saved your answer to {assignment.gold_case.case_id}."


def assignment_open(*, assignment: Assignment) -> None:
    """Note when the annotator first opened the item; the time per item runs from here to the first submit.

    A conditional update, so two tabs opening the item at once keep the earlier time. Only a pending
    item starts its clock: reopening an answered one (from before timing existed) to edit it is not
    the time it took to annotate.
    """
    Assignment.objects.filter(
        pk=assignment.pk, opened_at__isnull=True, status=Assignment.Status.PENDING
    ).update(opened_at=timezone.now())


def assignment_skip(*, assignment: Assignment, reason: str) -> Assignment:
    """Skip a pending item with a reason; it is handed to another annotator of the task if one is free."""
    reason = (reason or "").strip()
    if not reason:
        raise AnnotationInvalid("Say why you skip this question.")
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status == Assignment.Status.DONE:
            raise AssignmentConflict(
                "You annotated this question already; submit again to change your answer."
            )
        locked.status = Assignment.Status.SKIPPED
        locked.skip_reason = reason[:2000]
        locked.save(update_fields=["status", "skip_reason", "updated_at"])
        assignments_ensure(task=locked.task)
    return locked


def _figures(measured, item) -> dict:
    figures = {key: value for key, value in asdict(item).items() if key != "item"}
    figures["candidate_set"] = measured.agreement.candidate_set
    figures["f1_threshold"] = measured.agreement.f1_threshold
    # As the JSON column gives it back (lists, not tuples), so an unchanged decision compares equal.
    return json.loads(json.dumps(figures))


def _write_gold(
    *,
    task: AnnotationTask,
    case: GoldCase,
    user,
    provenance: str,
    answerability: str,
    keys: Sequence[str],
    texts: dict[str, str],
    reference_answer: str,
    record: dict,
    note: str,
    rubric: dict | None = None,
) -> GoldCase:
    """Write a decided answer into the case as a new revision (none when nothing changes)."""
    with transaction.atomic():
        locked = lock_benchmark(task.benchmark)
        case = GoldCase.objects.select_for_update().get(pk=case.pk)
        changes = {
            "gold_evidence": list(keys),
            "evidence_texts": {key: texts.get(key, "") for key in keys},
            "gold_documents": list(dict.fromkeys(split_evidence_key(key)[0] for key in keys))
            or case.gold_documents,
            "reference_answer": (reference_answer or "").strip(),
            "answerable": answerability != Annotation.Answerability.UNANSWERABLE,
            "provenance": provenance,
            "metadata": {**case.metadata, "annotation": record},
        }
        if rubric:
            changes["rubric"] = rubric
        if "answerability" in case.metadata:
            # A benchmark with answerability classes (MTRAG-UN's) scores them: the decision is the class.
            changes["metadata"]["answerability"] = answerability
        if apply_changes(case, changes, benchmark_version=locked.version + 1, user=user, note=note):
            bump_version(locked)
    return case


def _first_rubric(rows) -> dict | None:
    """The rubric the first annotator (username order) wrote; a case's own rubric stays when none did."""
    return next((row.rubric for row in rows if row.rubric), None)


def _note(verb: str, task: AnnotationTask, user, item) -> str:
    f1 = "n/a" if item.evidence_f1 is None else f"{item.evidence_f1:.2f}"
    return (
        f"{verb} in task {task.pk} by {user.get_username()}: annotators {', '.join(item.annotators)}, "
        f"labels {'agree' if item.labels_agree else 'differ'} ({', '.join(item.labels)}), evidence F1 {f1}"
    )


def adjudicate(
    *,
    task: AnnotationTask,
    gold_case: GoldCase,
    adjudicator,
    answerability: str,
    evidence_sentence_ids: Sequence[int] = (),
    reference_answer: str = "",
) -> Adjudication:
    """The reviewer's decision on an item becomes its gold case; the caller checked the role."""
    if not task.cases.filter(pk=gold_case.pk).exists():
        raise AnnotationInvalid(f"Case {gold_case.case_id} is not an item of task {task.name!r}.")
    sentences = _evidence(task.benchmark.corpus, evidence_sentence_ids)
    _check_answerability(answerability, sentences)
    measured = annotation_selectors.task_agreement(task)
    item = next((i for i in measured.agreement.per_item if i.item == str(gold_case.pk)), None)
    if item is None:
        raise AnnotationInvalid(f"No annotator has annotated case {gold_case.case_id} yet.")
    figures = _figures(measured, item)
    keys = [evidence_key(s.document.external_id, s.label) for s in sentences]
    record = {
        "task": task.pk,
        "task_name": task.name,
        "annotators": list(item.annotators),
        "adjudicator": adjudicator.get_username(),
        "answerability": answerability,
        "agreement": figures,
    }
    with transaction.atomic():
        case = _write_gold(
            task=task,
            case=gold_case,
            user=adjudicator,
            provenance=GoldCase.Provenance.ADJUDICATED,
            answerability=answerability,
            keys=keys,
            texts={key: s.text for key, s in zip(keys, sentences, strict=True)},
            reference_answer=reference_answer,
            record=record,
            note=_note("adjudicated", task, adjudicator, item),
            rubric=_first_rubric(measured.annotations[item.item]),
        )
        return Adjudication.objects.create(
            task=task,
            gold_case=case,
            adjudicator=adjudicator,
            answerability=answerability,
            evidence=keys,
            reference_answer=case.reference_answer,
            annotators=list(item.annotators),
            agreement=figures,
            gold_revision=case.revision,
        )


def agreed_to_gold(*, task: AnnotationTask, reviewer) -> int:
    """Write every question its annotators agreed on into its gold case; the number written.

    Agreed: two or more annotators, no disagreement (same label, every pair's evidence F1 at or
    above the threshold) and no adjudication. The gold takes their label, the evidence sentences
    chosen by at least half of them, and the first reference answer written (annotators in
    username order; the case's own when none wrote one). Running it again writes nothing new.
    The caller checked the role.
    """
    measured = annotation_selectors.task_agreement(task)
    adjudicated = annotation_selectors.adjudications_of(task)
    cases = {case.pk: case for case in task.cases.all()}
    written = 0
    for item in measured.agreement.per_item:
        case = cases.get(int(item.item))
        if case is None or item.disagreement or len(item.annotators) < 2 or case.pk in adjudicated:
            continue
        rows = measured.annotations[item.item]
        votes = Counter(key for row in rows for key in row.evidence)
        keys = sorted(key for key, count in votes.items() if 2 * count >= len(rows))
        texts = {key: text for row in rows for key, text in row.evidence_texts.items()}
        record = {
            "task": task.pk,
            "task_name": task.name,
            "annotators": list(item.annotators),
            "accepted_by": reviewer.get_username(),
            "answerability": rows[0].answerability,
            "agreement": _figures(measured, item),
        }
        before = case.revision
        case = _write_gold(
            task=task,
            case=case,
            user=reviewer,
            provenance=GoldCase.Provenance.AGREED,
            answerability=rows[0].answerability,
            keys=keys,
            texts=texts,
            # None of them wrote one: the case keeps the reference answer it had.
            reference_answer=next(
                (row.reference_answer for row in rows if row.reference_answer), case.reference_answer
            ),
            record=record,
            note=_note("agreed", task, reviewer, item),
            rubric=_first_rubric(rows),
        )
        written += case.revision != before
    return written


def annotators_by_username(benchmark: Benchmark, usernames: Sequence[str]) -> list:
    """The users named, each a member of the benchmark's team; unknown names are refused."""
    return members_by_username(benchmark.corpus.team, usernames)


def members_by_username(team, usernames: Sequence[str]) -> list:
    """The users named, each a member of the team; unknown names are refused."""
    names = list(dict.fromkeys(usernames))
    users = list(get_user_model().objects.filter(username__in=names, teams=team).order_by("username"))
    unknown = sorted(set(names) - {u.get_username() for u in users})
    if unknown:
        raise AnnotationInvalid(f"No member of team {team.name!r} named {', '.join(unknown)}.")
    return users


def review_queue_split(
    *, corpus, reviewers: Sequence, user, limit: int | None = None, origin: str = "asked"
) -> int:
    """Hand the corpus's unreviewed, unassigned answers to the reviewers, least confident first.

    One reviewer per answer, balanced as annotation items are: each answer goes to the reviewer
    with the fewest answers still waiting for them. Answers already assigned keep their reviewer,
    so splitting again hands out only new answers. The caller checked the role.
    """
    people = list(dict.fromkeys(reviewers))
    if not people:
        raise AnnotationInvalid("Name at least one reviewer.")
    unable = [p.get_username() for p in people if not permissions.has_role(p, corpus.team, Role.ANNOTATOR)]
    if unable:
        raise AnnotationInvalid(f"{', '.join(unable)}: not annotators of team {corpus.team.name!r}.")
    queue = review_selectors.review_queue(
        user, status="unreviewed", corpus=corpus.pk, least_confident_first=True, origin=origin
    ).filter(review_assignment__isnull=True)
    answers = list(queue.values_list("pk", flat=True)[: limit or None])
    waiting = ReviewAssignment.objects.filter(answer__question__corpus=corpus, answer__reviews__isnull=True)
    # Answers still waiting for each reviewer count towards their load, under keys no new answer has.
    existing = [(("waiting", a), r, True) for a, r in waiting.values_list("answer_id", "reviewer_id")]
    pairs = balanced_assignment(answers, [p.pk for p in people], 1, existing)
    created = ReviewAssignment.objects.bulk_create(
        [ReviewAssignment(answer_id=a, reviewer_id=r, assigned_by=user) for a, r in pairs],
        ignore_conflicts=True,  # one reviewer per answer: a concurrent split's answers stay theirs
    )
    return len(created)


__all__ = [
    "adjudicate",
    "agreed_to_gold",
    "annotation_submit",
    "annotation_task_create",
    "annotators_by_username",
    "assignment_skip",
    "assignments_ensure",
    "members_by_username",
    "review_queue_split",
    "balanced_assignment",
]
