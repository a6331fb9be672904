"""The site's URLs plus two views that fail on purpose, for the error-page tests."""

from django.core.exceptions import PermissionDenied
from django.urls import path

from leaderboard import urls as site


def boom(request):
    raise RuntimeError("a bug, on purpose")


def denied(request):
    raise PermissionDenied


urlpatterns = [
    path("test-errors/boom/", boom),
    path("test-errors/denied/", denied),
    path("api/test-errors/boom/", boom),
    *site.urlpatterns,
]
handler400, handler403, handler500 = site.handler400, site.handler403, site.handler500
