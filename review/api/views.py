"""REST endpoints for reviews, gold cases, benchmarks and evaluation runs.

Each view parses input, calls one service or selector, and shapes the output.
Every object is reached through a team-scoped selector: another team's answer,
benchmark or run is a 404.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from documents import permissions
from documents.selectors import corpus_get_for_user, document_get_for_user
from review import selectors
from review.api import serializers as s
from review.errors import ReviewConflict
from review.models import Benchmark
from review.services import benchmarks as benchmark_services
from review.services import evaluation as evaluation_services
from review.services import gold as gold_services
from review.services import reviews as review_services


def _history(answer) -> dict:
    reviews = list(selectors.review_history(answer))
    return {
        "answer": answer.pk,
        "version": len(reviews),
        "current": reviews[-1] if reviews else None,
        "content": selectors.answer_current_content(answer),
        "reviews": reviews,
    }


class AnswerReviews(APIView):
    """An answer's review history (GET) and a new decision on it (POST)."""

    @extend_schema(responses=s.ReviewHistorySerializer)
    def get(self, request, pk):
        answer = selectors.answer_get_for_user(request.user, pk)
        return Response(s.ReviewHistorySerializer(_history(answer)).data)

    @extend_schema(
        request=s.ReviewInput,
        responses={
            201: s.ReviewSerializer,
            409: OpenApiResponse(s.ReviewConflictSerializer, "Stale base_version"),
        },
    )
    def post(self, request, pk):
        answer = selectors.answer_get_for_user(request.user, pk)
        permissions.require_role(request.user, answer.question.corpus.team, "review answers")
        body = s.ReviewInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        sentences = data.get("sentences")
        try:
            review = review_services.review_decide(
                answer=answer,
                reviewer=request.user,
                action=data["action"],
                base_version=data["base_version"],
                reason=data.get("reason", ""),
                comment=data.get("comment", ""),
                text=data.get("text"),
                sentences=None
                if sentences is None
                else [
                    review_services.CorrectionSentence(x["text"], tuple(x["citations"])) for x in sentences
                ],
                refused=data.get("refused"),
            )
        except ReviewConflict as conflict:
            payload = {
                "detail": str(conflict),
                "base_version": conflict.base_version,
                "current_version": conflict.current_version,
                "newer": conflict.newer,
            }
            return Response(s.ReviewConflictSerializer(payload).data, status=status.HTTP_409_CONFLICT)
        review = selectors.review_history(answer).get(pk=review.pk)
        return Response(s.ReviewSerializer(review).data, status=status.HTTP_201_CREATED)


