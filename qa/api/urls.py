from django.urls import path

from qa.api import intrinsics, views

urlpatterns = [
    path("questions/", views.QuestionListCreate.as_view(), name="api-question-list"),
    path("questions/<int:pk>/", views.QuestionDetail.as_view(), name="api-question-detail"),
    path("presets/", views.PresetList.as_view(), name="api-preset-list"),
    path("corpora/<int:pk>/cite/", intrinsics.CiteText.as_view(), name="api-corpus-cite"),
    path(
        "corpora/<int:pk>/answerability/", intrinsics.Answerability.as_view(), name="api-corpus-answerability"
    ),
    path(
        "corpora/<int:pk>/context-relevance/",
        intrinsics.ContextRelevance.as_view(),
        name="api-corpus-context-relevance",
    ),
    path("corpora/<int:pk>/answer-check/", intrinsics.AnswerCheck.as_view(), name="api-corpus-answer-check"),
    path("team-presets/", views.TeamPresetListCreate.as_view(), name="api-team-preset-list"),
    path("team-presets/<int:pk>/", views.TeamPresetDetail.as_view(), name="api-team-preset-detail"),
]
