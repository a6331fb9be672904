"""Fixtures for the platform's tests: media in a temp folder, tasks in-process by default."""

from __future__ import annotations

import io
import itertools

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from tests import DEMO
from tests.leaderboard.browsers import browser, chromium  # noqa: F401 (the Chromium fixtures)
from tests.leaderboard.buckets import bucket, s3_server  # noqa: F401 (a real S3 endpoint)
from tests.leaderboard.workers import (
    end_other_sessions,
    queue,  # noqa: F401 (a test's own Celery queues)
)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test database, with every other session on it ended before it is
    dropped (``end_other_sessions``)."""
    yield
    with django_db_blocker.unblock():
        end_other_sessions()


@pytest.fixture(autouse=True)
def _media_and_eager(request, settings, tmp_path_factory):
    """Uploaded files go to a fresh folder; tasks run in-process unless a test needs a worker."""
    settings.MEDIA_ROOT = str(tmp_path_factory.mktemp("media"))
    if request.node.get_closest_marker("worker"):
        yield
        return
    from leaderboard.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _usable_connection():
    """A connection another test's ``pg_terminate_backend`` (workers killed mid-task,
    sessions ended so a database can be dropped) left dead is reopened, not failed on."""
    from django.db import connection

    if connection.connection is not None and not connection.is_usable():
        connection.close()


@pytest.fixture(autouse=True)
def _fresh_cache(settings):
    """A new in-memory cache per test, so that throttle counters (the API's bad-token
    count) never carry from one test to the next; tests of the Redis cache set their own."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"test-{next(_caches)}",
        }
    }


_caches = itertools.count()


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """Passwords hashed with MD5 in tests, as Django's testing docs advise: the default
    PBKDF2 hasher is slow on purpose (a million iterations a hash), and fixtures create
    users and log them in by the thousand. The site's own settings keep the default."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def demo(db, django_capture_on_commit_callbacks):
    """The seed chapter's demo benchmarks, loaded and scored as `make run` does."""
    from leaderboard.models import Benchmark

    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=io.StringIO())
    return Benchmark.objects.get(slug="library")


@pytest.fixture
def library(db):
    """The seed's library benchmark with its needs and judgments, no runs yet."""
    from leaderboard.models import Benchmark
    from leaderboard.pipeline.loading import load_judgments, load_needs

    benchmark = Benchmark.objects.create(slug="library", title="Library", daily_limit=3)
    with open(DEMO / "needs.tsv", "rb") as needs:
        load_needs(benchmark, needs, "needs.tsv")
    with open(DEMO / "qrels.txt", "rb") as qrels:
        load_judgments(benchmark, qrels, "qrels.txt")
    benchmark.refresh_from_db()
    return benchmark


@pytest.fixture
def participant(db):
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def other_participant(db):
    return get_user_model().objects.create_user("bob", password="pw-bob-123")


@pytest.fixture
def organizer(db):
    return get_user_model().objects.create_user("olga", password="pw-olga-123", is_staff=True)
