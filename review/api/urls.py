"""Review API routes; the site includes them under /api/."""

from django.urls import path

from review.api import annotation, views

urlpatterns = [
    path("answers/<int:pk>/reviews/", views.AnswerReviews.as_view(), name="api-answer-reviews"),
    path("answers/<int:pk>/gold/", views.AnswerGold.as_view(), name="api-answer-gold"),
    path("review-queue/", views.ReviewQueue.as_view(), name="api-review-queue"),
    path("review-queue/split/", annotation.ReviewQueueSplit.as_view(), name="api-review-queue-split"),
    path("review-queue/progress/", annotation.ReviewProgress.as_view(), name="api-review-queue-progress"),
    path("benchmarks/", views.BenchmarkList.as_view(), name="api-benchmark-list"),
    path("benchmarks/<int:pk>/", views.BenchmarkDetail.as_view(), name="api-benchmark-detail"),
    path("benchmarks/<int:pk>/cases/", views.BenchmarkCases.as_view(), name="api-benchmark-cases"),
    path(
        "benchmarks/<int:pk>/cases/<int:case_pk>/",
        views.BenchmarkCaseDetail.as_view(),
        name="api-benchmark-case",
    ),
    path("annotation-tasks/", annotation.AnnotationTaskList.as_view(), name="api-annotation-task-list"),
    path(
        "annotation-tasks/from-questions/",
        annotation.AskedQuestionsTask.as_view(),
        name="api-annotation-task-from-questions",
    ),
    path("annotation-tasks/<int:pk>/", annotation.AnnotationTaskDetail.as_view(), name="api-annotation-task"),
    path(
        "annotation-tasks/<int:pk>/queue/", annotation.AnnotationQueue.as_view(), name="api-annotation-queue"
    ),
    path(
        "annotation-tasks/<int:pk>/agreement/",
        annotation.TaskAgreement.as_view(),
        name="api-annotation-agreement",
    ),
    path(
        "annotation-tasks/<int:pk>/agreement.csv",
        annotation.TaskAgreementCsv.as_view(),
        name="api-annotation-agreement-csv",
    ),
    path(
        "annotation-tasks/<int:pk>/adjudication/",
        annotation.AdjudicationQueue.as_view(),
        name="api-adjudication-queue",
    ),
    path(
        "annotation-tasks/<int:pk>/adjudication/<int:case_pk>/",
        annotation.AdjudicationDecision.as_view(),
        name="api-adjudication-decision",
    ),
    path(
        "annotation-tasks/<int:pk>/agreed/", annotation.AgreedToGold.as_view(), name="api-annotation-agreed"
    ),
    path(
        "assignments/<int:pk>/annotation/",
        annotation.AssignmentAnnotation.as_view(),
        name="api-assignment-annotation",
    ),
    path("assignments/<int:pk>/skip/", annotation.AssignmentSkip.as_view(), name="api-assignment-skip"),
    path("evaluations/", views.EvaluationList.as_view(), name="api-evaluation-list"),
    path("evaluations/<int:pk>/", views.EvaluationDetail.as_view(), name="api-evaluation-detail"),
    path("evaluations/<int:pk>/cases/", views.EvaluationCases.as_view(), name="api-evaluation-cases"),
]
