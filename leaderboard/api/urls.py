"""The routes under ``/api/``; anything else there is a JSON 404."""

from django.urls import path, re_path

from leaderboard import converters  # noqa: F401 (registers <id:>)
from leaderboard.api.views import (
    benchmark,
    benchmarks,
    not_found,
    per_need,
    schema,
    submission,
    submit,
)

urlpatterns = [
    path("benchmarks/", benchmarks, name="api_benchmarks"),
    path("benchmarks/<slug:slug>/", benchmark, name="api_benchmark"),
    path("benchmarks/<slug:slug>/submissions/", submit, name="api_submit"),
    path("submissions/<id:submission_id>/", submission, name="api_submission"),
    path("submissions/<id:submission_id>/per-need/", per_need, name="api_per_need"),
    path("schema/", schema, name="api_schema"),
    # Anything else under /api/ is a JSON 404 (not the HTML page, not a slash redirect).
    re_path(r"^(?P<rest>.*)$", not_found, name="api_not_found"),
]
