"""Presigned uploads: a run on its way straight into the bucket.

A ``PendingUpload`` is created with a presigned PUT URL (``leaderboard.uploads.presigned``)
and names the object the client is to PUT there; once confirmed and checked it points at
the ``Submission`` it became. An upload never confirmed expires and is discarded, its
object with it. Imports nothing else of ``models``: foreign keys name their targets as
strings.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone


def upload_token() -> str:
    return secrets.token_hex(16)


class PendingUploadQuerySet(models.QuerySet):
    def expired(self, now=None) -> PendingUploadQuerySet:
        """Never confirmed, and their URL no longer valid."""
        return self.filter(submission__isnull=True, expires__lt=now or timezone.now())


class PendingUpload(models.Model):
    token = models.CharField(max_length=32, unique=True, default=upload_token)
    benchmark = models.ForeignKey(
        "leaderboard.Benchmark", on_delete=models.CASCADE, related_name="+"
    )
    participant = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pending_uploads"
    )
    key = models.CharField(
        max_length=300, unique=True, help_text="The object's name in the storage (the bucket)."
    )
    original_name = models.CharField(max_length=255, blank=True)
    run_name = models.CharField(max_length=40, blank=True)
    description = models.TextField(blank=True)
    size = models.BigIntegerField(help_text="The size the client announced, in bytes.")
    created = models.DateTimeField(default=timezone.now)
    expires = models.DateTimeField()
    submission = models.OneToOneField(
        "leaderboard.Submission",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The run this upload became, once confirmed.",
    )

    objects = PendingUploadQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["expires"])]

    def __str__(self) -> str:
        return f"upload {self.token[:8]} of {self.original_name or self.key}"

    @property
    def is_expired(self) -> bool:
        return self.submission_id is None and self.expires < timezone.now()
