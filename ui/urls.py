from django.contrib.auth import views as auth_views
from django.urls import path

from ui.views import (
    annotate,
    ask,
    audit,
    benchmarks,
    compare,
    corpora,
    corpus_analysis,
    documents,
    evaluate,
    history,
    intrinsics,
    operations,
    presets,
    review,
    signin,
)

urlpatterns = [
    path("login/", signin.ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", ask.ask, name="ask"),
    path("questions/<int:pk>/", ask.question, name="question"),
    path("questions/<int:pk>/turn/", ask.question_turn, name="question-turn"),
    path("questions/<int:pk>/trace/", ask.question_trace, name="question-trace"),
    path("documents/<int:pk>/", documents.document, name="document"),
    path("documents/<int:pk>/pick/", documents.document_pick, name="document-pick"),
    path("documents/<int:pk>/delete/", corpora.document_delete, name="document-delete"),
    path("history/", history.history, name="history"),
    path("audit/", audit.audit_trail, name="audit"),
    path("operations/", operations.operations_page, name="operations"),
    path("corpora/", corpora.corpora, name="corpora"),
    path("corpora/<int:pk>/", corpora.corpus, name="corpus"),
    path("corpora/<int:pk>/analysis/", corpus_analysis.corpus_analysis_page, name="corpus-analysis"),
    path("corpora/<int:pk>/intrinsics/", intrinsics.corpus_intrinsics, name="corpus-intrinsics"),
    path("corpora/<int:pk>/delete/", corpora.corpus_delete, name="corpus-delete"),
    path("corpora/<int:pk>/reembed/", corpora.corpus_reembed, name="corpus-reembed"),
    path("review/", review.review_queue, name="review-queue"),
    path("review/answers/<int:pk>/", review.review_answer, name="review-answer"),
    path("annotate/", annotate.annotate, name="annotate"),
    path("benchmarks/<int:pk>/", benchmarks.benchmark, name="benchmark"),
    path("benchmarks/<int:benchmark_pk>/cases/<int:pk>/", benchmarks.gold_case, name="gold-case"),
    path("presets/", presets.team_presets, name="team-presets"),
    path("presets/<int:pk>/delete/", presets.team_preset_remove, name="team-preset-delete"),
    path("evaluate/", evaluate.evaluate, name="evaluate"),
    path("evaluate/compare/", compare.compare_runs, name="evaluation-compare"),
    path("evaluate/runs/<int:pk>/", evaluate.evaluation_run, name="evaluation-run"),
    path(
        "evaluate/runs/<int:pk>/progress/", evaluate.evaluation_run_progress, name="evaluation-run-progress"
    ),
]
