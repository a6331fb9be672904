"""The site's error pages: ``handler400``, ``handler403``, ``handler404`` and
``handler500`` (set in ``leaderboard/urls.py``). Under /api/ each answers JSON in the
API's shape (:func:`leaderboard.reading.visibility.error_body`), so a path no route matches, or
a 404 raised by a view that is not DRF's (the schema's, the docs'), is JSON there as
well; elsewhere Django's own handlers render the site's templates (``404.html`` ...).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from leaderboard.reading.visibility import error_body


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("Bad request."), status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("You may not do this."), status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(
            error_body("No such endpoint; the routes are listed at /api/schema/."), status=404
        )
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """A bug (the error is logged by Django with its traceback, as for any page)."""
    if _is_api(request):
        message = "Internal error; it has been logged. Please try again later."
        return JsonResponse(error_body(message), status=500)
    return defaults.server_error(request)
