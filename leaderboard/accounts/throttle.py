"""Throttling of failed log-ins (django-axes) and of unknown API tokens (the cache).

The policy, also in docs/settings.md ("Log-in and token throttling"):

- **Log-ins** are counted per (username, address) pair, so that nobody can lock a
  participant out by failing their username from elsewhere, and nobody sharing an
  address is locked out by a neighbour's typos:

  * after ``LOGIN_DELAY_AFTER`` failures of a pair, each further attempt of that pair
    must wait ``LOGIN_DELAY_SECONDS``, doubled for every failure since (1, 2, 4 ... s
    with the defaults) after the last one;
  * ``LOGIN_FAILURE_LIMIT`` failures of a pair lock it until ``THROTTLE_COOLOFF_SECONDS``
    after the last;
  * ``LOGIN_ADDRESS_FAILURE_LIMIT`` failures from one address (any usernames, within the
    cool-off) lock the address until ``THROTTLE_COOLOFF_SECONDS`` after the last.

  A refused attempt is an immediate HTTP 429 with ``Retry-After`` and a page saying how
  long to wait (no request sleeps); the password is not checked, so guessing stops, and
  the attempt neither counts nor extends anything. A successful log-in clears the
  failures of that username from that address only. django-axes keeps the counts in the
  database, so they hold across web processes.
- **API tokens.** A valid token always authenticates: it is looked up first. Unknown
  tokens are counted per address; from the ``API_TOKEN_FAILURE_LIMIT``-th within the
  cool-off on, that address's unknown tokens are a JSON 429 with ``Retry-After`` (not a
  401) until ``THROTTLE_COOLOFF_SECONDS`` after it, which slows a client that guesses
  without locking out others behind the same address. Counts live in Django's cache:
  shared by every web process with ``CACHE_URL=redis://...``, per process without it. If
  the cache is down the API does not fail: the throttle is skipped and a warning logged.

May import ``leaderboard.models``; nothing else of the platform.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import math
import time

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.core.cache import cache
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

log = logging.getLogger(__name__)


def client_address(request: HttpRequest) -> str | None:
    """The client's IP address: ``REMOTE_ADDR``, or with ``TRUSTED_PROXY_COUNT = n`` the
    n-th address from the right of ``X-Forwarded-For`` (the one the outermost trusted
    proxy saw; anything further left was written by the client and proves nothing).
    None when there is no valid address."""
    candidate = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies > 0:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [a for a in forwarded if a]
        if len(forwarded) >= proxies:
            candidate = forwarded[-proxies]
    try:
        return str(ipaddress.ip_address(candidate.strip()))
    except ValueError:
        return None


# --- Log-ins (django-axes) --------------------------------------------------------------


class LoginAttempts(AxesDatabaseHandler):
    """django-axes' database handler counting (username, address) pairs
    (``AXES_LOCKOUT_PARAMETERS``), with the lock decided by ``login_wait`` (the pair's
    delay and limit, and the address's limit), and a good log-in clearing only the
    failures of that username from that address."""

    def is_locked(self, request: HttpRequest, credentials: dict | None = None) -> bool:
        return login_wait(request, credentials) > 0

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs) -> None:
        super().user_login_failed(sender, credentials, request, **kwargs)
        # axes locks at the pair's limit; the failure that reaches the address's limit
        # is answered with the lock page too.
        if request is not None and not getattr(request, "axes_locked_out", False):
            if _address_failures(request)[0] >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
                request.axes_locked_out = True

    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        username = get_client_username(request, credentials)
        attempts = AccessAttempt.objects.filter(
            username=username, ip_address=request.axes_ip_address
        )
        count, _ = attempts.delete()
        return count


def _address(request: HttpRequest) -> str | None:
    return getattr(request, "axes_ip_address", None) or client_address(request)


def _failures(attempts) -> tuple[int, dt.datetime | None]:
    """The failures counted in ``attempts`` within the cool-off, and the latest one's time."""
    recent = attempts.filter(attempt_time__gte=timezone.now() - settings.AXES_COOLOFF_TIME)
    totals = recent.aggregate(failures=Sum("failures_since_start"), latest=Max("attempt_time"))
    return totals["failures"] or 0, totals["latest"]


def _address_failures(request: HttpRequest) -> tuple[int, dt.datetime | None]:
    address = _address(request)
    if address is None:
        return 0, None
    return _failures(AccessAttempt.objects.filter(ip_address=address))


def pair_delay(failures: int) -> float:
    """Seconds a (username, address) pair with ``failures`` must wait after its last one:
    none below ``LOGIN_DELAY_AFTER``, then ``LOGIN_DELAY_SECONDS`` doubled per further
    failure, capped at the cool-off."""
    after = settings.LOGIN_DELAY_AFTER
    if failures < after:
        return 0.0
    cooloff = settings.AXES_COOLOFF_TIME.total_seconds()
    return min(cooloff, settings.LOGIN_DELAY_SECONDS * 2.0 ** min(failures - after, 32))


def login_wait(request: HttpRequest, credentials: dict | None = None) -> int:
    """Seconds before this username may try again from this address; 0 if it may now.
    The longest of: the pair's progressive delay, the pair's lock (``LOGIN_FAILURE_LIMIT``),
    the address's lock (``LOGIN_ADDRESS_FAILURE_LIMIT``)."""
    now = timezone.now()
    cooloff = settings.AXES_COOLOFF_TIME
    username = get_client_username(request, credentials)
    pair = AccessAttempt.objects.filter(username=username, ip_address=_address(request))
    waits = [dt.timedelta(0)]
    failures, latest = _failures(pair)
    if latest is not None:
        if failures >= settings.AXES_FAILURE_LIMIT:
            waits.append(latest + cooloff - now)
        else:
            waits.append(latest + dt.timedelta(seconds=pair_delay(failures)) - now)
    failures, latest = _address_failures(request)
    if latest is not None and failures >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
        waits.append(latest + cooloff - now)
    return math.ceil(max(waits).total_seconds())


def login_retry_after(request: HttpRequest, credentials: dict | None = None) -> int:
    """``login_wait``, at least 1 s: the ``Retry-After`` of a refused log-in."""
    return max(1, login_wait(request, credentials))


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    """The answer to a log-in while locked (django-axes' ``AXES_LOCKOUT_CALLABLE``)."""
    wait = login_retry_after(request, credentials)
    context = {
        "wait": wait,
        "wait_minutes": max(1, math.ceil(wait / 60)),
        "until": timezone.now() + dt.timedelta(seconds=wait),
        "limit": settings.AXES_FAILURE_LIMIT,
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(wait)
    add_never_cache_headers(response)
    return response


# --- API tokens (the cache) -------------------------------------------------------------


def _keys(address: str | None) -> tuple[str, str]:
    who = address or "unknown"
    return f"throttle:api-token:{who}:failures", f"throttle:api-token:{who}:locked-until"


def token_wait(address: str | None) -> int:
    """Seconds this address must still wait before its tokens are looked at; 0 if none."""
    _, locked = _keys(address)
    try:
        until = cache.get(locked)
    except Exception:  # the cache is down: serve the API unthrottled rather than fail
        log.warning("API token throttle skipped: the cache is not answering", exc_info=True)
        return 0
    if until is None:
        return 0
    return max(0, math.ceil(until - time.time()))


def token_failed(address: str | None) -> int:
    """Count an unknown token from this address; the wait if that reached the limit
    (only this address's further unknown tokens wait: ``authenticate`` looks good ones
    up first)."""
    failures, locked = _keys(address)
    cooloff = settings.THROTTLE_COOLOFF_SECONDS
    try:
        cache.add(failures, 0, timeout=cooloff)  # the window opens with the first failure
        try:
            count = cache.incr(failures)
        except ValueError:  # the window closed between add and incr
            cache.set(failures, 1, timeout=cooloff)
            count = 1
        if count < settings.API_TOKEN_FAILURE_LIMIT:
            return 0
        cache.set(locked, time.time() + cooloff, timeout=cooloff)
        cache.delete(failures)
    except Exception:
        log.warning("API token throttle skipped: the cache is not answering", exc_info=True)
        return 0
    log.warning("API tokens locked for %s after %d unknown tokens", address, count)
    return cooloff
