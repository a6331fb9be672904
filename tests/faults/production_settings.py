"""``leaderboard.settings`` with its static files unhashed, so that a web process can run
with ``DEBUG=0`` (as in production) without ``collectstatic`` first."""

from leaderboard.settings import *  # noqa: F403
from leaderboard.settings import STORAGES

STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
