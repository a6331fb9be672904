"""What every API view shares: the base class, pagination, query strings, conditional GET.

- ``ApiView``: DRF's ``GenericAPIView`` plus the ``RateLimit-*`` headers on every counted
  answer and the token's scope checked first (``TokenScope``). ``HEAD`` is answered wherever ``GET`` is (Django's ``View`` maps it), and
  ``OPTIONS`` by DRF's metadata.
- ``Pages``: ``?page=`` and ``?page_size=`` (50 by default, at most 200); the body keeps
  its named list (``benchmarks``, ``submissions``) beside ``count``, ``next`` and
  ``previous``.
- ``conditional``: a leaderboard's ``ETag`` (a hash of the exact JSON, so it differs per
  caller when hidden runs differ) and ``Last-Modified`` (``reading.freshness.last_change``:
  the newest run or result the caller may see, hide, show or withdrawal, or judgments
  version, on the judgments row the caller's lens shows); both depend only on what the
  caller can see. ``If-None-Match`` answers 304; ``Last-Modified`` is informative
  (it follows scores, not an edited description or name), so ``If-Modified-Since``
  alone never does, as on the pages.
"""

from __future__ import annotations

import json
from typing import Any

from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date
from rest_framework import generics, serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.api.errors import ApiError
from leaderboard.api.throttling import rate_limit_headers
from leaderboard.models import ApiToken
from leaderboard.reading.freshness import etag, last_change
from leaderboard.reading.lenses import Lens


class TokenScope(BasePermission):
    """A token's scope against the request (``ApiToken.allows``): a safe method is the
    action the view names in ``token_read`` ("read" unless it says otherwise), an unsafe
    one the action in ``token_action`` ("manage" unless it says otherwise, so a new
    endpoint that writes needs a full token until it says what it is). The action
    "login" is any token's: the password in the body is the authority, not the token.
    Requests without a token pass; the view's own permissions decide."""

    def has_permission(self, request: Request, view) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        if request.method in SAFE_METHODS:
            action = getattr(view, "token_read", "read")
        else:
            action = getattr(view, "token_action", "manage")
        if action == "login" or token.allows(action):
            return True
        needs = "full" if action == "manage" else f"{action} or full"
        raise ApiError(
            403,
            f"This token's scope is {token.scope!r}, which does not allow this request; "
            f"it needs a token with scope {needs}.",
            {"scope": token.scope, "needs": needs},
        )


class ApiView(generics.GenericAPIView):
    def get_permissions(self) -> list[BasePermission]:
        return [TokenScope(), *super().get_permissions()]

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        rate_limit_headers(request._request, response)
        return response

    def query(self, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
        """The query string validated by ``serializer_class`` (a 400 naming the field). An
        empty value (``?measure=``) is refused, not taken for an absent one: the schema
        says what a value looks like, and an empty one is not it."""
        params = self.request.query_params
        empty = [name for name in serializer_class().fields if params.get(name, None) == ""]
        if empty:
            raise serializers.ValidationError(
                {name: ["Give a value or leave it out."] for name in empty}
            )
        query = serializer_class(data=params)
        query.is_valid(raise_exception=True)
        return query.validated_data


class Pages(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    key = "results"

    def get_page_size(self, request: Request) -> int:
        """DRF ignores a page size that is not a number; here it is a 400."""
        value = request.query_params.get(self.page_size_query_param)
        if value is not None and not (
            value.isascii() and value.isdigit() and 0 < int(value) <= self.max_page_size
        ):
            raise serializers.ValidationError(
                {"page_size": [f"A whole number from 1 to {self.max_page_size}."]}
            )
        return super().get_page_size(request)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["maximum"] = self.max_page_size
        return parameters

    def get_paginated_response(self, data) -> Response:
        return Response(
            {
                "count": self.page.paginator.count,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                self.key: data,
            }
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        page = super().get_paginated_response_schema(schema)
        page["properties"][self.key] = page["properties"].pop("results")
        page["required"] = ["count", self.key]
        return page


class BenchmarkPages(Pages):
    key = "benchmarks"


class SubmissionPages(Pages):
    key = "submissions"


def conditional(request: Request, data: dict, lens: Lens, **kwargs) -> Response:
    """``data`` (read through ``lens``) as a 200 with ``ETag`` and ``Last-Modified``, or a
    304 when the caller's copy is still current."""
    tag = etag(json.dumps(data, sort_keys=True, default=str))
    modified = last_change(lens, request.user).timestamp()
    response = get_conditional_response(request._request, etag=tag)
    if response is None:
        response = Response(data, **kwargs)
    response["ETag"] = tag
    response["Last-Modified"] = http_date(modified)
    response["Cache-Control"] = "private, no-cache"
    patch_vary_headers(response, ["Authorization"])
    return response
