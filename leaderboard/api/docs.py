"""``/api/schema/`` and ``/api/docs/``.

The schema is drf-spectacular's, generated from the views (OpenAPI 3.0.3, JSON); its
errors are plain JSON like every other error under /api/.

The docs are Swagger UI: drf-spectacular's split view (the page and its start-up script are two requests, so no
inline script) with Swagger UI's files from drf-spectacular-sidecar: nothing from a CDN,
and the page runs under the site's strict Content-Security-Policy. Our template only
moves the page's few inline style rules into ``static/css/api-docs.css``. The one
loosening, on this page only: Swagger UI draws its icons as ``data:`` SVG images, so
``img-src`` allows ``data:`` here (an image cannot run script).
"""

from csp.decorators import csp_update
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerSplitView
from rest_framework.renderers import JSONRenderer


class Docs(SpectacularSwaggerSplitView):
    template_name = "api/swagger_ui.html"
    title = "API: ranked retrieval leaderboards"

    def finalize_response(self, request, response, *args, **kwargs):
        if request.method == "OPTIONS":  # the view's description, as JSON: no template
            request.accepted_renderer, request.accepted_media_type = (
                JSONRenderer(),
                "application/json",
            )
        return super().finalize_response(request, response, *args, **kwargs)


docs = csp_update({"img-src": ["'self'", "data:"]})(Docs.as_view(url_name="api_schema"))


class Schema(SpectacularJSONAPIView):
    def finalize_response(self, request, response, *args, **kwargs):
        if response.status_code >= 400:  # the error body, not an OpenAPI document
            request.accepted_renderer, request.accepted_media_type = (
                JSONRenderer(),
                "application/json",
            )
        return super().finalize_response(request, response, *args, **kwargs)
