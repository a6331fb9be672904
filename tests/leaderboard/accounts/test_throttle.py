"""Failed log-ins and unknown API tokens are throttled (docs/settings.md).

Log-ins: django-axes in the database, per (username, address) pair and per address,
with the documented defaults (delays after 3 failures, 10 per pair, 100 per address, 15
minutes); instead of waiting, the tests move the stored failures back in time
(``travel``), which is what the passing of time does to them. Tokens: the cache, per
address, with a 2 s cool-off waited out on the real clock, on the in-memory cache and on
a real Redis shared with another process.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import sys
import time
import uuid

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import RequestFactory

from leaderboard.accounts.throttle import client_address, pair_delay
from leaderboard.environment import cache_from_url
from leaderboard.models import ApiToken
from tests import ROOT

LOGIN = "/accounts/login/"
COOLOFF = 2  # seconds


@pytest.fixture(autouse=True)
def fast_hashing(settings):
    """MD5 instead of 0.6 s of PBKDF2 per attempt: the throttle does not depend on the
    hasher, and these tests make ~90 attempts. Autouse, so users are created with it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def short_cooloff(settings):
    settings.THROTTLE_COOLOFF_SECONDS = COOLOFF
    return settings


def travel(seconds: float) -> None:
    """Let ``seconds`` pass for the stored log-in failures: every one is that much older."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - dt.timedelta(seconds=seconds))


def log_in(client, username: str, password: str, address: str = "127.0.0.1"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(client) -> bool:
    return client.get("/accounts/runs/").status_code == 200


# --- Log-ins ----------------------------------------------------------------------------


def fail(client, username: str, times: int, address: str = "127.0.0.1") -> None:
    """``times`` wrong passwords for ``username`` from ``address``, each after waiting out
    the progressive delay the previous ones earned (by moving them back in time)."""
    for _ in range(times):
        failures = sum(
            AccessAttempt.objects.filter(username=username, ip_address=address).values_list(
                "failures_since_start", flat=True
            )
        )
        travel(pair_delay(failures))
        response = log_in(client, username, "wrong-password", address)
        assert response.status_code in (200, 429)


def counted(username: str, address: str) -> int:
    return sum(
        AccessAttempt.objects.filter(username=username, ip_address=address).values_list(
            "failures_since_start", flat=True
        )
    )


def test_the_documented_defaults(settings):
    assert settings.AXES_FAILURE_LIMIT == 10
    assert settings.LOGIN_ADDRESS_FAILURE_LIMIT == 100
    assert (settings.LOGIN_DELAY_AFTER, settings.LOGIN_DELAY_SECONDS) == (3, 1)
    assert settings.AXES_COOLOFF_TIME == dt.timedelta(minutes=15)
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert [pair_delay(n) for n in (0, 2, 3, 4, 5, 9)] == [0, 0, 1, 2, 4, 64]


def test_failures_past_a_few_make_each_try_wait_longer(client, participant):
    for _ in range(3):
        assert log_in(client, "alice", "typo").status_code == 200
    refused = log_in(client, "alice", "pw-alice-123")  # even the right password, at once
    assert refused.status_code == 429 and refused["Retry-After"] == "1"
    assert "Try again in 1 second," in refused.content.decode()
    assert counted("alice", "127.0.0.1") == 3  # the refused try is not counted
    travel(1)
    assert log_in(client, "alice", "typo").status_code == 200
    refused = log_in(client, "alice", "typo")
    assert refused.status_code == 429 and refused["Retry-After"] == "2"
    travel(1)
    assert log_in(client, "alice", "typo").status_code == 429  # one more second to go
    travel(1)
    assert counted("alice", "127.0.0.1") == 4
    assert log_in(client, "alice", "pw-alice-123").status_code == 302
    assert logged_in(client)


def test_wrong_passwords_lock_the_pair_until_the_cool_off_passes(client, participant, settings):
    limit = settings.AXES_FAILURE_LIMIT
    fail(client, "alice", limit - 1)
    travel(pair_delay(limit - 1))
    locked = log_in(client, "alice", "wrong-password")
    assert locked.status_code == 429
    assert 890 <= int(locked["Retry-After"]) <= 900
    page = locked.content.decode()
    assert "Too many failed log-ins" in page
    assert f"after {limit} log-ins pause" in page and "Try again in 15 minutes," in page
    assert 'href="/accounts/password_reset/"' in page
    assert "no-store" in locked["Cache-Control"]

    # The right password is refused while locked, and the extra attempts do not extend it.
    travel(600)
    for _ in range(3):
        refused = log_in(client, "alice", "pw-alice-123")
        assert refused.status_code == 429
        assert 290 <= int(refused["Retry-After"]) <= 300
    assert "Try again in 5 minutes," in refused.content.decode()
    assert not logged_in(client)
    travel(290)
    assert log_in(client, "alice", "pw-alice-123").status_code == 429
    travel(11)
    assert log_in(client, "alice", "pw-alice-123").status_code == 302
    assert logged_in(client)


def test_failures_from_one_address_do_not_lock_the_username_elsewhere(
    client, participant, settings
):
    fail(client, "alice", settings.AXES_FAILURE_LIMIT, address="10.0.1.1")
    assert log_in(client, "alice", "pw-alice-123", address="10.0.1.1").status_code == 429
    assert not logged_in(client)
    assert log_in(client, "alice", "pw-alice-123", address="10.0.1.2").status_code == 302
    assert logged_in(client)


def test_failures_from_many_addresses_do_not_lock_the_username(client, participant, settings):
    for i in range(2 * settings.AXES_FAILURE_LIMIT):
        fail(client, "alice", 1, address=f"10.0.2.{i + 1}")
    assert log_in(client, "alice", "pw-alice-123", address="10.0.3.1").status_code == 302


def test_one_address_is_locked_at_its_own_higher_limit(
    client, participant, other_participant, settings
):
    limit = settings.LOGIN_ADDRESS_FAILURE_LIMIT
    for i in range(limit - 1):
        assert log_in(client, f"guess-{i}", "password1", address="10.0.4.1").status_code == 200
    # Far past the per-username limit, the address still logs in its own users.
    assert log_in(client, "alice", "pw-alice-123", address="10.0.4.1").status_code == 302
    client.post("/accounts/logout/")
    locked = log_in(client, "guess-last", "password1", address="10.0.4.1")
    assert locked.status_code == 429 and 890 <= int(locked["Retry-After"]) <= 900
    assert log_in(client, "bob", "pw-bob-123", address="10.0.4.1").status_code == 429
    assert not logged_in(client)
    assert log_in(client, "bob", "pw-bob-123", address="10.0.4.2").status_code == 302


def test_the_admin_log_in_is_locked_too(client, organizer, settings):
    fail(client, "olga", settings.AXES_FAILURE_LIMIT)
    response = client.post(
        "/admin/login/?next=/admin/", {"username": "olga", "password": "pw-olga-123"}
    )
    assert response.status_code == 429 and "Retry-After" in response
    assert client.get("/admin/").status_code == 302  # still not logged in


def test_the_api_log_in_waits_too(client, participant):
    fail(client, "alice", 4)
    response = client.post(
        "/api/tokens/",
        {"username": "alice", "password": "pw-alice-123", "name": "laptop"},
        content_type="application/json",
    )
    assert response.status_code == 429 and response["Retry-After"] == "2"
    assert response.json()["details"] == {"retry_after": 2}


def test_a_good_log_in_clears_that_username_from_that_address_only(
    client, participant, other_participant, settings
):
    limit = settings.AXES_FAILURE_LIMIT
    fail(client, "alice", limit - 1, address="10.0.3.1")
    travel(pair_delay(limit - 1))
    assert log_in(client, "alice", "pw-alice-123", address="10.0.3.1").status_code == 302
    client.post("/accounts/logout/")
    # Alice's own mistakes are forgotten: no wait, and the full allowance again.
    assert counted("alice", "10.0.3.1") == 0
    for _ in range(3):
        assert log_in(client, "alice", "typo", address="10.0.3.1").status_code == 200
    travel(1)
    assert log_in(client, "alice", "pw-alice-123", address="10.0.3.1").status_code == 302
    client.post("/accounts/logout/")

    # Guessing bob's password, then logging into one's own account from the same address,
    # does not wipe the guesses: the next one locks the pair.
    fail(client, "bob", limit - 1, address="10.0.4.1")
    assert log_in(client, "alice", "pw-alice-123", address="10.0.4.1").status_code == 302
    client.post("/accounts/logout/")
    travel(pair_delay(limit - 1))
    assert log_in(client, "bob", "guess", address="10.0.4.1").status_code == 429
    assert counted("bob", "10.0.4.1") == limit


def test_behind_proxies_the_client_is_read_from_x_forwarded_for(settings):
    factory = RequestFactory()
    forwarded = {"REMOTE_ADDR": "10.9.0.1", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 203.0.113.7"}
    request = factory.get("/", **forwarded)
    assert client_address(request) == "10.9.0.1"  # no proxy trusted: the header is ignored
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(request) == "203.0.113.7"  # not the client-written 6.6.6.6
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_address(request) == "6.6.6.6"
    assert client_address(factory.get("/", REMOTE_ADDR="not-an-address")) is None


# --- API tokens -------------------------------------------------------------------------


def api_get(client, token: str, address: str = "127.0.0.1"):
    return client.get(
        "/api/benchmarks/", headers={"Authorization": f"Bearer {token}"}, REMOTE_ADDR=address
    )


def test_unknown_tokens_from_one_address_get_429_with_retry_after(
    client, participant, short_cooloff
):
    short_cooloff.API_TOKEN_FAILURE_LIMIT = 3
    _, good = ApiToken.issue(participant, "script")
    for _ in range(2):
        assert api_get(client, "rrl_wrong", "10.1.0.1").status_code == 401
    locked = api_get(client, "rrl_wrong", "10.1.0.1")
    started = time.monotonic()
    assert locked.status_code == 429
    assert locked["Content-Type"] == "application/json"
    assert locked["Retry-After"] == str(COOLOFF)
    body = locked.json()
    assert body["error"] == f"Too many unknown tokens from your address; try again in {COOLOFF} s."
    assert body["details"] == {"retry_after": COOLOFF}

    # While locked, unknown tokens from that address wait; a good one is never refused.
    waiting = api_get(client, "rrl_wrong", "10.1.0.1")
    assert waiting.status_code == 429 and 1 <= int(waiting["Retry-After"]) <= COOLOFF
    assert api_get(client, good, "10.1.0.1").status_code == 200
    assert api_get(client, good, "10.1.0.2").status_code == 200
    assert api_get(client, "rrl_wrong", "10.1.0.2").status_code == 401
    # No header, no token check: anonymous reads are never throttled.
    assert client.get("/api/benchmarks/", REMOTE_ADDR="10.1.0.1").status_code == 200

    time.sleep(max(0.0, COOLOFF + 0.2 - (time.monotonic() - started)))
    assert api_get(client, "rrl_wrong", "10.1.0.1").status_code == 401  # a fresh count


def test_twenty_bad_tokens_from_an_address_do_not_lock_out_a_good_one(
    client, participant, settings
):
    """The default limit, on the Redis cache the deployment uses."""
    assert settings.API_TOKEN_FAILURE_LIMIT == 20
    settings.CACHES = {"default": cache_from_url(_redis_url())}
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.7"
    from django.core.cache import cache

    keys = [f"throttle:api-token:{address}:{k}" for k in ("failures", "locked-until")]
    _, good = ApiToken.issue(participant, "script")
    try:
        answers = [api_get(client, f"rrl_wrong{i}", address).status_code for i in range(20)]
        assert answers == [401] * 19 + [429]
        assert api_get(client, "rrl_wrong", address).status_code == 429
        assert api_get(client, good, address).status_code == 200
        assert api_get(client, good, address).status_code == 200
        assert api_get(client, "rrl_wrong", address).status_code == 429
    finally:
        cache.delete_many(keys)


def _redis_url() -> str:
    from tests.leaderboard.workers import redis_or_skip

    return redis_or_skip()


def test_with_redis_the_token_count_holds_across_processes(client, participant, settings):
    """Two web processes share one count: this process locks an address, a fresh Python
    process reading the same Redis sees the lock."""
    url = _redis_url()
    settings.CACHES = {"default": cache_from_url(url)}
    settings.API_TOKEN_FAILURE_LIMIT = 2
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.9"
    from django.core.cache import cache

    keys = [f"throttle:api-token:{address}:{k}" for k in ("failures", "locked-until")]
    cache.delete_many(keys)
    try:
        assert api_get(client, "rrl_wrong", address).status_code == 401
        assert api_get(client, "rrl_wrong", address).status_code == 429
        probe = (
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'leaderboard.settings';"
            "django.setup(); from leaderboard.accounts.throttle import token_wait;"
            f"print(token_wait({address!r}), token_wait('10.255.255.1'))"
        )
        result = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            env={**os.environ, "CACHE_URL": url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        wait, other = map(int, result.stdout.split())
        assert 800 <= wait <= settings.THROTTLE_COOLOFF_SECONDS and other == 0
    finally:
        cache.delete_many(keys)


def test_a_stopped_cache_leaves_the_api_working_unthrottled(client, participant, settings):
    with socket.socket() as probe:  # a port where nothing listens: Redis is "down"
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {"default": cache_from_url(f"redis://127.0.0.1:{port}/0")}
    settings.API_TOKEN_FAILURE_LIMIT = 1
    _, good = ApiToken.issue(participant, "script")
    for _ in range(3):
        response = api_get(client, "rrl_wrong")
        assert response.status_code == 401 and response["Content-Type"] == "application/json"
    assert api_get(client, good).status_code == 200


# --- Settings ---------------------------------------------------------------------------


def test_cache_url_chooses_redis_or_memory():
    from django.core.exceptions import ImproperlyConfigured

    assert cache_from_url("")["BACKEND"].endswith("LocMemCache")
    assert cache_from_url("locmem://")["BACKEND"].endswith("LocMemCache")
    redis = cache_from_url("redis://cache.example:6380/2")
    assert redis["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert redis["LOCATION"] == "redis://cache.example:6380/2"
    assert redis["OPTIONS"] == {"socket_connect_timeout": 1, "socket_timeout": 1}
    with pytest.raises(ImproperlyConfigured, match="memcached"):
        cache_from_url("memcached://x")


def test_throttle_settings_come_from_the_environment():
    probe = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'leaderboard.settings';"
        "django.setup(); from django.conf import settings as s;"
        "print(s.AXES_FAILURE_LIMIT, s.API_TOKEN_FAILURE_LIMIT, int(s.AXES_COOLOFF_TIME.total_seconds()),"
        " s.THROTTLE_COOLOFF_SECONDS, s.TRUSTED_PROXY_COUNT, s.CACHES['default']['BACKEND'],"
        " s.LOGIN_ADDRESS_FAILURE_LIMIT, s.LOGIN_DELAY_AFTER, s.LOGIN_DELAY_SECONDS)"
    )
    env = {
        **os.environ,
        "LOGIN_FAILURE_LIMIT": "4",
        "API_TOKEN_FAILURE_LIMIT": "7",
        "THROTTLE_COOLOFF_SECONDS": "60",
        "TRUSTED_PROXY_COUNT": "1",
        "CACHE_URL": "redis://127.0.0.1:6379/3",
        "LOGIN_ADDRESS_FAILURE_LIMIT": "250",
        "LOGIN_DELAY_AFTER": "5",
        "LOGIN_DELAY_SECONDS": "2",
    }
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.split() == [
        "4",
        "7",
        "60",
        "60",
        "1",
        "django.core.cache.backends.redis.RedisCache",
        "250",
        "5",
        "2",
    ], result.stderr
    env["LOGIN_FAILURE_LIMIT"] = "0"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    assert "LOGIN_FAILURE_LIMIT must be at least 1, got 0" in result.stderr
    env["LOGIN_FAILURE_LIMIT"], env["LOGIN_ADDRESS_FAILURE_LIMIT"] = "4", "0"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert "LOGIN_ADDRESS_FAILURE_LIMIT must be at least 1, got 0" in result.stderr
