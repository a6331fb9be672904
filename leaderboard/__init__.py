"""The web platform: benchmarks, submissions, leaderboards. Calls the engine in evaluation/."""

from leaderboard.celery import app as celery_app

__all__ = ["celery_app"]
