"""Engine tests (tests/evaluation) need no database; Django fixtures live in tests/leaderboard."""


def pytest_report_header(config) -> list[str]:
    try:
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        broker = settings.CELERY_BROKER_URL or "none (real-worker tests skip)"
    except Exception:  # Django not configured (-p no:django): engine tests only
        return ["database: none (Django not configured)"]
    return [f"database: {engine}", f"celery broker for worker tests: {broker}"]
