"""Review API routes; the site includes them under /api/."""

from django.urls import path

from review.api import views

urlpatterns = [
    path("answers/<int:pk>/reviews/", views.AnswerReviews.as_view(), name="api-answer-reviews"),
    path("answers/<int:pk>/gold/", views.AnswerGold.as_view(), name="api-answer-gold"),
    path("review-queue/", views.ReviewQueue.as_view(), name="api-review-queue"),
    path("benchmarks/", views.BenchmarkList.as_view(), name="api-benchmark-list"),
    path("benchmarks/<int:pk>/", views.BenchmarkDetail.as_view(), name="api-benchmark-detail"),
    path("benchmarks/<int:pk>/cases/", views.BenchmarkCases.as_view(), name="api-benchmark-cases"),
    path(
        "benchmarks/<int:pk>/cases/<int:case_pk>/",
        views.BenchmarkCaseDetail.as_view(),
        name="api-benchmark-case",
    ),
    path("evaluations/", views.EvaluationList.as_view(), name="api-evaluation-list"),
    path("evaluations/<int:pk>/", views.EvaluationDetail.as_view(), name="api-evaluation-detail"),
    path("evaluations/<int:pk>/cases/", views.EvaluationCases.as_view(), name="api-evaluation-cases"),
]
