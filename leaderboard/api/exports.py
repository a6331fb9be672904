"""Downloads: the leaderboard (CSV and JSON) and a run's per-need values (CSV), the same
files the pages give, as the token's user sees them. ``reading.exports`` writes them;
these views check the input first so that every refusal is a JSON error, and answer
the leaderboard's validators (ETag, Last-Modified) on its files.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request

from leaderboard.api.base import ApiView, conditional
from leaderboard.api.lenses import ExportQuerySerializer, LensQuerySerializer, scored_run
from leaderboard.api.schema import errors
from leaderboard.api.views import board_for
from leaderboard.reading.exports import leaderboard_file, per_need_file
from leaderboard.reading.visibility import visible_benchmark


class FileAnyway(BaseContentNegotiation):
    """Downloads answer their one type whatever ``Accept`` says; errors are JSON."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class LeaderboardExport(ApiView):
    """``leaderboard.csv`` and ``leaderboard.json``: the page's downloads."""

    content_negotiation_class = FileAnyway

    fmt = "json"

    def get(self, request: Request, slug: str):
        query = self.query(ExportQuerySerializer)
        benchmark = visible_benchmark(request, slug)
        board = board_for(request, benchmark, query.get("measure"))  # unknown: a JSON 400
        export = leaderboard_file(board, self.fmt, query["correction"])
        return conditional_file(request, export, board.lens)


def conditional_file(request: Request, response, lens):
    """The export with the leaderboard's validators (``conditional``) on its bytes."""
    checked = conditional(request, {"bytes": response.content.decode()}, lens)
    if checked.status_code == 304:
        return checked
    for header in ("ETag", "Last-Modified", "Cache-Control", "Vary"):
        response[header] = checked[header]
    return response


class LeaderboardJson(LeaderboardExport):
    fmt = "json"

    @extend_schema(
        operation_id="exportLeaderboardJson",
        summary="The leaderboard as the page's JSON download (every digit)",
        parameters=[ExportQuerySerializer],
        responses={
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT),
            304: OpenApiResponse(description="Not modified."),
            **errors(400, 401, 403, 404, 429),
        },
    )
    def get(self, request: Request, slug: str):
        return super().get(request, slug)


class LeaderboardCsv(LeaderboardExport):
    fmt = "csv"

    @extend_schema(
        operation_id="exportLeaderboardCsv",
        summary="The leaderboard as CSV (text cells escaped against formula injection)",
        parameters=[ExportQuerySerializer],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR),
            304: OpenApiResponse(description="Not modified."),
            **errors(400, 401, 403, 404, 429),
        },
    )
    def get(self, request: Request, slug: str):
        return super().get(request, slug)


class PerNeedCsv(ApiView):
    content_negotiation_class = FileAnyway

    @extend_schema(
        operation_id="exportPerNeedCsv",
        summary="A scored run's per-need values as CSV",
        parameters=[LensQuerySerializer],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR),
            **errors(400, 401, 403, 404, 429),
        },
    )
    def get(self, request: Request, submission_id: int):
        self.query(LensQuerySerializer)
        run, result = scored_run(request, submission_id)
        return per_need_file(run, result)
