"""Engine tests (tests/evaluation) need no database; Django fixtures live in tests/leaderboard."""

import os

# ranx (a dev dependency: the tests hand its Run and Qrels to rrl and the engine) compiles
# its numba functions on first use in each process, far more CPU than the handful of
# small objects the tests build need; as plain Python they give the same dicts. Set
# before anything imports numba, here and in every process the tests start.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")


def pytest_configure(config) -> None:
    """The test servers (``live_server``: Django's LiveServerThread) answer without Nagle's
    algorithm, as gunicorn does: wsgiref writes a response's headers and body in separate
    small writes, and on a kept-alive connection the body then waits for the client's
    delayed ACK of the headers (40 ms on Linux) on every request after the first, which
    made Schemathesis' thousands of requests and the browsers' page loads mostly waiting."""
    try:
        from django.test.testcases import QuietWSGIRequestHandler
    except ImportError:  # Django not installed: engine tests only
        return
    QuietWSGIRequestHandler.disable_nagle_algorithm = True


def pytest_report_header(config) -> list[str]:
    try:
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        broker = settings.CELERY_BROKER_URL or "none (real-worker tests skip)"
    except Exception:  # Django not configured (-p no:django): engine tests only
        return ["database: none (Django not configured)"]
    return [f"database: {engine}", f"celery broker for worker tests: {broker}"]


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked ``long`` (half a minute or more alone) start first, one at the head of each
    xdist worker's share: ``--dist worksteal`` gives each worker an equal run of the
    collection, worked from its front while idle workers steal from its back, so a long
    test left near the end would keep the whole run waiting on it."""
    long = [item for item in items if item.get_closest_marker("long")]
    if not long:
        return
    rest = [item for item in items if not item.get_closest_marker("long")]
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    shares, left = [], len(items)
    for w in range(workers):  # as worksteal splits it: what is left over the workers left
        shares.append(left // (workers - w))
        left -= shares[-1]
    heads = [long[w::workers] for w in range(workers)]
    ordered = []
    for head, size in zip(heads, shares, strict=True):
        ordered += head
        ordered += rest[: max(size - len(head), 0)]
        rest = rest[max(size - len(head), 0) :]
    items[:] = ordered + rest
