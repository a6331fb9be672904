"""The web platform: benchmarks, submissions, leaderboards. Calls the engine in evaluation/.

The Django project files stay at this top (settings, urls, celery, wsgi/asgi, apps,
admin, URL converters); the rest is in sub-packages by concern, each saying in its
docstring what lives there and what it may import: ``models`` (the data),
``pipeline`` (background work: loading, scoring, comparing, Celery tasks), ``pages``
(the reader's pages), ``uploads`` (the participant's upload flow), ``api`` (``/api/``),
``accounts`` (sign-up, tokens). See docs/architecture.md.
"""

from leaderboard.celery import app as celery_app

__all__ = ["celery_app"]
