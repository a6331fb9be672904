"""``/health/``: database, broker, storage and workers; 200 when all answer, 503 otherwise,
within HEALTH_TIMEOUT_SECONDS even when a service hangs; nothing secret in the answer."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.core.files.storage import FileSystemStorage

from tests.faults.services import RedisServer
from tests.leaderboard.workers import Worker, broker_or_skip, celery_on, free_port

CHECKS = {"database", "broker", "storage", "workers"}
# Seconds past HEALTH_TIMEOUT_SECONDS an answer may take: enough for a loaded test host,
# far less than a hung service holds a check (30 s, or for ever), so a hang still fails.
SLACK = 10


def _get(client):
    started = time.monotonic()
    response = client.get("/health/")
    return response, time.monotonic() - started


def _shape(body: dict) -> None:
    assert set(body) == {"status", "checks"}
    assert set(body["checks"]) == CHECKS
    for check in body["checks"].values():
        assert isinstance(check["ok"], bool)
        assert check["ok"] or isinstance(check["error"], str)


@pytest.mark.django_db
def test_without_a_broker_tasks_run_in_process_and_the_site_is_healthy(client, settings):
    settings.CELERY_BROKER_URL = ""
    response, _ = _get(client)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert "no-cache" in response["Cache-Control"]
    body = response.json()
    _shape(body)
    assert body["status"] == "ok"
    assert body["checks"]["broker"] == {
        "ok": True,
        "in_process": True,
        "ms": pytest.approx(0, abs=500),
    }
    assert body["checks"]["workers"]["in_process"] is True
    assert body["checks"]["database"]["ok"] and body["checks"]["storage"]["ok"]


class HungStorage(FileSystemStorage):
    """A bucket that never answers (until the test lets it go)."""

    release = threading.Event()

    def exists(self, name):
        self.release.wait(30)
        return False


@pytest.mark.django_db
def test_a_hung_storage_fails_its_check_within_the_timeout(client, settings):
    settings.CELERY_BROKER_URL = ""
    settings.HEALTH_TIMEOUT_SECONDS = 2
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "tests.leaderboard.test_probes.HungStorage"},
    }
    HungStorage.release.clear()
    try:
        response, seconds = _get(client)
    finally:
        HungStorage.release.set()
    assert response.status_code == 503
    body = response.json()
    _shape(body)
    assert body["status"] == "failing"
    assert body["checks"]["storage"] == {"ok": False, "error": "timed out after 2 s"}
    assert body["checks"]["database"]["ok"] is True
    assert 1.9 < seconds < settings.HEALTH_TIMEOUT_SECONDS + SLACK, seconds


@pytest.mark.django_db
def test_health_is_exempt_from_the_https_redirect_and_from_log_in_lockouts(client, settings):
    """Healthchecks speak plain HTTP inside the host; an address locked out by django-axes
    (too many failed log-ins) still gets its answer."""
    settings.CELERY_BROKER_URL = ""
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/").status_code == 301  # every other page goes to https
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        client.post("/accounts/login/", {"username": "nobody", "password": "wrong"}, secure=True)
    assert (
        client.post(
            "/accounts/login/", {"username": "nobody", "password": "wrong"}, secure=True
        ).status_code
        == 429
    )
    assert client.get("/health/").status_code == 200


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_with_a_worker_running_every_check_passes(queue, client, settings, tmp_path):
    worker = Worker(queue, settings.MEDIA_ROOT, tmp_path / "worker.log")
    try:
        worker.wait_ready()
        response, seconds = _get(client)
    finally:
        worker.stop()
    assert response.status_code == 200, response.content
    body = response.json()
    _shape(body)
    assert body["status"] == "ok"
    assert all(check["ok"] for check in body["checks"].values())
    assert body["checks"]["workers"]["count"] >= 1
    assert seconds < settings.HEALTH_TIMEOUT_SECONDS + SLACK


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_with_no_worker_running_the_workers_check_fails(client, settings):
    # A Redis database of its own: the ping is broadcast to every worker on the broker's
    # database, and the suite's parallel processes run workers of their own on it.
    broker = broker_or_skip()
    base, _, db = broker.rpartition("/")
    alone = f"{base}/{15 if db != '15' else 13}"
    with celery_on(alone, f"test-alone-{uuid.uuid4().hex[:8]}"):
        response, seconds = _get(client)
    assert response.status_code == 503
    body = response.json()
    _shape(body)
    assert body["checks"]["workers"] == {
        "ok": False,
        "error": "no worker answered",
        "count": 0,
        "ms": body["checks"]["workers"]["ms"],
    }
    assert body["checks"]["broker"]["ok"] and body["checks"]["database"]["ok"]
    assert seconds < settings.HEALTH_TIMEOUT_SECONDS + SLACK


@pytest.mark.worker
@pytest.mark.django_db
def test_an_unreachable_broker_fails_broker_and_workers_and_names_no_address(client, settings):
    broker_or_skip()
    port = free_port()  # nothing listens there
    with celery_on(f"redis://:s3cret-pw@127.0.0.1:{port}/0", "nowhere"):
        response, seconds = _get(client)
    assert response.status_code == 503
    body = response.json()
    _shape(body)
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["workers"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True
    text = response.content.decode()
    assert "s3cret" not in text and str(port) not in text and "127.0.0.1" not in text
    assert seconds < settings.HEALTH_TIMEOUT_SECONDS + SLACK


@pytest.mark.worker
@pytest.mark.django_db
def test_a_hung_broker_answers_503_within_the_timeout(client, settings, tmp_path):
    """Redis stopped with SIGSTOP (connections accepted, nothing answered)."""
    broker_or_skip()
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    try:
        redis.pause()
        with celery_on(redis.url, "hung"):
            response, seconds = _get(client)
    finally:
        redis.stop()
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["workers"]["ok"] is False
    assert seconds < settings.HEALTH_TIMEOUT_SECONDS + SLACK, seconds


# --- Who gets the full check -------------------------------------------------------------

OUTSIDE = "203.0.113.7"  # TEST-NET-3: any address that is not loopback


@pytest.fixture
def counted(monkeypatch, settings):
    """Every check counted as it runs (the real ones still run); no cached answer left
    from another test; tasks in-process, so the full check needs no worker."""
    from leaderboard import probes

    settings.CELERY_BROKER_URL = ""
    calls = dict.fromkeys(probes.CHECKS, 0)

    def counting(name, check):
        def run():
            calls[name] += 1
            return check()

        return run

    for name, check in list(probes.CHECKS.items()):
        monkeypatch.setitem(probes.CHECKS, name, counting(name, check))
    monkeypatch.setitem(probes.LIVENESS, "database", probes.CHECKS["database"])
    probes.liveness.clear()
    yield calls
    probes.liveness.clear()


@pytest.mark.django_db
def test_a_caller_from_outside_gets_liveness_and_pings_no_worker(client, counted, settings):
    settings.HEALTH_TOKEN = "a-long-health-secret"
    for headers in ({}, {"X-Health-Token": "wrong"}):
        response = client.get("/health/", REMOTE_ADDR=OUTSIDE, headers=headers)
        assert response.status_code == 200 and "no-cache" in response["Cache-Control"]
        body = response.json()
        assert body["status"] == "ok" and set(body["checks"]) == {"database"}
        assert body["checks"]["database"]["ok"] is True
    assert counted["workers"] == counted["broker"] == counted["storage"] == 0
    # A loopback address forwarded by a proxy is a caller from outside too.
    forwarded = client.get("/health/", headers={"X-Forwarded-For": OUTSIDE})
    assert set(forwarded.json()["checks"]) == {"database"}
    assert counted["workers"] == 0


@pytest.mark.django_db
def test_the_token_or_loopback_gets_the_full_check(client, counted, settings):
    settings.HEALTH_TOKEN = "a-long-health-secret"
    with_token = client.get(
        "/health/", REMOTE_ADDR=OUTSIDE, headers={"X-Health-Token": "a-long-health-secret"}
    )
    _shape(with_token.json())
    assert with_token.status_code == 200 and counted["workers"] == 1
    for address in ("127.0.0.1", "::1"):
        _shape(client.get("/health/", REMOTE_ADDR=address).json())
    assert counted["workers"] == 3 and counted["storage"] == 3
    # no token configured: a header, however it reads, is not one
    settings.HEALTH_TOKEN = ""
    empty = client.get("/health/", REMOTE_ADDR=OUTSIDE, headers={"X-Health-Token": ""})
    assert set(empty.json()["checks"]) == {"database"} and counted["workers"] == 3


@pytest.mark.django_db
def test_liveness_is_computed_once_per_cache_window(client, counted, settings):
    settings.HEALTH_CACHE_SECONDS = 300
    answers = [client.get("/health/", REMOTE_ADDR=OUTSIDE) for _ in range(5)]
    assert {a.status_code for a in answers} == {200}
    assert counted["database"] == 1
    # the full check is never served from that cache
    client.get("/health/")
    assert counted["database"] == 2
    # with no window every call checks the database (the counter above can move)
    from leaderboard import probes

    settings.HEALTH_CACHE_SECONDS = 0
    probes.liveness.clear()  # the answer above was kept for 300 s
    for _ in range(3):
        client.get("/health/", REMOTE_ADDR=OUTSIDE)
    assert counted["database"] == 5


@pytest.mark.django_db
def test_a_failing_database_makes_liveness_503(client, counted, monkeypatch):
    from leaderboard import probes

    def down() -> dict:
        raise ConnectionError("database down")

    monkeypatch.setitem(probes.LIVENESS, "database", down)
    response = client.get("/health/", REMOTE_ADDR=OUTSIDE)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "failing" and set(body["checks"]) == {"database"}
    assert body["checks"]["database"]["error"] == "ConnectionError"
