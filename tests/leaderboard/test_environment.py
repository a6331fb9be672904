"""The helpers the settings read the environment with (leaderboard/environment.py): each
takes what the docs say, and refuses anything else with the variable's name. The URL
parsers are tested beside what they configure: the database in test_settings.py, mail
in test_password_reset.py, the cache in test_throttle.py, the bucket in test_storage.py."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from leaderboard import environment, settings_tables


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), ("TRUE", True), (" yes ", True), ("on", True), ("0", False), ("no", False)],
)
def test_env_bool_reads_the_usual_spellings(monkeypatch, value, expected):
    monkeypatch.setenv("SOME_FLAG", value)
    assert environment.env_bool("SOME_FLAG", not expected) is expected


@pytest.mark.parametrize("value", ["ture", "2", "enabled"])
def test_env_bool_refuses_any_other_spelling(monkeypatch, value):
    monkeypatch.setenv("SOME_FLAG", value)
    with pytest.raises(ImproperlyConfigured, match=f"^SOME_FLAG must be 1, true, .*got '{value}'$"):
        environment.env_bool("SOME_FLAG", True)


def test_log_levels_are_python_logging_names_in_any_case(monkeypatch):
    monkeypatch.setenv("SOME_LEVEL", "warning")
    assert environment.log_level("SOME_LEVEL", "INFO") == "WARNING"
    monkeypatch.setenv("SOME_LEVEL", "verbose")
    with pytest.raises(ImproperlyConfigured, match="^SOME_LEVEL must be one of CRITICAL, "):
        environment.log_level("SOME_LEVEL", "INFO")


@pytest.mark.parametrize("value", [None, "", "  "])
def test_unset_or_blank_variables_take_their_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("SOME_NUMBER", raising=False)
    else:
        monkeypatch.setenv("SOME_NUMBER", value)
        monkeypatch.setenv("SOME_FLAG", value)
        assert environment.env_bool("SOME_FLAG", True) is True
    assert environment.env_int("SOME_NUMBER", 7) == 7
    assert environment.env_str("SOME_NUMBER", "seven") == "seven"
    assert environment.env_int("SOME_NUMBER", 7, 1, "seconds") == 7


def test_env_int_refuses_what_is_not_an_integer_or_below_its_minimum(monkeypatch):
    monkeypatch.setenv("SOME_NUMBER", "12")
    assert environment.env_int("SOME_NUMBER", 3, 12) == 12
    monkeypatch.setenv("SOME_NUMBER", "soon")
    with pytest.raises(ImproperlyConfigured, match=r"^SOME_NUMBER must be an integer, got 'soon'$"):
        environment.env_int("SOME_NUMBER", 3)
    monkeypatch.setenv("SOME_NUMBER", "2")
    with pytest.raises(
        ImproperlyConfigured, match=r"^SOME_NUMBER must be at least 3 seconds, got 2 \(why\)$"
    ):
        environment.env_int("SOME_NUMBER", 60, 3, "seconds", "why")
    with pytest.raises(ImproperlyConfigured, match=r"^SOME_NUMBER must be at least 3, got 2$"):
        environment.env_int("SOME_NUMBER", 60, 3)


def test_a_default_below_the_minimum_is_refused_too(monkeypatch):
    monkeypatch.delenv("SOME_NUMBER", raising=False)
    with pytest.raises(ImproperlyConfigured, match="SOME_NUMBER must be at least 1, got 0"):
        environment.env_int("SOME_NUMBER", 0, 1)


def test_env_list_splits_on_commas_and_drops_blanks(monkeypatch):
    monkeypatch.setenv("SOME_HOSTS", " a.example , ,b.example,")
    assert environment.env_list("SOME_HOSTS") == ["a.example", "b.example"]
    monkeypatch.delenv("SOME_HOSTS")
    assert environment.env_list("SOME_HOSTS", "x,y") == ["x", "y"]


def test_queue_names_are_letters_digits_and_a_few_marks(monkeypatch):
    monkeypatch.setenv("SOME_QUEUE", "  ")
    assert environment.queue_name("SOME_QUEUE", "score") == "score"
    monkeypatch.setenv("SOME_QUEUE", "lb.score:1")
    assert environment.queue_name("SOME_QUEUE", "score") == "lb.score:1"
    for bad in ("a,b", "a b", "x" * 101):
        monkeypatch.setenv("SOME_QUEUE", bad)
        with pytest.raises(ImproperlyConfigured, match="SOME_QUEUE must be a queue name"):
            environment.queue_name("SOME_QUEUE", "score")


@pytest.mark.parametrize("rate", ["600/minute", "1/s", "20/hour", "5/day"])
def test_env_rate_takes_requests_per_period(monkeypatch, rate):
    monkeypatch.setenv("SOME_RATE", rate)
    assert environment.env_rate("SOME_RATE", "1/s") == rate


@pytest.mark.parametrize("rate", ["lots", "0/hour", "-1/minute", "5/fortnight", "5", "/minute"])
def test_env_rate_refuses_anything_else(monkeypatch, rate):
    monkeypatch.setenv("SOME_RATE", rate)
    with pytest.raises(ImproperlyConfigured, match=r"^SOME_RATE must be requests/period"):
        environment.env_rate("SOME_RATE", "1/s")


def test_env_url_takes_http_urls_or_nothing(monkeypatch):
    monkeypatch.delenv("SOME_URL", raising=False)
    assert environment.env_url("SOME_URL") == ""
    monkeypatch.setenv("SOME_URL", "https://files.example.org:9000")
    assert environment.env_url("SOME_URL") == "https://files.example.org:9000"
    for bad in ("localhost:9000", "ftp://files.example.org", "http://"):
        monkeypatch.setenv("SOME_URL", bad)
        with pytest.raises(
            ImproperlyConfigured, match=f"^SOME_URL must be an http\\(s\\) URL, got '{bad}'$"
        ):
            environment.env_url("SOME_URL")


def test_the_site_url_loses_its_trailing_slash_and_needs_a_host():
    assert environment.site_url("https://lb.example.org/") == "https://lb.example.org"
    assert environment.site_url("http://localhost:8000") == "http://localhost:8000"
    for bad in ("lb.example.org", "https://", "mailto:x@example.org"):
        with pytest.raises(ImproperlyConfigured, match=r"^SITE_URL must be http\(s\)://host"):
            environment.site_url(bad)


def test_the_database_url_keeps_driver_options_and_the_connection_age():
    db = environment.database_from_url("postgresql://lb@db/leaderboard?sslmode=require&host=/s", 0)
    assert (db["HOST"], db["OPTIONS"], db["CONN_MAX_AGE"]) == (
        "/s",
        {"sslmode": "require", "connect_timeout": "10"},
        0,
    )
    assert db["CONN_HEALTH_CHECKS"] is True
    assert environment.database_from_url("sqlite://")["NAME"] == str(
        environment.BASE_DIR / "db.sqlite3"
    )


def test_scoring_and_comparing_queues_must_differ():
    queues = settings_tables.celery_queues("celery", "score", "compare")
    assert [(q.name, q.routing_key, q.exchange.name) for q in queues] == [
        ("celery", "celery", "celery"),
        ("score", "score", "score"),
        ("compare", "compare", "compare"),
    ]
    assert all(isinstance(q, Queue) for q in queues)
    assert [q.name for q in settings_tables.celery_queues("score", "score", "compare")] == [
        "score",
        "compare",
    ]
    with pytest.raises(ImproperlyConfigured, match="must differ \\(both 'jobs'\\)"):
        settings_tables.celery_queues("celery", "jobs", "jobs")


def test_the_beat_schedule_sends_the_outbox_at_its_interval_and_drops_late_ticks():
    schedule = settings_tables.beat_schedule(15)
    assert schedule["send-unsent-submissions"]["schedule"] == 15.0
    assert schedule["send-unsent-submissions"]["options"] == {"expires": 15.0}
    assert schedule["sweep-stuck-submissions"]["schedule"] == 60.0
    assert schedule["discard-expired-uploads"]["options"] == {"expires": 3600.0}


def test_the_api_rates_reach_the_rest_framework_settings():
    rates = settings_tables.rest_framework("9/minute", "8/hour", "7/day")["DEFAULT_THROTTLE_RATES"]
    assert rates == {"token": "9/minute", "anonymous": "8/hour", "login": "7/day"}


def test_the_settings_use_these_helpers(settings):
    assert settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["token"] == settings.API_RATE_TOKEN
    assert settings.SPECTACULAR_SETTINGS is settings_tables.API_SCHEMA
    assert settings.CONTENT_SECURITY_POLICY == {"DIRECTIVES": settings_tables.CSP_DIRECTIVES}
    assert settings.PERMISSIONS_POLICY == {
        feature: [] for feature in settings_tables.BROWSER_FEATURES
    }
    assert {"camera", "geolocation", "usb"} <= set(settings.PERMISSIONS_POLICY)


@pytest.mark.parametrize(
    ("name", "parse", "url", "given"),
    [
        ("DATABASE_URL", environment.database_from_url, "postgres://u:pw@db:port/lb", "port"),
        ("DATABASE_URL", environment.database_from_url, "postgres://u:pw@db:99999/lb", "99999"),
        ("EMAIL_URL", environment.email_from_url, "smtp://u:pw@mail:58x/?tls=1", "58x"),
        ("CACHE_URL", environment.cache_from_url, "redis://redis:63a9/1", "63a9"),
        ("SITE_URL", environment.site_url, "https://lb.example.org:x", "x"),
        ("SOME_URL", lambda url: environment.http_url("SOME_URL", url), "http://s3:9o00", "9o00"),
    ],
)
def test_a_bad_port_in_a_url_is_refused_naming_the_variable_not_the_password(
    name, parse, url, given
):
    with pytest.raises(ImproperlyConfigured) as refused:
        parse(url)
    assert str(refused.value) == (
        f"{name} must give its port as a number from 0 to 65535, got {given!r}"
    )
    assert "pw" not in str(refused.value)


def test_a_bad_mail_timeout_is_refused_without_the_password():
    with pytest.raises(ImproperlyConfigured) as refused:
        environment.email_from_url("smtp://u:secret@mail:25/?timeout=soon")
    assert str(refused.value) == "EMAIL_URL timeout must be whole seconds, got 'soon'"


def test_the_broker_is_redis_or_nothing(monkeypatch):
    monkeypatch.setenv("SOME_BROKER", "")
    assert environment.broker_url("SOME_BROKER") == ""
    monkeypatch.setenv("SOME_BROKER", "rediss://redis.example.org:6380/0")
    assert environment.broker_url("SOME_BROKER") == "rediss://redis.example.org:6380/0"
    for bad, said in [
        ("localhost:6379", "must be a Redis URL such as redis://host:6379/0, got 'localhost:6379'"),
        (
            "amqp://u:pw@rabbit//",
            "must be a Redis URL such as redis://host:6379/0, got 'amqp://***@rabbit//'",
        ),
        ("redis://redis:63a9/0", "must give its port as a number from 0 to 65535, got '63a9'"),
    ]:
        monkeypatch.setenv("SOME_BROKER", bad)
        with pytest.raises(ImproperlyConfigured) as refused:
            environment.broker_url("SOME_BROKER")
        assert str(refused.value) == f"SOME_BROKER {said}"


def test_connecting_to_the_database_gives_up_after_a_bound(tmp_path):
    """A PostgreSQL that takes the connection and never answers (hung, or a half-open
    proxy) is an error within the bound, not a web worker held until gunicorn's timeout."""
    import socket
    import time

    import psycopg

    db = environment.database_from_url("postgres://lb@127.0.0.1/lb?connect_timeout=1")
    assert environment.database_from_url("postgres://lb@db/lb")["OPTIONS"] == {
        "connect_timeout": "10"
    }
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(
                host="127.0.0.1", port=silent.getsockname()[1], user="lb", **db["OPTIONS"]
            )
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("url", ["postgres://lb:pw@db:5432", "postgres://lb:pw@db:5432/"])
def test_a_postgres_url_without_a_database_name_is_refused_at_start(url):
    """Not a start that passes and a 500 on every request ("Please supply the NAME")."""
    with pytest.raises(ImproperlyConfigured, match="^DATABASE_URL must name the database: "):
        environment.database_from_url(url)
    assert environment.database_from_url("postgres:///?service=lb")["NAME"] == ""
