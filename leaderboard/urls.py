"""URLs as DESIGN.md fixes them: readers' pages, the upload flow, accounts, admin."""

from django.contrib import admin
from django.urls import include, path

from leaderboard import (  # noqa: F401 (converters registers <id:>)
    accounts,
    comparison_views,
    converters,
    exports,
    tokens,
    uploads,
    views,
)

urlpatterns = [
    path("", views.home, name="home"),
    path("benchmarks/<slug:slug>/", views.leaderboard, name="leaderboard"),
    path(
        "benchmarks/<slug:slug>/leaderboard.<str:fmt>",
        exports.leaderboard_export,
        name="leaderboard_export",
    ),
    path("benchmarks/<slug:slug>/submit/", uploads.submit, name="submit"),
    path("benchmarks/<slug:slug>/compare/", comparison_views.compare_pick, name="compare_pick"),
    path("benchmarks/<slug:slug>/compare/<id:a>/<id:b>/", comparison_views.compare, name="compare"),
    path(
        "benchmarks/<slug:slug>/compare/<id:a>/<id:b>/comparison.json",
        exports.compare_json,
        name="compare_json",
    ),
    path(
        "benchmarks/<slug:slug>/significance/", comparison_views.significance, name="significance"
    ),
    path("submissions/<id:pk>/", views.submission, name="submission"),
    path("submissions/<id:pk>/status/", uploads.submission_status, name="submission_status"),
    path("submissions/<id:pk>/per-need.csv", exports.submission_csv, name="submission_csv"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/runs/", uploads.my_submissions, name="my_submissions"),
    path("accounts/tokens/", tokens.tokens, name="api_tokens"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include("leaderboard.api")),
    path("admin/", admin.site.urls),
]