class ReviewQueue(generics.ListAPIView):
    """Answers to review: ?status=unreviewed|flagged|accepted|corrected|reviewed&corpus=&preset=&reviewer=
    &order=oldest|confidence"""

    serializer_class = s.QueueItemSerializer

    @extend_schema(parameters=[s.QueueQuery])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = s.QueueQuery(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        filters = dict(query.validated_data)
        order = filters.pop("order", "oldest")
        return selectors.review_queue(
            self.request.user, **filters, least_confident_first=order == "confidence"
        )


class AnswerGold(APIView):
    """Make a reviewed answer a gold case of a benchmark (created on the answer's corpus if missing)."""

    @extend_schema(request=s.GoldFromAnswerInput, responses={201: s.GoldCaseDetailSerializer})
    def post(self, request, pk):
        answer = selectors.answer_get_for_user(request.user, pk)
        permissions.require_role(request.user, answer.question.corpus.team, "edit gold cases")
        body = s.GoldFromAnswerInput(data=request.data)
        body.is_valid(raise_exception=True)
        case = benchmark_services.gold_case_add(
            benchmark_name=body.validated_data["benchmark"],
            corpus=answer.question.corpus,
            split=body.validated_data["split"],
            user=request.user,
            answer=answer,
        )
        case = selectors.gold_case_get(case.benchmark, case.pk)
        return Response(s.GoldCaseDetailSerializer(case).data, status=status.HTTP_201_CREATED)


class BenchmarkList(generics.ListCreateAPIView):
    serializer_class = s.BenchmarkSerializer

    def get_queryset(self):
        return selectors.benchmarks_for_user(self.request.user)

    def perform_create(self, serializer):
        corpus = corpus_get_for_user(self.request.user, pk=serializer.validated_data["corpus_id"])
        permissions.require_role(self.request.user, corpus.team, "edit benchmarks")
        benchmark = benchmark_services.benchmark_create(
            name=serializer.validated_data["name"],
            corpus=corpus,
            user=self.request.user,
            description=serializer.validated_data.get("description", ""),
        )
        serializer.instance = selectors.benchmarks_for_user(self.request.user).get(pk=benchmark.pk)


class BenchmarkDetail(APIView):
    @extend_schema(responses=s.BenchmarkSerializer)
    def get(self, request, pk):
        benchmark = selectors.benchmark_get_for_user(request.user, pk)
        return Response(s.BenchmarkSerializer(benchmark).data)


class BenchmarkCases(generics.ListAPIView):
    """A benchmark's gold cases (?split=), or a new annotated case (POST)."""

    serializer_class = s.GoldCaseSerializer

    def get_queryset(self):
        benchmark = selectors.benchmark_get_for_user(self.request.user, self.kwargs["pk"])
        return selectors.benchmark_cases(benchmark, split=self.request.query_params.get("split") or None)

    @extend_schema(request=s.AnnotateInput, responses={201: s.GoldCaseDetailSerializer})
    def post(self, request, pk):
        benchmark: Benchmark = selectors.benchmark_get_for_user(request.user, pk)
        permissions.require_role(request.user, benchmark.corpus.team, "edit gold cases")
        body = s.AnnotateInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        document = document_get_for_user(request.user, data["document"])
        case = gold_services.gold_case_annotate(
            benchmark=benchmark,
            document=document,
            question=data["question"],
            evidence_sentence_ids=data["evidence_sentence_ids"],
            reference_answer=data["reference_answer"],
            answerable=data["answerable"],
            split=data["split"],
            user=request.user,
            rubric=data.get("rubric"),
        )
        case = selectors.gold_case_get(benchmark, case.pk)
        return Response(s.GoldCaseDetailSerializer(case).data, status=status.HTTP_201_CREATED)


class BenchmarkCaseDetail(APIView):
    @extend_schema(responses=s.GoldCaseDetailSerializer)
    def get(self, request, pk, case_pk):
        benchmark = selectors.benchmark_get_for_user(request.user, pk)
        return Response(s.GoldCaseDetailSerializer(selectors.gold_case_get(benchmark, case_pk)).data)


class EvaluationList(generics.ListAPIView):
    """Evaluation runs (GET), or start one as a background job (POST -> 202 with a status URL)."""

    serializer_class = s.EvaluationRunSerializer

    def get_queryset(self):
        return selectors.runs_for_user(self.request.user)

    @extend_schema(request=s.EvaluationRunInput, responses={202: s.EvaluationRunSerializer})
    def post(self, request):
        body = s.EvaluationRunInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        benchmark = selectors.benchmark_get_for_user(request.user, data["benchmark"])
        permissions.require_role(request.user, benchmark.corpus.team, "run evaluations")
        run = evaluation_services.evaluation_run_create(
            benchmark=benchmark,
            preset=data["preset"],
            user=request.user,
            split=data["split"],
            limit=data["limit"],
        )
        run = selectors.run_get_for_user(request.user, run.pk)
        body = s.EvaluationRunSerializer(run, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["status_url"]})


class EvaluationDetail(generics.RetrieveAPIView):
    serializer_class = s.EvaluationRunSerializer

    def get_queryset(self):
        return selectors.runs_for_user(self.request.user)


class EvaluationCases(generics.ListAPIView):
    serializer_class = s.EvaluationCaseResultSerializer

    def get_queryset(self):
        run = selectors.run_get_for_user(self.request.user, self.kwargs["pk"])
        return selectors.run_case_results(run)
