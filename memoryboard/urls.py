from django.conf import settings
from django.conf.urls.static import static
from django.contrib import admin
from django.templatetags.static import static as static_url
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularSwaggerView

from memoryboard.api.schema_docs import SchemaView
from memoryboard.mcp_server.http import mcp_endpoint

urlpatterns = [
    # Browsers ask every page for /favicon.ico (the admin and the API docs too): answer it instead of a 404.
    path("favicon.ico", RedirectView.as_view(url=static_url("memoryboard/favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/v1/", include("memoryboard.api.urls")),
    path("v1/", include("memoryboard.api.openai_urls")),
    re_path(r"^mcp/?$", mcp_endpoint, name="mcp"),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("memoryboard.web.urls")),
]

handler400 = "memoryboard.web.errors.bad_request"
handler403 = "memoryboard.web.errors.permission_denied"
handler404 = "memoryboard.web.errors.page_not_found"
handler500 = "memoryboard.web.errors.server_error"

if settings.DEBUG:
    urlpatterns += static(settings.STATIC_URL, document_root=settings.STATIC_ROOT)
