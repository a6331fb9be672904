"""The client's HTTP core: the API at a site's address, with a token or anonymous.

:class:`Session` sends each request with the token, sends it again after a connection
error or a passing 502/503/504 (and, for a request with an ``Idempotency-Key``, after a
409 saying the first one is still being answered), and turns every refusal into an
:class:`ApiError` carrying the server's JSON, a 409 into a :class:`Conflict`.
:class:`rrl.Client` is built on it: the participants' endpoints in :mod:`rrl.client`,
the organizers' in :mod:`rrl.organizer_calls`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Self

import httpx

__all__ = ["ApiError", "Conflict", "Session"]

RETRIED = {502, 503, 504}


class ApiError(Exception):
    """The server refused: ``status``, its ``error`` message and ``details``."""

    def __init__(self, status: int, error: str, details: dict | None = None) -> None:
        super().__init__(f"{status}: {error}")
        self.status, self.error, self.details = status, error, details or {}


class Conflict(ApiError):
    """A 409: a run with this name, or this very file, is already there (``existing``:
    its ``run_name`` and, when the caller may see it, its ``id`` and ``url``)."""

    @property
    def existing(self) -> dict:
        return self.details.get("existing", {})

    def __str__(self) -> str:
        url = self.existing.get("url")
        return f"{super().__str__()} (existing run: {url})" if url else super().__str__()


class Session:
    """The API at ``url`` (the site's address), with a token or anonymous."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.retries, self.backoff = retries, backoff
        self._direct = True  # until the site says it has no presigned uploads
        self._http = httpx.Client(
            base_url=self.url, timeout=timeout, transport=transport, follow_redirects=True
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- HTTP ---------------------------------------------------------------------

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._request(method, path, **kwargs).json()

    def _request(self, method: str, path: str, *, retry: bool = True, **kwargs) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"

        def send() -> httpx.Response:
            return self._check(self._http.request(method, path, headers=headers, **kwargs))

        return self._retrying(send) if retry and method in ("GET", "PATCH") else send()

    def _retrying(self, send: Callable[[], httpx.Response], key: str | None = None):
        """``send`` again after a connection error or a passing 5xx; with an idempotency
        ``key`` also after a 409 saying the first request is still being answered."""
        for attempt in range(self.retries + 1):
            try:
                return send()
            except (httpx.TransportError, ApiError) as error:
                again = isinstance(error, httpx.TransportError) or error.status in RETRIED
                if key and isinstance(error, ApiError) and error.status == 409:
                    again = "Idempotency-Key" in error.error
                if not again or attempt == self.retries:
                    raise
                time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")

    def _check(self, response: httpx.Response) -> httpx.Response:
        if response.is_success:
            return response
        try:
            body = response.json()
            error, details = body["error"], body.get("details", {})
        except (ValueError, KeyError, TypeError):
            error, details = response.text[:500] or response.reason_phrase, {}
        kind = Conflict if response.status_code == 409 else ApiError
        raise kind(response.status_code, error, details)
