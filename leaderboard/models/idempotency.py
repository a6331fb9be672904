"""Idempotency keys: a retried submit gets the first answer instead of a second run."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone


class IdempotencyKey(models.Model):
    """An ``Idempotency-Key`` a user sent with a request, and the answer it got.

    The row is claimed (``status`` null) before the request is answered, so a second
    request with the same key while the first is still running is told so instead of
    creating a second run; once answered, it stores the status, the JSON body and the
    ``Location``. Keys are per user; one older than ``IDEMPOTENCY_KEY_HOURS`` is forgotten.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    path = models.CharField(max_length=300, help_text="The request the key was first used on.")
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    body = models.JSONField(null=True, blank=True)
    location = models.CharField(max_length=300, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="unique_idempotency_key")
        ]

    def __str__(self) -> str:
        return f"{self.user} / {self.key}"

    @classmethod
    def claim(cls, user, key: str, path: str) -> tuple[IdempotencyKey | None, bool]:
        """(the new row, True) when this request is the first with the key; otherwise
        (the stored row, False), or (None, False) if it vanished meanwhile."""
        ttl = dt.timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)
        cls.objects.filter(user=user, created__lt=timezone.now() - ttl).delete()
        try:
            with transaction.atomic():
                return cls.objects.create(user=user, key=key, path=path), True
        except IntegrityError:
            return cls.objects.filter(user=user, key=key).first(), False

    def answer(self, status: int, body: dict, location: str = "") -> None:
        self.status, self.body, self.location = status, body, location
        self.save(update_fields=["status", "body", "location"])

    def release(self) -> None:
        """Forget the key: the request ended in a way a retry should not get again."""
        self.delete()
