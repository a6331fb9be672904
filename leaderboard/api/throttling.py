"""Request rates: per token (``API_RATE_TOKEN``), per address without one
(``API_RATE_ANONYMOUS``), and per (username, address) for logging in (``API_RATE_LOGIN``).

DRF's sliding-window throttle, counted in Django's cache (one Redis shared by every web
process with ``CACHE_URL=redis://...``). Every counted response says where the caller
stands in the IETF draft's headers (``RateLimit-Limit``, ``RateLimit-Remaining``,
``RateLimit-Reset`` in seconds); a refused one is a 429 with ``Retry-After`` too. If the
cache is down the API does not fail: the request passes uncounted and a warning is logged.
"""

from __future__ import annotations

import hashlib
import logging
import math

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.accounts.throttle import client_address

log = logging.getLogger(__name__)


class RateLimited(SimpleRateThrottle):
    """A sliding window that remembers, on the request, what to put in the headers.
    Rates are read from the settings per request (DRF reads them once, at import)."""

    def allow_request(self, request: Request, view) -> bool:
        try:
            allowed = super().allow_request(request, view)
        except Exception:  # the cache is not answering: serve unthrottled rather than fail
            log.warning("API rate limit skipped: the cache is not answering", exc_info=True)
            return True
        if self.rate is not None and getattr(self, "key", None) is not None:
            remaining = max(self.num_requests - len(self.history), 0)
            reset = self.duration - (self.now - self.history[-1]) if self.history else 0
            request._request.rate_limit = (self.num_requests, remaining, max(math.ceil(reset), 0))
        return allowed

    def wait(self) -> float | None:
        wait = super().wait()
        return None if wait is None else max(math.ceil(wait), 1)


class CallerRateThrottle(RateLimited):
    """Per token; per address for callers without one."""

    def get_rate(self) -> str | None:
        return None  # chosen per request in allow_request

    def allow_request(self, request: Request, view) -> bool:
        self.scope = "token" if request.auth else "anonymous"
        self.rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view) -> str:
        token = getattr(request.auth, "sha256", None)
        who = token or client_address(request._request) or "unknown"
        return f"throttle:api-rate:{self.scope}:{who}"


class LoginRateThrottle(RateLimited):
    """Attempts at ``POST /api/tokens/`` with a password, per (username, address), like
    django-axes' lock on failed ones (``accounts/throttle.py``): a neighbour behind the
    same address who spends the allowance does not stop anyone else's log-in."""

    scope = "login"

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request: Request, view) -> str | None:
        if request.method != "POST":
            return None
        data = request.data
        username = data.get("username") if isinstance(data, dict) else None
        name = username.casefold() if isinstance(username, str) else ""
        # Hashed: any text is a safe cache key that way.
        who = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return f"throttle:api-rate:login:{client_address(request._request) or 'unknown'}:{who}"


def rate_limit_headers(request, response) -> None:
    """Add the RateLimit-* headers the throttle remembered on the request, if any."""
    counted = getattr(request, "rate_limit", None)
    if counted is None:
        return
    limit, remaining, reset = counted
    response["RateLimit-Limit"] = str(limit)
    response["RateLimit-Remaining"] = str(remaining)
    response["RateLimit-Reset"] = str(reset)
