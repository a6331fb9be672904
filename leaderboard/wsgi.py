"""WSGI entry point (gunicorn leaderboard.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
application = get_wsgi_application()

# The Celery app finalized (its tasks built) when the process starts, not by the first
# upload's message: 0.06-0.17 s of that upload otherwise (docs/scaling.md, Sixth round).
from leaderboard.celery import app as _celery  # noqa: E402

_celery.finalize(auto=True)
