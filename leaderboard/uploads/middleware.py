"""Middleware of the upload flow: when a request began."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone


class RequestStartMiddleware:
    """Note when a request began, before its body arrives: a run whose upload began
    before a phase closed is taken within the grace after the close
    (``leaderboard.models.phases``), however long the file took to arrive. First in the
    chain, because the body is parsed by whatever reads ``request.POST`` first (the CSRF
    check does, before any view)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.started_at = timezone.now()
        return self.get_response(request)


def request_started(request: HttpRequest):
    """When the request began (now, for a request that did not pass the middleware)."""
    return getattr(request, "started_at", None) or timezone.now()
