"""API tokens: hashed, several per user, shown once."""

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
    """

    PREFIX = "rrl_"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    sha256 = models.CharField("SHA-256 of the token", max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.user} / {self.name}"

    @staticmethod
    def digest(raw: str) -> str:
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()

    @classmethod
    def issue(cls, user, name: str) -> tuple[ApiToken, str]:
        """Create a token for ``user``; returns the row and the raw token, the only copy."""
        raw = cls.PREFIX + secrets.token_urlsafe(32)
        return cls.objects.create(user=user, name=name, sha256=cls.digest(raw)), raw

    @classmethod
    def authenticate(cls, raw: str):
        """The active user the raw token belongs to, or None; notes when it was used.

        ``last_used`` is written at most once a minute so that polling is not a write per
        request.
        """
        token = (
            cls.objects.select_related("user")
            .filter(sha256=cls.digest(raw), user__is_active=True)
            .first()
        )
        if token is None:
            return None
        now = timezone.now()
        if token.last_used is None or now - token.last_used > dt.timedelta(minutes=1):
            cls.objects.filter(pk=token.pk).update(last_used=now)
        return token.user
