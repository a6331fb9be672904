"""The site's URLs plus views that fail on purpose, for the error-page tests."""

import psycopg
from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.urls import path

from leaderboard import urls as site
from tests.leaderboard.workers import free_port


def boom(request):
    raise RuntimeError("a bug, on purpose")


def denied(request):
    raise PermissionDenied


def database_error(sqlstate: str) -> Exception:
    """A query's error as Django raises it: its own class, from psycopg's. ``refused``: a
    real connection to a port nothing listens on; ``closed``: a connection used after it
    was lost; else psycopg's error of that SQLSTATE."""
    if sqlstate == "refused":
        try:
            psycopg.connect(host="127.0.0.1", port=free_port(), user="postgres", connect_timeout=2)
        except psycopg.OperationalError as error:
            cause = error
    elif sqlstate == "closed":
        cause = psycopg.InterfaceError("the connection is closed")
    else:
        cause = psycopg.errors.lookup(sqlstate)(f"an error {sqlstate}, on purpose")
    wrapped = InterfaceError if isinstance(cause, psycopg.InterfaceError) else OperationalError
    error = wrapped(*cause.args)
    error.__cause__ = cause
    return error


def database(request, sqlstate):
    raise database_error(sqlstate)


def refused_before_the_view(get_response):
    """A middleware whose query fails (as a session's save would): outside any view."""

    def middleware(request):
        raise database_error("refused")

    return middleware


urlpatterns = [
    path("test-errors/boom/", boom),
    path("test-errors/denied/", denied),
    path("test-errors/database/<str:sqlstate>/", database),
    path("api/test-errors/boom/", boom),
    path("api/test-errors/database/<str:sqlstate>/", database),
    *site.urlpatterns,
]
handler400, handler403, handler500 = site.handler400, site.handler403, site.handler500
