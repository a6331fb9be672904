"""Tokens from the API: log in with username and password for a new token (so a command
line client can log in), list one's tokens, revoke one.

Logging in goes through ``django.contrib.auth.authenticate`` with the request, so
django-axes counts the failures and locks the username and the address exactly as for
the log-in page (``accounts/throttle.py``: a JSON 429 with ``Retry-After`` here); on top
of that ``LoginRateThrottle`` limits attempts per (username, address) (``API_RATE_LOGIN``).
"""

from __future__ import annotations

import datetime as dt

from django.contrib.auth import authenticate
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.accounts.throttle import login_retry_after
from leaderboard.api.base import ApiView
from leaderboard.api.errors import ApiError
from leaderboard.api.schema import errors
from leaderboard.api.throttling import CallerRateThrottle, LoginRateThrottle
from leaderboard.models import ApiToken


class TokenSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    created = serializers.DateTimeField()
    last_used = serializers.DateTimeField(allow_null=True)
    scope = serializers.ChoiceField(
        choices=["full", "submit", "read"],
        help_text="full: anything; submit: read and submit runs; read: read only.",
    )
    expires = serializers.DateTimeField(
        allow_null=True, help_text="Refused (401, token expired) from then on; null: never."
    )


class NewTokenSerializer(TokenSerializer):
    token = serializers.CharField(help_text="The token itself, shown this once only.")


class LoginSerializer(serializers.Serializer):
    # Taken as sent (no trimming): a password may start with a space, and a value that is
    # all spaces is still a value the schema allows.
    username = serializers.CharField(max_length=150, trim_whitespace=False)
    password = serializers.CharField(
        max_length=4096, trim_whitespace=False, style={"input_type": "password"}
    )
    name = serializers.CharField(
        max_length=100,
        trim_whitespace=False,
        help_text="What the token is for, e.g. the machine that submits.",
    )
    scope = serializers.ChoiceField(
        choices=["full", "submit", "read"],
        default="full",
        help_text="full (the default): anything; submit: read and submit runs; read: read only.",
    )
    expires_in_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=3650,
        help_text="Days until the token expires; left out or null: it never does.",
    )


def _token(row: ApiToken) -> dict:
    return {
        "id": row.pk,
        "name": row.name,
        "created": row.created,
        "last_used": row.last_used,
        "scope": row.scope,
        "expires": row.expires,
    }


class Tokens(ApiView):
    token_read = "manage"  # listing tokens needs a full token
    token_action = "login"  # a new token comes from the password, whatever token is sent
    parser_classes = [JSONParser]
    throttle_classes = [CallerRateThrottle, LoginRateThrottle]
    serializer_class = TokenSerializer

    @extend_schema(
        operation_id="listTokens",
        summary="The caller's tokens (never the tokens themselves: only their names)",
        description="Needs a token of scope full.",
        responses={200: TokenSerializer(many=True), **errors(401, 403, 429)},
    )
    def get(self, request: Request) -> Response:
        if not request.user.is_authenticated:
            raise ApiError(401, "This endpoint needs a token: 'Authorization: Bearer <token>'.")
        rows = ApiToken.objects.filter(user=request.user)
        return Response(TokenSerializer([_token(r) for r in rows], many=True).data)

    @extend_schema(
        operation_id="createToken",
        summary="Log in with username and password: a new token, shown this once",
        description="Failed attempts count towards the log-in lock, as on the log-in page.",
        auth=[],
        request=LoginSerializer,
        examples=[
            OpenApiExample(
                "Log in",
                value={
                    "username": "alice",
                    "password": "her password",
                    "name": "laptop",
                    "scope": "submit",
                    "expires_in_days": 90,
                },
                request_only=True,
            )
        ],
        responses={201: NewTokenSerializer, **errors(400, 401, 415, 429)},
    )
    def post(self, request: Request) -> Response:
        body = LoginSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        credentials = {
            "username": body.validated_data["username"],
            "password": body.validated_data["password"],
        }
        django_request = request._request
        user = authenticate(django_request, **credentials)
        if getattr(django_request, "axes_locked_out", False):
            # Not the HTML lock-out page the middleware would show: JSON, said here.
            django_request.axes_locked_out = False
            wait = login_retry_after(django_request, credentials)
            raise ApiError(
                429,
                f"Too many failed log-ins; try again in {wait} s.",
                {"retry_after": wait},
                {"Retry-After": str(wait)},
            )
        if user is None or not user.is_active:
            raise ApiError(401, "Wrong username or password.")
        if ApiToken.objects.filter(user=user).count() >= ApiToken.MAX_PER_USER:
            raise ApiError(400, f"You have {ApiToken.MAX_PER_USER} tokens; revoke one first.")
        days = body.validated_data.get("expires_in_days")
        row, raw = ApiToken.issue(
            user,
            body.validated_data["name"],
            scope=body.validated_data["scope"],
            expires=timezone.now() + dt.timedelta(days=days) if days else None,
        )
        data = NewTokenSerializer({**_token(row), "token": raw}).data
        response = Response(data, status=201)
        response["Cache-Control"] = "no-store"
        return response


class TokenDetail(ApiView):
    permission_classes = [IsAuthenticated]
    serializer_class = TokenSerializer

    @extend_schema(
        operation_id="revokeToken",
        summary="Revoke one of the caller's tokens",
        description="Needs a token of scope full.",
        responses={204: None, **errors(401, 403, 404, 429)},
    )
    def delete(self, request: Request, token_id: int) -> Response:
        deleted, _ = ApiToken.objects.filter(user=request.user, pk=token_id).delete()
        if not deleted:
            raise ApiError(404, "You have no token with this id.")
        return Response(status=204)
