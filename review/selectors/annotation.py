"""Reads of annotation tasks: a user's tasks and queue, judgements and their agreement."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Aggregate, Case, Count, F, FloatField, Q, QuerySet, Value, When
from django.db.models.functions import Extract
from django.http import Http404

from documents import lexical
from documents.models import Sentence
from documents.selectors import corpora_for_user
from qa.models import Answer
from review.evaluation.agreement import (
    Agreement,
    Judgement,
    SuggestionAgreement,
    agreement,
    suggestion_agreement,
)
from review.evaluation.types import split_evidence_key
from review.models import (
    Adjudication,
    Annotation,
    AnnotationTask,
    Assignment,
    EvaluationCaseResult,
    GoldCase,
    ReviewAssignment,
)

# Stated beside every agreement figure (API, CSV, pages): what "per candidate sentence" counts.
CANDIDATE_SET = (
    "every sentence of every document that any annotator of the question opened or cited as evidence"
)


class Median(Aggregate):
    """PostgreSQL's continuous median; NULLs (untimed items) are left out, as by every aggregate."""

    function = "PERCENTILE_CONT"
    name = "Median"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def _seconds_spent(prefix: str = ""):
    """Seconds from opening an item to first submitting it; NULL unless both were recorded."""
    return Extract(F(f"{prefix}submitted_at") - F(f"{prefix}opened_at"), "epoch")


# Timed: done, with both timestamps (items annotated through the API alone were never opened on a page).
def _timed(prefix: str = "") -> Q:
    return Q(
        **{
            f"{prefix}status": "done",
            f"{prefix}opened_at__isnull": False,
            f"{prefix}submitted_at__isnull": False,
        }
    )


def tasks_for_user(user) -> QuerySet[AnnotationTask]:
    """Tasks over the benchmarks of the user's teams, with their progress and timing counted."""
    return (
        AnnotationTask.objects.filter(benchmark__corpus__in=corpora_for_user(user))
        .select_related("benchmark", "benchmark__corpus__team", "created_by")
        .annotate(
            assignment_count=Count("assignments", distinct=True),
            done_count=Count("assignments", filter=Q(assignments__status="done"), distinct=True),
            skipped_count=Count("assignments", filter=Q(assignments__status="skipped"), distinct=True),
            timed_count=Count("assignments", filter=_timed("assignments__"), distinct=True),
            median_seconds=Median(_seconds_spent("assignments__"), filter=_timed("assignments__")),
        )
        # Meta.ordering is not applied to a grouped query: pages would come in no fixed order.
        .order_by("-created_at", "-pk")
    )


def task_get_for_user(user, pk) -> AnnotationTask:
    task = tasks_for_user(user).filter(pk=pk).first()
    if task is None:
        raise Http404("No such annotation task.")
    return task


def queue_for_user(user, task: AnnotationTask) -> QuerySet[Assignment]:
    """The user's own assignments in the task: pending first, then in case order."""
    return (
        Assignment.objects.filter(task=task, annotator=user)
        .select_related("gold_case", "annotation")
        .order_by(
            Case(When(status=Assignment.Status.PENDING, then=Value(0)), default=Value(1)),
            "gold_case__split",
            "gold_case__case_id",
        )
    )


def assignment_get_for_user(user, pk) -> Assignment:
    """One of the user's own assignments; anyone else's is not found."""
    assignment = (
        Assignment.objects.filter(pk=pk, annotator=user, task__benchmark__corpus__in=corpora_for_user(user))
        .select_related("task__benchmark__corpus__team", "gold_case")
        .first()
    )
    if assignment is None:
        raise Http404("No such assignment of yours.")
    return assignment


def task_annotations(task: AnnotationTask) -> QuerySet[Annotation]:
    """Every submitted annotation of the task whose assignment is done."""
    return (
        Annotation.objects.filter(assignment__task=task, assignment__status=Assignment.Status.DONE)
        .select_related("assignment__annotator", "assignment__gold_case")
        .order_by("assignment__gold_case_id", "assignment__annotator__username")
    )


@dataclass(frozen=True)
class TaskAgreement:
    agreement: Agreement
    # item key (the gold case's pk, as a string) -> the annotations behind it
    annotations: dict[str, list[Annotation]]


def candidate_sentences(corpus, documents: set[str]) -> set[str]:
    """Evidence keys of every live sentence of the named documents of the corpus."""
    rows = Sentence.objects.filter(
        document__corpus=corpus, document__external_id__in=sorted(documents)
    ).values_list("document__external_id", "label")
    return {f"{external_id}#{label}" for external_id, label in rows}


def task_agreement(task: AnnotationTask) -> TaskAgreement:
    """The annotators' agreement on the task's done items (review.evaluation.agreement)."""
    annotations: dict[str, list[Annotation]] = {}
    for annotation in task_annotations(task):
        annotations.setdefault(str(annotation.assignment.gold_case_id), []).append(annotation)
    judgements = []
    candidates: dict[str, set[str]] = {}
    for item, rows in annotations.items():
        documents: set[str] = set()
        for row in rows:
            judgements.append(
                Judgement(
                    item=item,
                    annotator=row.assignment.annotator.get_username(),
                    label=row.answerability,
                    evidence=frozenset(row.evidence),
                )
            )
            documents.update(row.opened_documents)
            documents.update(split_evidence_key(key)[0] for key in row.evidence)
        candidates[item] = candidate_sentences(task.benchmark.corpus, documents - {""})
    return TaskAgreement(agreement(judgements, candidates, candidate_set=CANDIDATE_SET), annotations)


