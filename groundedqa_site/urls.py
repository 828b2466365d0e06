from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from groundedqa_site import health

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/", include("documents.api.urls")),
    path("api/", include("qa.api.urls")),
    path("api/", include("review.api.urls")),
    path("", include("ui.urls")),
]

# Under /api/ every error answers JSON, an unmatched URL (a negative id, a typo) included;
# elsewhere the site's own pages (templates/404.html ...), never a debug page unless DEBUG=1.
handler404 = "groundedqa_site.api.not_found"
handler400 = "groundedqa_site.api.bad_request"
handler403 = "groundedqa_site.api.permission_denied"
handler500 = "groundedqa_site.api.server_error"
