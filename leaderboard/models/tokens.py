"""API tokens: hashed, several per user, shown once, each with a scope and an optional
expiry."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    """A bearer token for the JSON API (``Authorization: Bearer <token>``).

    Only the SHA-256 of the token is stored: a leaked database does not leak working
    tokens, and a token is shown to its owner once, when it is issued. SHA-256 without a
    salt suffices because the token is 256 random bits, not a guessable password.

    A token's ``scope`` limits what it may do (docs/api.md, "API tokens"):

    - ``full``: everything its owner may do through the API (the default);
    - ``submit``: read, and submit runs (``POST /api/benchmarks/<slug>/submissions/`` and
      the presigned upload that ends in one); not withdraw, hide or edit runs, nor list
      or revoke tokens: a machine that submits cannot undo its owner's work;
    - ``read``: read only (any ``GET``, ``HEAD`` or ``OPTIONS``).

    Past ``expires`` (if set) the token is refused with 401 "token expired".
    """

    PREFIX = "rrl_"
    MAX_PER_USER = 20  # tokens a user may hold at once; the page and the API refuse one more

    FULL, SUBMIT, READ = "full", "submit", "read"
    SCOPES = [
        (FULL, "Full: everything you can do"),
        (SUBMIT, "Submit: read and submit runs only"),
        (READ, "Read: read only"),
    ]
    # What each scope may do; a view names the action an unsafe request is (ApiView).
    ACTIONS = {FULL: {"read", "submit", "manage"}, SUBMIT: {"read", "submit"}, READ: {"read"}}

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    sha256 = models.CharField("SHA-256 of the token", max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    scope = models.CharField(max_length=10, choices=SCOPES, default=FULL)
    expires = models.DateTimeField(null=True, blank=True, help_text="Refused from then on.")

    class Meta:
        ordering = ["-created"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.user} / {self.name}"

    @staticmethod
    def digest(raw: str) -> str:
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()

    @classmethod
    def issue(
        cls, user, name: str, scope: str = FULL, expires: dt.datetime | None = None
    ) -> tuple[ApiToken, str]:
        """Create a token for ``user``; returns the row and the raw token, the only copy."""
        if scope not in cls.ACTIONS:
            raise ValueError(f"Unknown token scope {scope!r}")
        raw = cls.PREFIX + secrets.token_urlsafe(32)
        row = cls.objects.create(
            user=user, name=name, sha256=cls.digest(raw), scope=scope, expires=expires
        )
        return row, raw

    @property
    def expired(self) -> bool:
        return self.expires is not None and self.expires <= timezone.now()

    def allows(self, action: str) -> bool:
        """Whether this token's scope may do ``action`` ("read", "submit" or "manage")."""
        return action in self.ACTIONS[self.scope]

    @classmethod
    def authenticate(cls, raw: str) -> ApiToken | None:
        """The token of an active user that ``raw`` is, or None; notes when it was used.
        An expired token is returned (the caller says "expired"), and not noted as used.

        ``last_used`` is written at most once a minute so that polling is not a write per
        request.
        """
        token = (
            cls.objects.select_related("user")
            .filter(sha256=cls.digest(raw), user__is_active=True)
            .first()
        )
        if token is None or token.expired:
            return token
        now = timezone.now()
        if token.last_used is None or now - token.last_used > dt.timedelta(minutes=1):
            cls.objects.filter(pk=token.pk).update(last_used=now)
        return token
