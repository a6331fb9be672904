"""WSGI entry point (gunicorn leaderboard.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
application = get_wsgi_application()

# The Celery app finalized (its tasks built) when the process starts, not by the first
# upload's message, which would otherwise wait for it (a tenth of a second or more).
from leaderboard.celery import app as _celery  # noqa: E402

_celery.finalize(auto=True)
