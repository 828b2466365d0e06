"""REST endpoints of annotation tasks: parse input, check the role, call a service or selector."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from documents import permissions
from documents.selectors import corpus_get_for_user
from review import selectors
from review.api import annotation_serializers as s
from review.models import Assignment
from review.selectors import annotation as annotation_selectors
from review.services import annotation as annotation_services
from review.services import asked_tasks


class AnnotationTaskList(generics.ListAPIView):
    """Annotation tasks over your teams' benchmarks (GET), or a new one, assigned at once (POST)."""

    serializer_class = s.AnnotationTaskSerializer

    def get_queryset(self):
        return annotation_selectors.tasks_for_user(self.request.user)

    @extend_schema(request=s.AnnotationTaskInput, responses={201: s.AnnotationTaskSerializer})
    def post(self, request):
        body = s.AnnotationTaskInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        benchmark = selectors.benchmark_get_for_user(request.user, data["benchmark"])
        permissions.require_role(request.user, benchmark.corpus.team, "create annotation tasks")
        task = annotation_services.annotation_task_create(
            benchmark=benchmark,
            name=data["name"],
            guidelines=data["guidelines"],
            overlap=data["overlap"],
            annotators=annotation_services.annotators_by_username(benchmark, data["annotators"]),
            case_ids=data["case_ids"],
            prefill=data["prefill"],
            user=request.user,
        )
        task = annotation_selectors.task_get_for_user(request.user, task.pk)
        return Response(s.AnnotationTaskSerializer(task).data, status=status.HTTP_201_CREATED)


def _corpus(user, key: str):
    return corpus_get_for_user(user, pk=int(key)) if key.isdigit() else corpus_get_for_user(user, name=key)


class AskedQuestionsTask(APIView):
    """A task whose items are the questions analysts asked on a corpus (reviewers).

    The questions join the named benchmark as gold cases (provenance "asked", linked to their
    answers); agreed and adjudicated annotations are written into those cases.
    """

    @extend_schema(request=s.AskedTaskInput, responses={201: s.AnnotationTaskSerializer})
    def post(self, request):
        body = s.AskedTaskInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        corpus = _corpus(request.user, data["corpus"])
        permissions.require_role(request.user, corpus.team, "create annotation tasks")
        task = asked_tasks.annotation_task_over_asked(
            corpus=corpus,
            questions=data["questions"],
            benchmark_name=data["benchmark"],
            name=data["name"],
            guidelines=data["guidelines"],
            overlap=data["overlap"],
            annotators=annotation_services.members_by_username(corpus.team, data["annotators"]),
            prefill=data["prefill"],
            limit=data["limit"],
            user=request.user,
        )
        task = annotation_selectors.task_get_for_user(request.user, task.pk)
        return Response(s.AnnotationTaskSerializer(task).data, status=status.HTTP_201_CREATED)


class AnnotationTaskDetail(generics.RetrieveAPIView):
    serializer_class = s.AnnotationTaskSerializer

    def get_queryset(self):
        return annotation_selectors.tasks_for_user(self.request.user)


class AnnotationQueue(APIView):
    """Your own items in the task, pending first, with your progress."""

    @extend_schema(responses=s.QueueSerializer)
    def get(self, request, pk):
        task = annotation_selectors.task_get_for_user(request.user, pk)
        assignments = list(annotation_selectors.queue_for_user(request.user, task))
        counts = {value: 0 for value in Assignment.Status.values}
        for assignment in assignments:
            counts[assignment.status] += 1
        progress = {"total": len(assignments), **counts}
        return Response(
            s.QueueSerializer({"task": task, "progress": progress, "assignments": assignments}).data
        )


class AssignmentAnnotation(APIView):
    """Submit your annotation of one of your items (again to change it)."""

    @extend_schema(
        request=s.AnnotationInput,
        responses={201: s.AssignmentSerializer},
        description="Answerable and partial need at least one evidence sentence (ids of sentences of the "
        "benchmark's corpus, any documents); unanswerable has none.",
    )
    def post(self, request, pk):
        assignment = annotation_selectors.assignment_get_for_user(request.user, pk)
        permissions.require_role(request.user, assignment.task.benchmark.corpus.team, "annotate")
        body = s.AnnotationInput(data=request.data)
        body.is_valid(raise_exception=True)
        annotation_services.annotation_submit(assignment=assignment, **body.validated_data)
        assignment = annotation_selectors.queue_for_user(request.user, assignment.task).get(pk=assignment.pk)
        return Response(s.AssignmentSerializer(assignment).data, status=status.HTTP_201_CREATED)


