"""Presigned uploads from the API: a run file goes from the client straight into the
bucket (``leaderboard/uploads/presigned.py`` does the work).

1. ``POST /api/benchmarks/<slug>/uploads/`` with the file's name and size: the URL to
   ``PUT`` the bytes to (with the ``headers`` given), its expiry and a ``token``. 501 when
   files are not in a bucket: post the file to ``submissions/`` instead.
2. ``PUT`` the file to the URL (the bucket answers, not this site).
3. ``POST /api/uploads/<token>/confirm/``: the file is checked as a posted one and the run
   answered as a submit answers it (201 and ``Location``; again the same run for a
   confirmation sent twice). Every refusal keeps ``UploadRefused``'s status: 409 while
   nothing was PUT yet, 410 once expired, 400/413/429 for what the form refuses.

A start sent with an ``Idempotency-Key`` is answered once: a retry after a lost answer
gets the same upload, as a submit's retry gets the same run.

Their serializers live here (as the comparisons' do in ``compare``).
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.api import serializers as s
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.schema import errors
from leaderboard.api.serializers import absolute
from leaderboard.api.submit import IDEMPOTENCY_KEY, idempotent
from leaderboard.models import RUN_NAME_RE, run_name_validator
from leaderboard.reading.visibility import visible_benchmark
from leaderboard.uploads.presigned import UploadRefused, confirm_upload, start_upload


class PresignedRequestSerializer(serializers.Serializer):
    """A presigned upload asked for: the file's name and exact size in bytes."""

    file_name = serializers.CharField(max_length=255, help_text="The run file's name.")
    size = serializers.IntegerField(
        min_value=1,
        help_text="The exact number of bytes that will be PUT (the signature covers it).",
    )
    run_name = serializers.RegexField(
        RUN_NAME_RE,
        required=False,
        error_messages={"invalid": run_name_validator.message},
        help_text="Defaults to the run's tag; unique on the benchmark.",
    )
    description = serializers.CharField(required=False, allow_blank=True)


class PresignedUploadSerializer(serializers.Serializer):
    """Where to PUT the file, then what to confirm."""

    token = serializers.CharField(help_text="Confirm with this once the file is PUT.")
    url = serializers.URLField(help_text="The presigned URL: send the file's bytes there.")
    method = serializers.CharField(help_text="Always `PUT`.")
    headers = serializers.DictField(
        child=serializers.CharField(), help_text="Send these headers with the PUT."
    )
    expires = serializers.DateTimeField(help_text="The URL and the upload expire then.")
    confirm_url = serializers.SerializerMethodField()

    @extend_schema_field(OpenApiTypes.URI)
    def get_confirm_url(self, upload) -> str:
        return absolute(self.context["request"], "api_upload_confirm", upload.token)


def refused(error: UploadRefused) -> ApiError:
    return ApiError(error.status, error.messages[0], {"non_field": error.messages})


class StartUpload(ApiView):
    permission_classes = [IsAuthenticated]
    token_action = "submit"  # a token of scope submit may
    parser_classes = [JSONParser]
    serializer_class = PresignedRequestSerializer

    @extend_schema(
        operation_id="startUpload",
        summary="Start a presigned upload of a run (when files live in a bucket)",
        description="PUT the file's bytes to `url` with `headers` before `expires`, then "
        "POST to `confirm_url`. 501 when the site keeps files on its own disk: submit the "
        "file to `/api/benchmarks/<slug>/submissions/` then. A retry with the first "
        "request's `Idempotency-Key` gets the same upload.",
        request=PresignedRequestSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: PresignedUploadSerializer,
            **errors(400, 401, 403, 404, 409, 413, 415, 429, 501, 503),
            422: OpenApiResponse(
                s.ErrorSerializer, description="The Idempotency-Key was used on another request."
            ),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        benchmark = visible_benchmark(request, slug)
        # A retry whose first answer was lost gets that upload again, not a second one
        # holding one of the day's open uploads until it expires.
        return idempotent(request, lambda: self.start(request, benchmark))

    def start(self, request: Request, benchmark) -> Response:
        body = PresignedRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            upload = start_upload(request.user, benchmark, **body.validated_data)
        except UploadRefused as error:
            raise refused(error) from error
        data = PresignedUploadSerializer(upload, context={"request": request}).data
        return Response(data, status=201)


class ConfirmUpload(ApiView):
    permission_classes = [IsAuthenticated]
    token_action = "submit"
    serializer_class = s.SubmissionSerializer

    @extend_schema(
        operation_id="confirmUpload",
        summary="Confirm a presigned upload: the file is checked and becomes a run",
        description="Answers as a submit does (the run, queued for scoring); a confirmation "
        "sent twice answers the same run.",
        request=None,
        responses={
            201: OpenApiResponse(s.SubmissionSerializer, description="Stored and queued."),
            **errors(400, 401, 403, 404, 409, 410, 413, 429, 503),
        },
    )
    def post(self, request: Request, token: str) -> Response:
        try:
            run = confirm_upload(request.user, token)
        except UploadRefused as error:
            raise refused(error) from error
        data = s.SubmissionSerializer(run, context={"request": request, "results": {}}).data
        location = reverse("api_submission", args=[run.pk])
        return Response(data, status=201, headers={"Location": location})
