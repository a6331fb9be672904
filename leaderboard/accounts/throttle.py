"""Throttling of failed log-ins (django-axes) and of unknown API tokens (the cache).

The policy, also in docs/settings.md ("Log-in and token throttling"):

- **Log-ins.** ``LOGIN_FAILURE_LIMIT`` failed log-ins for one username (from any
  address), or from one address (for any usernames), lock that username or that address
  until ``THROTTLE_COOLOFF_SECONDS`` after the last counted failure. While locked, the
  password is not even checked, so guessing stops, and the attempt does not extend the
  lock. The answer is HTTP 429 with ``Retry-After`` and a page saying how long to wait.
  A successful log-in clears the failures of that username from that address only: an
  attacker who owns an account cannot log into it to wipe the count of the other
  usernames they tried from the same address. django-axes keeps the counts in the
  database, so they hold across web processes.
- **API tokens.** ``API_TOKEN_FAILURE_LIMIT`` unknown tokens from one address within the
  cool-off lock that address's token requests (JSON 429 with ``Retry-After``) for
  ``THROTTLE_COOLOFF_SECONDS``. A 256-bit token cannot be guessed; the limit stops a
  client from hammering the database with lookups. Counts live in Django's cache: shared
  by every web process with ``CACHE_URL=redis://...``, per process without it. If the
  cache is down the API does not fail: the throttle is skipped and a warning logged.

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
from django.db.models import Max, Q
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
    """django-axes' database handler, except that a good log-in clears only the failures
    of that username from that address (axes clears every failure of the address and
    every failure of the username)."""

    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        username = get_client_username(request, credentials)
        attempts = AccessAttempt.objects.filter(
            username=username, ip_address=request.axes_ip_address
        )
        count, _ = attempts.delete()
        return count


def login_retry_after(request: HttpRequest, credentials: dict | None = None) -> int:
    """Seconds until the lock on this username or address is sure to have lifted: the
    cool-off after the latest counted failure of either (an upper bound when failures
    of several records add up; exact for the usual single record)."""
    username = get_client_username(request, credentials)
    address = getattr(request, "axes_ip_address", None) or client_address(request)
    mine = Q(ip_address=address) if address else Q(pk__in=[])
    if username:
        mine |= Q(username=username)
    latest = AccessAttempt.objects.filter(mine).aggregate(latest=Max("attempt_time"))["latest"]
    if latest is None:
        return 1
    left = latest + settings.AXES_COOLOFF_TIME - timezone.now()
    return max(1, math.ceil(left.total_seconds()))


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    """The answer to a log-in while locked (django-axes' ``AXES_LOCKOUT_CALLABLE``)."""
    wait = login_retry_after(request, credentials)
    context = {
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
    """Count an unknown token from this address; the wait if that reached the limit."""
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