class AssignmentSkip(APIView):
    """Skip one of your pending items, saying why; another annotator of the task gets it if one is free."""

    @extend_schema(
        request=s.SkipInput,
        responses={
            200: s.AssignmentSerializer,
            409: OpenApiResponse(description="You annotated it already."),
        },
    )
    def post(self, request, pk):
        assignment = annotation_selectors.assignment_get_for_user(request.user, pk)
        permissions.require_role(request.user, assignment.task.benchmark.corpus.team, "annotate")
        body = s.SkipInput(data=request.data)
        body.is_valid(raise_exception=True)
        annotation_services.assignment_skip(assignment=assignment, reason=body.validated_data["reason"])
        assignment = annotation_selectors.queue_for_user(request.user, assignment.task).get(pk=assignment.pk)
        return Response(s.AssignmentSerializer(assignment).data)


def _agreement_payload(task, measured=None) -> dict:
    measured = measured or annotation_selectors.task_agreement(task)
    figures = measured.agreement
    adjudicated = annotation_selectors.adjudications_of(task)
    cases = dict(task.cases.values_list("pk", "case_id"))
    payload = asdict(figures)
    payload["task"] = task.pk
    payload["per_item"] = [
        {
            **asdict(item),
            "case": int(item.item),
            "case_id": cases.get(int(item.item), ""),
            "adjudicated": int(item.item) in adjudicated,
        }
        for item in figures.per_item
    ]
    payload["with_suggestion"] = asdict(annotation_selectors.task_suggestion_agreement(task))
    return payload


class TaskAgreement(APIView):
    """The annotators' agreement on the task: overall, per pair of annotators and per question."""

    @extend_schema(responses=s.AgreementSerializer)
    def get(self, request, pk):
        task = annotation_selectors.task_get_for_user(request.user, pk)
        return Response(s.AgreementSerializer(_agreement_payload(task)).data)


CSV_COLUMNS = (
    "level",
    "annotators",
    "case_id",
    "items",
    "answerability_kappa",
    "answerability_alpha",
    "evidence_kappa",
    "evidence_alpha",
    "evidence_f1",
    "evidence_units",
    "labels",
    "disagreement",
    "candidate_set",
)


class TaskAgreementCsv(APIView):
    """The same figures as a CSV: one row for the task, one per pair of annotators, one per question."""

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request, pk):
        task = annotation_selectors.task_get_for_user(request.user, pk)
        payload = _agreement_payload(task)
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        stated = payload["candidate_set"]
        writer.writerow(
            {
                "level": "task",
                "annotators": " ".join(payload["annotators"]),
                "items": payload["items"],
                "answerability_kappa": payload["answerability_kappa_mean"],
                "answerability_alpha": payload["answerability_alpha"],
                "evidence_kappa": payload["evidence_kappa_mean"],
                "evidence_alpha": payload["evidence_alpha"],
                "evidence_f1": payload["evidence_f1"],
                "evidence_units": payload["evidence_units"],
                "candidate_set": stated,
            }
        )
        for pair in payload["pairs"]:
            writer.writerow(
                {
                    "level": "pair",
                    "annotators": f"{pair['annotator_a']} {pair['annotator_b']}",
                    "items": pair["items"],
                    "answerability_kappa": pair["answerability_kappa"],
                    "evidence_kappa": pair["evidence_kappa"],
                    "evidence_f1": pair["evidence_f1"],
                    "evidence_units": pair["evidence_units"],
                    "candidate_set": stated,
                }
            )
        for item in payload["per_item"]:
            writer.writerow(
                {
                    "level": "question",
                    "annotators": " ".join(item["annotators"]),
                    "case_id": item["case_id"],
                    "items": 1,
                    "evidence_alpha": item["evidence_alpha"],
                    "evidence_f1": item["evidence_f1"],
                    "evidence_units": item["candidates"],
                    "labels": " ".join(item["labels"]),
                    "disagreement": item["disagreement"],
                    "candidate_set": stated,
                }
            )
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="agreement-task-{task.pk}.csv"'
        return response


