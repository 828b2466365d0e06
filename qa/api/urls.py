from django.urls import path

from qa.api import views

urlpatterns = [
    path("questions/", views.QuestionListCreate.as_view(), name="api-question-list"),
    path("questions/<int:pk>/", views.QuestionDetail.as_view(), name="api-question-detail"),
    path("presets/", views.PresetList.as_view(), name="api-preset-list"),
]
