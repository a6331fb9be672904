"""The fault suite (``-m faults``): the platform under broken services and hostile input.

Tests here run on the real services (PostgreSQL, Redis, real Celery workers); those that
stop a service start their own instance on another port and never touch the machine's
shared ones. Each test bounds its own time. The platform's fixtures (``library``,
``participant``, ...) are shared with tests/leaderboard.
"""

import pytest

from tests.leaderboard.conftest import (  # noqa: F401 (fixtures)
    _fast_passwords,
    _fresh_cache,
    _media_and_eager,
    demo,
    django_db_setup,
    library,
    organizer,
    other_participant,
    participant,
)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/faults/" in str(item.fspath):
            item.add_marker(pytest.mark.faults)
