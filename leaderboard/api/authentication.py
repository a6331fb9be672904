"""The API's only authentication: ``Authorization: Bearer <token>`` (``ApiToken``).

- Without the header the caller is anonymous and sees what an anonymous reader sees.
  The session cookie is ignored, so there is no ambient authority for a cross-site form
  to forge and no view needs a CSRF token.
- A header that is present but wrong is a 401, never a silent downgrade to anonymous;
  an expired token is a 401 saying "token expired".
- A valid token always authenticates. Unknown tokens are counted per address, and once
  an address has sent too many, its further unknown tokens are a 429 with
  ``Retry-After`` (``accounts/throttle.py``): other clients' bad tokens from a shared
  address never lock a good one out. Rates per token are ``throttling``'s.
- What a token may do is its scope's (``ApiToken.allows``), checked by ``base.TokenScope``.

``request.auth`` is the ``ApiToken``: the rate throttle counts by its SHA-256. (Imported
by DRF's settings while ``rest_framework.views`` loads: nothing here may import that.)
"""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from leaderboard.accounts.throttle import client_address, token_failed, token_wait
from leaderboard.models import ApiToken


class TokensThrottled(exceptions.Throttled):
    """Too many unknown tokens from one address (``accounts/throttle.py``)."""

    def __init__(self, wait: int) -> None:
        self.message = f"Too many unknown tokens from your address; try again in {wait} s."
        super().__init__(wait, self.message)
        self.details = {"retry_after": wait}


class BadToken(exceptions.AuthenticationFailed):
    def __init__(self, message: str, error: str, description: str = "") -> None:
        super().__init__(message)
        self.www_authenticate = f'Bearer error="{error}"'
        if description:
            self.www_authenticate += f', error_description="{description}"'


class BearerTokenAuthentication(BaseAuthentication):
    """The hashed, several-per-user tokens of ``ApiToken`` as a DRF authentication."""

    def authenticate(self, request: Request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None
        scheme, _, raw = header.strip().partition(" ")
        raw = raw.strip()
        if scheme.lower() != "bearer" or not raw:
            raise BadToken("Send the token as 'Authorization: Bearer <token>'.", "invalid_request")
        token = ApiToken.authenticate(raw)
        if token is not None and token.expired:
            raise BadToken(
                f"Token expired at {token.expires.isoformat()}; issue a new one.",
                "invalid_token",
                "token expired",
            )
        if token is not None:
            return token.user, token
        address = client_address(request._request)
        wait = token_wait(address) or token_failed(address)
        if wait:
            raise TokensThrottled(wait)
        raise BadToken("Unknown or revoked token.", "invalid_token")

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"  # makes DRF answer 401 (not 403) to a missing token


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """How drf-spectacular documents the authentication above."""

    target_class = BearerTokenAuthentication
    name = "bearer"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A token from `POST /api/tokens/` or the page /accounts/tokens/. Its scope "
                "limits it: `full` (the default) may do anything its owner may; `submit` "
                "may read and submit runs (not withdraw, hide or edit them, nor manage "
                "tokens); `read` may only read. A request outside the scope is a 403 "
                "naming the scope it needs. A token past its expiry is a 401 "
                '"token expired".'
            ),
        }
