"""Middleware for requests that carry a large body (a run or qrels file)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from evaluation.memory import heap_top_padded


class LargeBodyMiddleware:
    """Receive a body larger than Django keeps in memory with glibc's heap top padded
    (:func:`evaluation.memory.heap_top_padded`).

    First in the chain, because the body is parsed by whatever reads ``request.POST``
    first: the CSRF check does, before any view. A 292 MB upload through gunicorn
    faulted in ~1 GB of pages otherwise (docs/scaling.md, Sixth round). Other requests
    pass untouched.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if content_length(request) <= settings.FILE_UPLOAD_MAX_MEMORY_SIZE:
            return self.get_response(request)
        with heap_top_padded():
            return self.get_response(request)


def content_length(request: HttpRequest) -> int:
    """The request's declared body size in bytes; 0 when absent or not a number."""
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


class RequestStartMiddleware:
    """Note when a request began, before its body arrives: a run whose upload began
    before a phase closed is taken within the grace after the close
    (``leaderboard.models.phases``), however long the file took to arrive."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.started_at = timezone.now()
        return self.get_response(request)


def request_started(request: HttpRequest):
    """When the request began (now, for a request that did not pass the middleware)."""
    return getattr(request, "started_at", None) or timezone.now()
