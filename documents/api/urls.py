from django.urls import path

from documents.api import views

urlpatterns = [
    path("corpora/", views.CorpusListCreate.as_view(), name="api-corpus-list"),
    path("corpora/<int:pk>/", views.CorpusDetail.as_view(), name="api-corpus-detail"),
    path("corpora/<int:pk>/embedding/", views.CorpusEmbedding.as_view(), name="api-corpus-embedding"),
    path("corpora/<int:pk>/documents/", views.CorpusDocuments.as_view(), name="api-corpus-documents"),
    path("documents/<int:pk>/", views.DocumentDetail.as_view(), name="api-document-detail"),
]
