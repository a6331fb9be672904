"""The ``/health/`` probe: does every service the site needs answer? For load balancers,
docker compose's healthchecks and operators.

Four checks, run at once, each in a thread of its own: ``database`` (``SELECT 1``),
``broker`` (a connection to Celery's broker), ``storage`` (``exists()`` of a probe name
on the default storage, whichever backend is configured) and ``workers`` (Celery's
``control.ping``: the workers that answer within a second; at least one must). The
answer waits at most ``HEALTH_TIMEOUT_SECONDS`` for them all, so a hung PostgreSQL,
Redis or bucket makes its check fail ("timed out"), never the request hang; a thread
still stuck then is left to its socket timeouts (the threads are daemons). 200 when
every check passed, 503 otherwise.

With no broker configured (development: tasks run in-process) the broker and workers
checks pass with ``"in_process": true``. The answer names no host, address, URL or
error message (they may carry credentials): only whether each check passed, how long it
took, the error's type, and how many workers answered. Anonymous and outside ``/api/``:
no log-in, no token, nothing throttled or counted by django-axes.

The full check holds a web process about a second (the workers' ping) and sends a ping
to every worker through the broker, so only internal callers get it: a request from a
loopback address that no proxy forwarded (docker compose's healthcheck, an operator on
the host) or one carrying ``X-Health-Token`` equal to ``HEALTH_TOKEN``. Everyone else
gets the liveness answer: the process answers and reaches the database, ``{"status",
"checks": {"database"}}``, computed at most once per ``HEALTH_CACHE_SECONDS`` per process
(held in the process, not in the cache service, whose failure must not make a live site
look dead), so clients looping on ``/health/`` cost a board page nothing.
"""

from __future__ import annotations

import hmac
import ipaddress
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from leaderboard.celery import app

PROBE_NAME = "health-probe"  # never stored: exists() is asked, the answer does not matter
PING_SECONDS = 1.0


def check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()  # this thread's own connection
    return {}


def _in_process() -> bool:
    return not settings.CELERY_BROKER_URL


def check_broker() -> dict:
    if _in_process():
        return {"in_process": True}
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, interval_start=0)
    return {}


def check_storage() -> dict:
    default_storage.exists(PROBE_NAME)
    return {}


def check_workers() -> dict:
    if _in_process():
        return {"in_process": True, "count": 0}
    replies = app.control.ping(timeout=PING_SECONDS)
    count = len({name for reply in replies for name in reply})
    if not count:
        raise LookupError("no worker answered")
    return {"count": count}


CHECKS: dict[str, Callable[[], dict]] = {
    "database": check_database,
    "broker": check_broker,
    "storage": check_storage,
    "workers": check_workers,
}


def run_checks(timeout: float, checks: dict[str, Callable[[], dict]] = CHECKS) -> dict[str, dict]:
    """The ``checks`` (every one by default) at once; those not done within ``timeout``
    seconds fail."""
    results: dict[str, dict] = {}

    def run(name: str, check: Callable[[], dict]) -> None:
        started = time.monotonic()
        try:
            outcome = {"ok": True, **check()}
        except Exception as error:  # any failure is the check's answer, not a 500
            outcome = {"ok": False, "error": type(error).__name__}
            if name == "workers" and isinstance(error, LookupError):
                outcome.update(error="no worker answered", count=0)
        outcome["ms"] = round((time.monotonic() - started) * 1000)
        results[name] = outcome

    threads = [
        threading.Thread(target=run, args=item, daemon=True, name=f"health-{item[0]}")
        for item in checks.items()
    ]
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return {
        name: results.get(name) or {"ok": False, "error": f"timed out after {timeout:g} s"}
        for name in checks
    }


LIVENESS: dict[str, Callable[[], dict]] = {"database": check_database}


def is_internal(request: HttpRequest) -> bool:
    """A caller the full check is for: the right ``X-Health-Token``, or a loopback
    address with no proxy's forwarding header (behind a proxy on the same host every
    request comes from loopback, and carries one)."""
    token = request.headers.get("X-Health-Token", "")
    if settings.HEALTH_TOKEN and token:
        return hmac.compare_digest(token.encode(), settings.HEALTH_TOKEN.encode())
    if "X-Forwarded-For" in request.headers or "Forwarded" in request.headers:
        return False
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


class Liveness:
    """The public answer, computed at most once per ``HEALTH_CACHE_SECONDS`` in this
    process; concurrent callers at expiry wait for the one computing it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answer: tuple[float, dict[str, dict]] | None = None  # (expiry, checks)

    def checks(self) -> dict[str, dict]:
        with self.lock:
            if self.answer is None or time.monotonic() >= self.answer[0]:
                checks = run_checks(settings.HEALTH_TIMEOUT_SECONDS, LIVENESS)
                self.answer = (time.monotonic() + settings.HEALTH_CACHE_SECONDS, checks)
            return self.answer[1]

    def clear(self) -> None:
        with self.lock:
            self.answer = None


liveness = Liveness()


@never_cache
@require_safe
def probe(request: HttpRequest) -> JsonResponse:
    if is_internal(request):
        checks = run_checks(settings.HEALTH_TIMEOUT_SECONDS)
    else:
        checks = liveness.checks()
    healthy = all(check["ok"] for check in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "failing", "checks": checks},
        status=200 if healthy else 503,
    )
