"""Celery application.

With ``CELERY_BROKER_URL`` unset, settings turn on eager mode, so tasks run in-process
and the development site needs no broker at all.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")

app = Celery("leaderboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Tasks live in leaderboard/pipeline/tasks.py (the background work), not leaderboard/tasks.py.
app.autodiscover_tasks(["leaderboard.pipeline"])
