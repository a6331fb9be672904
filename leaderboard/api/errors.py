"""Every refusal under /api/ as ``{"error": message, "details": {...}}``.

``exception_handler`` is REST framework's hook (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``):
it turns DRF's exceptions, Django's ``Http404`` and ``PermissionDenied`` and this
module's ``ApiError`` into that shape, keeping the status code and the headers DRF sets
(``Allow``, ``WWW-Authenticate``, ``Retry-After``). Outside the views, ``not_found`` (the
catch-all route) answers any other path under /api/, and the site's error pages
(:mod:`leaderboard.error_pages`) answer with :func:`error_body` there too.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.views import exception_handler as drf_exception_handler

from leaderboard.reading.visibility import error_body


class ApiError(exceptions.APIException):
    """A refusal with a status code, a message for a person and structured details."""

    def __init__(
        self,
        status_code: int,
        message: str,
        details: dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code, self.message = status_code, message
        self.details, self.headers = details or {}, headers or {}


def _flatten(detail: Any, field: str = "non_field") -> dict[str, list[str]]:
    """DRF's validation detail (a dict, a list or a string; nested for a list's items and
    nested objects) as {field: [messages]}: ``runs[0]`` names a list's first item."""
    if isinstance(detail, dict):
        out: dict[str, list[str]] = {}
        for key, value in detail.items():
            if key == "non_field_errors":
                name = field
            elif isinstance(key, int):
                name = f"{field}[{key}]"
            else:
                name = str(key) if field == "non_field" else f"{field}.{key}"
            for inner, messages in _flatten(value, name).items():
                out.setdefault(inner, []).extend(messages)
        return out
    if isinstance(detail, list) and any(isinstance(item, dict | list) for item in detail):
        return _flatten(dict(enumerate(detail)), field)  # one entry per item ({}: valid)
    if isinstance(detail, list):
        return {field: [str(m) for m in detail]} if detail else {}
    return {field: [str(detail)]}


def _first(details: dict[str, list[str]]) -> str:
    for field, messages in details.items():
        if messages:
            return messages[0] if field == "non_field" else f"{field}: {messages[0]}"
    return "Invalid request."


def exception_handler(exc: Exception, context: dict) -> HttpResponse | None:
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or "You may not do this.")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # a bug: Django's handler500 (error_pages.server_error) answers
    details: dict[str, Any] = {}
    if isinstance(exc, ApiError):
        message, details = exc.message, exc.details
        for name, value in exc.headers.items():
            response[name] = value
    elif isinstance(exc, exceptions.ValidationError):
        details = _flatten(exc.detail)
        message = _first(details)
    elif isinstance(exc, exceptions.MethodNotAllowed):
        allowed = context["view"].allowed_methods if "view" in context else []
        message = f"{context['request'].method} is not allowed here; use {', '.join(allowed)}."
        details = {"allowed": list(allowed)}
    elif isinstance(exc, exceptions.Throttled):
        message = getattr(exc, "message", str(exc.detail))
        details = getattr(exc, "details", {"retry_after": exc.wait and int(exc.wait)})
    elif isinstance(exc, exceptions.NotAuthenticated):
        message = "This endpoint needs a token: 'Authorization: Bearer <token>'."
    else:
        message = str(exc.detail) if isinstance(exc.detail, str) else _first(_flatten(exc.detail))
    if response.status_code == status.HTTP_401_UNAUTHORIZED:
        response["WWW-Authenticate"] = getattr(exc, "www_authenticate", "Bearer")
    response.data = error_body(message, details)
    return response


# --- Outside the views: the catch-all route ---------------------------------------------


@csrf_exempt
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any method on any other path under /api/; a path one slash short of a route (as
    typed after ``curl``) is told the one it meant."""
    try:
        meant = resolve(request.path + "/").url_name != "api_not_found"
    except Resolver404:
        meant = False
    if meant:
        message = f"No such endpoint; did you mean {request.path}/ (with the final slash)?"
    else:
        message = "No such endpoint; the routes are listed at /api/schema/."
    return JsonResponse(error_body(message), status=404)
