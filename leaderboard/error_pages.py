"""The site's error pages: ``handler400``, ``handler403``, ``handler404`` and
``handler500`` (set in ``leaderboard/urls.py``). Under /api/ each answers JSON in the
API's shape (:func:`leaderboard.reading.visibility.error_body`), so a path no route matches, or
a 404 raised by a view that is not DRF's (the schema's, the docs'), is JSON there as
well; elsewhere Django's own handlers render the site's templates (``404.html`` ...).

A database that is down, restarting or refusing connections is not a bug: any request
that needs it answers 503 with ``Retry-After`` (``503.html``, or JSON under /api/) and
the log gets one line naming the path and the error, no traceback. Views' errors are
caught by :class:`DatabaseDownMiddleware` (before Django's 500 machinery, so nothing is
reported as an uncaught exception); those raised in other middleware reach
``server_error``, which answers the same.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.utils.cache import add_never_cache_headers
from django.utils.log import log_response
from django.views import defaults

from leaderboard.reading.visibility import error_body

DATABASE_DOWN = "The site's database is not answering; try again in a few minutes."
RETRY_AFTER_SECONDS = 60
# PostgreSQL's SQLSTATE classes of a server that cannot serve: connection exceptions,
# insufficient resources (too many clients, a full disk), operator intervention (shutting down,
# starting up; 57014, a cancelled statement, is not one).
UNAVAILABLE_STATES = ("08", "53", "57P")


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("Bad request."), status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("You may not do this."), status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(
            error_body("No such endpoint; the routes are listed at /api/schema/."), status=404
        )
    return defaults.page_not_found(request, exception)


def database_unavailable(error: BaseException | None) -> bool:
    """Whether ``error`` says PostgreSQL cannot be reached or will not serve, rather than
    that a query is wrong: a lost or refused connection (psycopg's errors without an
    SQLSTATE), or one of ``UNAVAILABLE_STATES``. SQLite's errors are never this (its
    database is a file, not a service)."""
    if not isinstance(error, OperationalError | InterfaceError):
        return False
    cause = error.__cause__
    if not hasattr(cause, "sqlstate"):  # not psycopg's
        return False
    if isinstance(error, InterfaceError) or cause.sqlstate is None:
        return True
    return cause.sqlstate.startswith(UNAVAILABLE_STATES)


def database_down(request: HttpRequest, error: BaseException) -> HttpResponse:
    """The 503 of a request the database did not answer, logged in one line."""
    if _is_api(request):
        details = {"retry_after": RETRY_AFTER_SECONDS}
        response = JsonResponse(error_body(DATABASE_DOWN, details), status=503)
    else:
        response = HttpResponse(loader.render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    add_never_cache_headers(response)
    reason = (str(error).strip().splitlines() or [""])[0]
    log_response(
        "%s: %s: the database is not answering (%s: %s)",
        response.reason_phrase,
        request.path,
        type(error).__name__,
        reason,
        response=response,
        request=request,
    )  # marks the response logged: Django's own line (and traceback) is not added
    return response


class DatabaseDownMiddleware:
    """A view's error from a database that is not answering: the 503, not a 500."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if database_unavailable(exception):
            return database_down(request, exception)
        return None


def server_error(request: HttpRequest) -> HttpResponse:
    """A bug (the error is logged by Django with its traceback, as for any page); a
    database that is not answering (raised outside a view) is the 503."""
    error = sys.exc_info()[1]  # Django calls this handler while handling the exception
    if database_unavailable(error):
        return database_down(request, error)
    if _is_api(request):
        message = "Internal error; it has been logged. Please try again later."
        return JsonResponse(error_body(message), status=500)
    return defaults.server_error(request)
