"""The routes under ``/api/``; anything else there is a JSON 404."""

from django.urls import path, re_path

from leaderboard import converters  # noqa: F401 (registers <id:>)
from leaderboard.api import (
    campaigns,
    comparisons,
    exports,
    organizers,
    owners,
    phases,
    splits,
    submit,
    tokens,
    uploads,
    views,
)
from leaderboard.api.docs import Schema, docs
from leaderboard.api.errors import not_found

urlpatterns = [
    path("benchmarks/", organizers.BenchmarkListCreate.as_view(), name="api_benchmarks"),
    path(
        "benchmarks/<slug:slug>/", organizers.BenchmarkDetailUpdate.as_view(), name="api_benchmark"
    ),
    path("benchmarks/<slug:slug>/phases/", phases.Phases.as_view(), name="api_phases"),
    path(
        "benchmarks/<slug:slug>/phases/<id:phase_id>/",
        phases.PhaseDetail.as_view(),
        name="api_phase",
    ),
    path("benchmarks/<slug:slug>/submissions/", submit.Submit.as_view(), name="api_submit"),
    path("benchmarks/<slug:slug>/uploads/", uploads.StartUpload.as_view(), name="api_uploads"),
    path(
        "uploads/<str:token>/confirm/",
        uploads.ConfirmUpload.as_view(),
        name="api_upload_confirm",
    ),
    path("benchmarks/<slug:slug>/quota/", views.Quota.as_view(), name="api_quota"),
    path(
        "benchmarks/<slug:slug>/compare/<id:a>/<id:b>/",
        comparisons.Compare.as_view(),
        name="api_compare",
    ),
    path(
        "benchmarks/<slug:slug>/significance/",
        comparisons.Significance.as_view(),
        name="api_significance",
    ),
    path(
        "benchmarks/<slug:slug>/leaderboard.json",
        exports.LeaderboardJson.as_view(),
        name="api_leaderboard_json",
    ),
    path(
        "benchmarks/<slug:slug>/leaderboard.csv",
        exports.LeaderboardCsv.as_view(),
        name="api_leaderboard_csv",
    ),
    path("benchmarks/<slug:slug>/needs/", organizers.Needs.as_view(), name="api_needs"),
    path(
        "benchmarks/<slug:slug>/judgments/",
        organizers.JudgmentsUpload.as_view(),
        name="api_judgments",
    ),
    path(
        "benchmarks/<slug:slug>/final-runs/",
        campaigns.FinalRuns.as_view(),
        name="api_final_runs",
    ),
    path("benchmarks/<slug:slug>/pools/", campaigns.Pools.as_view(), name="api_pools"),
    path(
        "benchmarks/<slug:slug>/summary/",
        campaigns.CampaignSummary.as_view(),
        name="api_campaign_summary",
    ),
    path(
        "benchmarks/<slug:slug>/pools/<id:pool_id>/",
        campaigns.PoolDetail.as_view(),
        name="api_pool",
    ),
    path(
        "benchmarks/<slug:slug>/pools/<id:pool_id>/export/",
        campaigns.PoolExport.as_view(),
        name="api_pool_export",
    ),
    path("benchmarks/<slug:slug>/split/", splits.Split.as_view(), name="api_split"),
    path("benchmarks/<slug:slug>/rescore/", organizers.Rescore.as_view(), name="api_rescore"),
    path("submissions/", views.SubmissionList.as_view(), name="api_submissions"),
    path(
        "submissions/<id:submission_id>/", views.SubmissionDetail.as_view(), name="api_submission"
    ),
    path(
        "submissions/<id:submission_id>/withdraw/",
        owners.Withdraw.as_view(),
        name="api_withdraw",
    ),
    path("submissions/<id:submission_id>/hide/", owners.Hide.as_view(), name="api_hide"),
    path("submissions/<id:submission_id>/unhide/", owners.Unhide.as_view(), name="api_unhide"),
    path(
        "submissions/<id:submission_id>/results/",
        campaigns.RunResults.as_view(),
        name="api_run_results",
    ),
    path("submissions/<id:submission_id>/per-need/", views.PerNeed.as_view(), name="api_per_need"),
    path(
        "submissions/<id:submission_id>/per-need.csv",
        exports.PerNeedCsv.as_view(),
        name="api_per_need_csv",
    ),
    path("tokens/", tokens.Tokens.as_view(), name="api_tokens_list"),
    path("tokens/<id:token_id>/", tokens.TokenDetail.as_view(), name="api_token"),
    path("schema/", Schema.as_view(), name="api_schema"),
    path("docs/", docs, name="api_docs"),
    # Anything else under /api/ is a JSON 404 (not the HTML page, not a slash redirect).
    re_path(r"^(?P<rest>.*)$", not_found, name="api_not_found"),
]
