"""The API routes the review tests need, independent of what else the site mounts."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("documents.api.urls")),
    path("api/", include("qa.api.urls")),
    path("api/", include("review.api.urls")),
]
