"""Engine tests (tests/evaluation) need no database; Django fixtures live in tests/leaderboard."""

import os

# ranx (a dev dependency: the tests hand its Run and Qrels to rrl and the engine) compiles
# its numba functions on first use in each process, far more CPU than the handful of
# small objects the tests build need; as plain Python they give the same dicts. Set
# before anything imports numba, here and in every process the tests start.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")


def pytest_report_header(config) -> list[str]:
    try:
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        broker = settings.CELERY_BROKER_URL or "none (real-worker tests skip)"
    except Exception:  # Django not configured (-p no:django): engine tests only
        return ["database: none (Django not configured)"]
    return [f"database: {engine}", f"celery broker for worker tests: {broker}"]