class AdjudicationQueue(APIView):
    """The questions whose annotators disagree, each annotator's answer side by side (reviewers)."""

    @extend_schema(responses=s.AdjudicationItemSerializer(many=True))
    def get(self, request, pk):
        task = annotation_selectors.task_get_for_user(request.user, pk)
        permissions.require_role(request.user, task.benchmark.corpus.team, "adjudicate")
        return Response(s.AdjudicationItemSerializer(_adjudication_items(task), many=True).data)


def _adjudication_items(task) -> list[dict]:
    measured = annotation_selectors.task_agreement(task)
    payload = _agreement_payload(task, measured)
    adjudicated = annotation_selectors.adjudications_of(task)
    questions = dict(task.cases.values_list("pk", "question"))
    items = []
    for item in payload["per_item"]:
        if not item["disagreement"]:
            continue
        rows = measured.annotations[str(item["case"])]
        items.append(
            {
                "agreement": item,
                "question": questions.get(item["case"], ""),
                "annotations": [
                    {
                        "annotator": row.assignment.annotator.get_username(),
                        "answerability": row.answerability,
                        "evidence": row.evidence,
                        "evidence_texts": row.evidence_texts,
                        "reference_answer": row.reference_answer,
                    }
                    for row in rows
                ],
                "adjudication": adjudicated.get(item["case"]),
            }
        )
    return items


class AgreedToGold(APIView):
    """Write every question the annotators agreed on (and nobody adjudicated) into its gold case."""

    @extend_schema(request=None, responses={200: s.AgreedToGoldSerializer})
    def post(self, request, pk):
        task = annotation_selectors.task_get_for_user(request.user, pk)
        permissions.require_role(request.user, task.benchmark.corpus.team, "adjudicate")
        written = annotation_services.agreed_to_gold(task=task, reviewer=request.user)
        return Response(s.AgreedToGoldSerializer({"written": written}).data)


class AdjudicationDecision(APIView):
    """Decide a question of the task: the decision becomes its gold case, with the provenance recorded."""

    @extend_schema(request=s.AdjudicationInput, responses={201: s.AdjudicationSerializer})
    def post(self, request, pk, case_pk):
        task = annotation_selectors.task_get_for_user(request.user, pk)
        permissions.require_role(request.user, task.benchmark.corpus.team, "adjudicate")
        case = selectors.gold_case_get(task.benchmark, case_pk)
        body = s.AdjudicationInput(data=request.data)
        body.is_valid(raise_exception=True)
        adjudication = annotation_services.adjudicate(
            task=task, gold_case=case, adjudicator=request.user, **body.validated_data
        )
        return Response(s.AdjudicationSerializer(adjudication).data, status=status.HTTP_201_CREATED)


class ReviewQueueSplit(APIView):
    """Split the corpus's unreviewed answers among reviewers, least confident first (reviewers).

    One reviewer per answer, balanced; answers already handed out keep their reviewer. Each
    reviewer then asks GET /api/review-queue/?assigned_to=<their username>.
    """

    @extend_schema(request=s.ReviewSplitInput, responses={200: s.ReviewSplitSerializer})
    def post(self, request):
        body = s.ReviewSplitInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        key = data["corpus"]
        corpus = (
            corpus_get_for_user(request.user, pk=int(key))
            if key.isdigit()
            else corpus_get_for_user(request.user, name=key)
        )
        permissions.require_role(request.user, corpus.team, "split the review queue")
        assigned = annotation_services.review_queue_split(
            corpus=corpus,
            reviewers=annotation_services.members_by_username(corpus.team, data["reviewers"]),
            user=request.user,
            limit=data["limit"],
        )
        progress = annotation_selectors.review_progress(corpus)
        return Response(s.ReviewSplitSerializer({"assigned": assigned, "progress": progress}).data)


class ReviewProgress(APIView):
    """Per reviewer of a corpus's split review queue: answers assigned, reviewed, still waiting."""

    @extend_schema(
        parameters=[OpenApiParameter("corpus", str, required=True, description="Corpus id or name.")],
        responses=s.ReviewProgressSerializer(many=True),
    )
    def get(self, request):
        key = request.query_params.get("corpus", "")
        corpus = (
            corpus_get_for_user(request.user, pk=int(key))
            if key.isdigit()
            else corpus_get_for_user(request.user, name=key)
        )
        return Response(
            s.ReviewProgressSerializer(annotation_selectors.review_progress(corpus), many=True).data
        )