def task_timing(task: AnnotationTask) -> list[dict]:
    """Per annotator of the task: how many items were timed and the median seconds one took."""
    rows = (
        Assignment.objects.filter(_timed(), task=task)
        .values("annotator__username")
        .annotate(timed=Count("pk"), median_seconds=Median(_seconds_spent()))
        .order_by("annotator__username")
    )
    return [
        {"annotator": r["annotator__username"], "timed": r["timed"], "median_seconds": r["median_seconds"]}
        for r in rows
    ]


@dataclass(frozen=True)
class Suggestion:
    """GroundedQA's answer to a gold case's question, offered to an annotator as a starting point."""

    answer_id: int
    answerability: str
    evidence: tuple[str, ...]  # evidence keys of the cited sentences, in citation order
    text: str
    source: str  # where the answer came from, said on the page

    def as_json(self) -> dict:
        return {
            "answer": self.answer_id,
            "answerability": self.answerability,
            "evidence": list(self.evidence),
        }


def pipeline_suggestion(case: GoldCase) -> Suggestion | None:
    """The answer the case was made from, else the latest evaluation run's answer to it; None if neither.

    An answer already stored is used rather than asking anew: the page must open at once, and a
    stored answer is the one analysts or the benchmark's metrics have seen.
    """
    answer, source = None, ""
    if case.source_answer_id:
        answer, source = Answer.objects.filter(pk=case.source_answer_id).first(), "the reviewed answer"
    if answer is None:
        result = (
            EvaluationCaseResult.objects.filter(gold_case=case, answer__isnull=False)
            .select_related("answer", "run")
            .order_by("-run__created_at", "-pk")
            .first()
        )
        if result is not None:
            answer, source = result.answer, f"evaluation run {result.run_id} ({result.run.preset})"
    if answer is None:
        return None
    keys = dict.fromkeys(
        f"{c.document_external_id}#{c.label}"
        for sentence in answer.sentences.order_by("ordinal").prefetch_related("citations")
        for c in sentence.citations.all()
    )
    return Suggestion(
        answer_id=answer.pk,
        answerability="unanswerable" if answer.refused else "answerable",
        evidence=tuple(keys),
        text="" if answer.refused else answer.text,
        source=source,
    )


def task_suggestion_agreement(task: AnnotationTask) -> SuggestionAgreement:
    """How far the task's pre-filled annotations stayed with GroundedQA's suggestion."""
    pairs = [
        (
            Judgement(item="", annotator="", label=row.answerability, evidence=frozenset(row.evidence)),
            Judgement(
                item="",
                annotator="GroundedQA",
                label=row.suggestion.get("answerability", ""),
                evidence=frozenset(row.suggestion.get("evidence", ())),
            ),
        )
        for row in task_annotations(task).filter(prefilled=True)
    ]
    return suggestion_agreement(pairs)


def adjudications_of(task: AnnotationTask) -> dict[int, Adjudication]:
    """The latest adjudication of each item of the task, by gold case pk."""
    latest: dict[int, Adjudication] = {}
    for row in Adjudication.objects.filter(task=task).select_related("adjudicator").order_by("created_at"):
        latest[row.gold_case_id] = row
    return latest


def evidence_search(corpus, query: str, *, k: int = 10) -> list[Sentence]:
    """The corpus's live sentences that best match ``query`` by BM25 (the pipeline's lexical search)."""
    hits = lexical.bm25_search(corpus_id=corpus.pk, unit="sentence", query=query, version=corpus.version, k=k)
    rows = Sentence.objects.filter(pk__in=[pk for pk, _ in hits]).select_related("document").in_bulk()
    return [rows[pk] for pk, _ in hits if pk in rows]


def review_progress(corpus) -> list[dict]:
    """Per reviewer of the corpus's split review queue: answers assigned, reviewed, still waiting."""
    return _progress(ReviewAssignment.objects.filter(answer__question__corpus=corpus))


def review_progress_for_user(user) -> list[dict]:
    """review_progress of every corpus the user reads, each row naming its corpus."""
    assignments = ReviewAssignment.objects.filter(answer__question__corpus__in=corpora_for_user(user))
    return _progress(assignments, by_corpus=True)


def _progress(assignments, *, by_corpus: bool = False) -> list[dict]:
    keys = ["answer__question__corpus__name", "reviewer__username"] if by_corpus else ["reviewer__username"]
    rows = (
        assignments.values(*keys)
        .annotate(
            assigned=Count("pk", distinct=True),
            reviewed=Count("pk", filter=Q(answer__reviews__isnull=False), distinct=True),
        )
        .order_by(*keys)
    )
    return [
        {
            **({"corpus": row["answer__question__corpus__name"]} if by_corpus else {}),
            "reviewer": row["reviewer__username"],
            "assigned": row["assigned"],
            "reviewed": row["reviewed"],
            "waiting": row["assigned"] - row["reviewed"],
        }
        for row in rows
    ]
