"""URLs as DESIGN.md fixes them: readers' pages, the upload flow, accounts, admin, API."""

from django.contrib import admin
from django.urls import include, path

from leaderboard import (
    converters,  # noqa: F401 (registers <id:>)
    probes,
)
from leaderboard.accounts import tokens
from leaderboard.accounts import views as accounts
from leaderboard.admin_scoping import view_on_site
from leaderboard.campaigns import views as campaign_views
from leaderboard.pages import benchmarks, campaigns, comparisons, exports, health, runs
from leaderboard.uploads import owners
from leaderboard.uploads import views as uploads

urlpatterns = [
    path("", benchmarks.home, name="home"),
    path("benchmarks/<slug:slug>/", benchmarks.leaderboard, name="leaderboard"),
    path(
        "benchmarks/<slug:slug>/leaderboard.<str:fmt>",
        exports.leaderboard_export,
        name="leaderboard_export",
    ),
    path("benchmarks/<slug:slug>/submit/", uploads.submit, name="submit"),
    path("benchmarks/<slug:slug>/final-runs/", campaign_views.final_runs, name="final_runs"),
    path("benchmarks/<slug:slug>/pool/", campaign_views.pool_page, name="pool"),
    path("benchmarks/<slug:slug>/summary/", campaign_views.summary_page, name="campaign_summary"),
    path(
        "benchmarks/<slug:slug>/pool/<id:pk>/export.qrels",
        campaign_views.pool_export,
        name="pool_export",
    ),
    path("benchmarks/<slug:slug>/compare/", comparisons.compare_pick, name="compare_pick"),
    path("benchmarks/<slug:slug>/compare/<id:a>/<id:b>/", comparisons.compare, name="compare"),
    path(
        "benchmarks/<slug:slug>/compare/<id:a>/<id:b>/comparison.json",
        exports.compare_json,
        name="compare_json",
    ),
    path(
        "benchmarks/<slug:slug>/compare/<id:a>/<id:b>/plots/<str:name>.<str:fmt>",
        comparisons.compare_plot,
        name="compare_plot",
    ),
    path("benchmarks/<slug:slug>/significance/", comparisons.significance, name="significance"),
    path("benchmarks/<slug:slug>/health/", health.benchmark_health, name="benchmark_health"),
    path("submissions/<id:pk>/", runs.submission, name="submission"),
    path(
        "submissions/<id:pk>/plots/<str:name>.<str:fmt>",
        runs.submission_plot,
        name="submission_plot",
    ),
    path("submissions/<id:pk>/results/", campaigns.run_results_page, name="run_results"),
    path(
        "submissions/<id:pk>/results.csv",
        campaigns.run_results_page,
        {"fmt": "csv"},
        name="run_results_csv",
    ),
    path(
        "submissions/<id:pk>/results.json",
        campaigns.run_results_page,
        {"fmt": "json"},
        name="run_results_json",
    ),
    path("submissions/<id:pk>/status/", uploads.submission_status, name="submission_status"),
    path("submissions/<id:pk>/edit/", owners.edit_run, name="run_edit"),
    path("submissions/<id:pk>/hide/", owners.confirm_action, {"action": "hide"}, name="run_hide"),
    path(
        "submissions/<id:pk>/unhide/",
        owners.confirm_action,
        {"action": "unhide"},
        name="run_unhide",
    ),
    path(
        "submissions/<id:pk>/withdraw/",
        owners.confirm_action,
        {"action": "withdraw"},
        name="run_withdraw",
    ),
    path("submissions/<id:pk>/per-need.csv", exports.submission_csv, name="submission_csv"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/profile/", accounts.account, name="account"),
    path("accounts/runs/", uploads.my_submissions, name="my_submissions"),
    path("accounts/tokens/", tokens.tokens, name="api_tokens"),
    path("accounts/tokens/<id:pk>/revoke/", tokens.revoke, name="api_token_revoke"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include("leaderboard.api.urls")),
    # before the admin's own, which answers any staff user for any object
    path("admin/r/<path:content_type_id>/<path:object_id>/", admin.site.admin_view(view_on_site)),
    path("admin/", admin.site.urls),
    path("health/", probes.probe, name="health"),
]

# Errors answer JSON under /api/ (even a bug's 500) and the site's HTML pages elsewhere.
handler400 = "leaderboard.error_pages.bad_request"
handler403 = "leaderboard.error_pages.permission_denied"
handler404 = "leaderboard.error_pages.page_not_found"
handler500 = "leaderboard.error_pages.server_error"
