"""Reading the environment for ``leaderboard/settings.py``: typed variables and URLs.

Each helper reads or parses one thing and refuses a bad value at start-up with
``ImproperlyConfigured``, naming the variable and what it takes. The URL parsers are the
platform's own rather than dj-database-url's or django-environ's because the platform's
URLs mean something those libraries do not: ``sqlite:///name`` is relative to the
project (not to the working directory), ``?host=`` gives PostgreSQL's socket folder,
mail takes ``console://``, ``?tls=1`` and ``?timeout=``, the Redis cache gets short
socket timeouts, and schemes the platform does not run on (``mysql``, ``memcached``)
are refused instead of configured. The long fixed tables the settings name are in
``leaderboard/settings_tables.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
QUEUE_NAME = re.compile(r"[A-Za-z0-9._:-]{1,100}")
BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def env_str(name: str, default: str = "") -> str:
    """The variable as it is set; unset or blank (``STATIC_ROOT=`` in ``.env.example``)
    is ``default``, as for every other kind of setting."""
    value = os.environ.get(name)
    return default if value is None or value.strip() == "" else value


def env_bool(name: str, default: bool = False) -> bool:
    """``1``, ``true``, ``yes`` or ``on`` (any case) is true, ``0``, ``false``, ``no`` or
    ``off`` false; unset or blank is ``default``. Anything else is refused: a typo in
    ``SECURE_COOKIES=ture`` must not quietly turn secure cookies off."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    if value.strip().lower() not in TRUE | FALSE:
        raise ImproperlyConfigured(
            f"{name} must be 1, true, yes or on, or 0, false, no or off; got {value!r}"
        )
    return value.strip().lower() in TRUE


def log_level(name: str, default: str) -> str:
    """A level of Python's logging (any case), as its upper-case name."""
    value = env_str(name, default).strip().upper()
    if value not in LOG_LEVELS:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(LOG_LEVELS)}; got {value!r}")
    return value


def env_int(
    name: str, default: int, minimum: int | None = None, unit: str = "", why: str = ""
) -> int:
    """An integer (unset or blank: ``default``), refused below ``minimum`` when given.

    ``env_int("LEASE_SECONDS", 60, 3, "seconds")`` with ``LEASE_SECONDS=1`` stops the
    start with "LEASE_SECONDS must be at least 3 seconds, got 1".
    """
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        number = default
    else:
        try:
            number = int(value)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from exc
    return number if minimum is None else at_least(name, number, minimum, unit, why)


def at_least(name: str, value: int, minimum: int, unit: str = "", why: str = "") -> int:
    """``value``, or a refusal naming the variable, the minimum and the reason."""
    if value < minimum:
        raise ImproperlyConfigured(
            f"{name} must be at least {minimum}{' ' + unit if unit else ''}, got {value}"
            + (f" ({why})" if why else "")
        )
    return value


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated list, items stripped, empty items dropped."""
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def queue_name(name: str, default: str) -> str:
    """A Celery queue name: letters, digits and ``._:-`` (``-Q`` takes a comma list)."""
    value = env_str(name, default).strip() or default
    if not QUEUE_NAME.fullmatch(value):
        raise ImproperlyConfigured(
            f"{name} must be a queue name of letters, digits and . _ : - (at most 100), "
            f"got {value!r}"
        )
    return value


def env_rate(name: str, default: str) -> str:
    """A request rate as Django REST framework reads it: ``600/minute``, ``20/h``.

    The number is positive; the period starts with ``s``, ``m``, ``h`` or ``d``.
    """
    rate = env_str(name, default)
    number, _, period = rate.partition("/")
    if not (number.isdigit() and int(number) > 0 and period[:1] in ("s", "m", "h", "d")):
        raise ImproperlyConfigured(
            f"{name} must be requests/period (period s, m, h or d), e.g. 600/minute; got {rate!r}"
        )
    return rate


def env_url(name: str, default: str = "") -> str:
    """An ``http(s)://host...`` URL, or empty (unset or blank: ``default``)."""
    return http_url(name, env_str(name, default))


def url_port(name: str, parts) -> int | None:
    """The port of a split URL, or a refusal naming the variable (never the password)."""
    try:
        return parts.port
    except ValueError:
        given = parts.netloc.rpartition("@")[2].rpartition(":")[2]
        raise ImproperlyConfigured(
            f"{name} must give its port as a number from 0 to 65535, got {given!r}"
        ) from None


def broker_url(name: str) -> str:
    """The Celery broker: ``redis://host:6379/0`` (``rediss://``, ``redis+socket://``), or
    empty (tasks run in-process). The platform's queues, visibility timeout and outbox
    are Redis's; anything else would start and fail only in a worker's traceback."""
    url = env_str(name)
    parts = urlsplit(url)
    if url and parts.scheme not in {"redis", "rediss", "redis+socket"}:
        shown = url.replace(parts.netloc, "***@" + parts.netloc.rpartition("@")[2], 1)
        raise ImproperlyConfigured(
            f"{name} must be a Redis URL such as redis://host:6379/0, got "
            f"{shown if '@' in parts.netloc else url!r}"
        )
    url_port(name, parts)
    return url


def database_from_url(url: str, conn_max_age: int = 60) -> dict:
    """``postgres://user:pass@host:port/name`` or ``sqlite:///path`` as DATABASES['default'].

    ``postgres:///name`` (no host) uses the local socket, ``?host=/run/postgresql`` names
    its folder; other query parameters go to the driver. ``sqlite:///db.sqlite3`` is
    relative to the project, ``sqlite:////tmp/x.db`` absolute. User and password are
    percent-decoded. A persistent connection is checked before a request reuses it, so
    after a PostgreSQL restart the next request reconnects instead of answering 500.
    Connecting gives up after 10 s (``?connect_timeout=`` to change it): a server that
    takes the connection and never answers would otherwise hold the request until
    gunicorn kills its worker.
    """
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = unquote(parts.path)
        if path.startswith("//"):
            path = path[1:]
        elif path.startswith("/"):
            path = str(BASE_DIR / path.lstrip("/"))
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path or str(BASE_DIR / "db.sqlite3"),
        }
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ImproperlyConfigured(f"DATABASE_URL scheme {parts.scheme!r} is not supported")
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    options.setdefault("connect_timeout", "10")  # a hung server: an error, not a held worker
    if not parts.path.strip("/") and "service" not in options:
        raise ImproperlyConfigured(
            "DATABASE_URL must name the database: postgres://user:pass@host:5432/<name>"
        )
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": options.pop("host", parts.hostname or ""),
        "PORT": str(url_port("DATABASE_URL", parts) or ""),
        "CONN_MAX_AGE": conn_max_age,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
    }


def email_from_url(url: str) -> dict:
    """``smtp://user:pass@host:587/?tls=1`` as Django's EMAIL_* settings.

    ``console://`` prints mails to the log (development); ``smtp://`` speaks plain SMTP,
    with STARTTLS when ``?tls=1``; ``smtps://`` is SMTP over TLS (port 465 by default).
    ``?timeout=`` bounds each SMTP operation (10 s by default) so a dead mail server
    cannot hold a web worker. User and password are percent-decoded.
    """
    parts = urlsplit(url)
    if parts.scheme == "console":
        return {"EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend"}
    if parts.scheme not in {"smtp", "smtps"}:
        raise ImproperlyConfigured(
            f"EMAIL_URL scheme {parts.scheme!r} is not supported (console, smtp, smtps)"
        )
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    secure = parts.scheme == "smtps"
    starttls = options.get("tls", "0").lower() in TRUE
    if not options.get("timeout", "10").isdigit():
        raise ImproperlyConfigured(
            f"EMAIL_URL timeout must be whole seconds, got {options['timeout']!r}"
        )
    port = url_port("EMAIL_URL", parts)
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parts.hostname or "localhost",
        "EMAIL_PORT": port or (465 if secure else 587 if starttls else 25),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_SSL": secure,
        "EMAIL_USE_TLS": starttls and not secure,
        "EMAIL_TIMEOUT": int(options.get("timeout", "10")),
    }


def cache_from_url(url: str) -> dict:
    """``redis://host:6379/1`` as Django's RedisCache; empty or ``locmem://``: in memory.

    The cache holds the API's bad-token counters and request rates: one Redis shared by
    every web process makes the limits hold across them; the in-memory cache counts per
    process. A stopped or unreachable Redis answers within a second (callers fail open).
    """
    scheme = urlsplit(url).scheme
    url_port("CACHE_URL", urlsplit(url))
    if scheme in {"", "locmem"}:
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    if scheme not in {"redis", "rediss", "unix"}:
        raise ImproperlyConfigured(f"CACHE_URL scheme {scheme!r} is not supported (redis, locmem)")
    return {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": url,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }


def site_url(url: str) -> str:
    """The site's address for links in mails: ``http(s)://host[:port]``, no trailing slash."""
    url = url.rstrip("/")
    if urlsplit(url).scheme not in {"http", "https"} or not urlsplit(url).netloc:
        raise ImproperlyConfigured(f"SITE_URL must be http(s)://host[:port], got {url!r}")
    url_port("SITE_URL", urlsplit(url))
    return url


def http_url(name: str, url: str, example: str = "") -> str:
    """``url`` when it is empty or ``http(s)://host...``, else a refusal naming ``name``."""
    parts = urlsplit(url)
    if url and (parts.scheme not in {"http", "https"} or not parts.hostname):
        such = f" such as {example}" if example else ""
        raise ImproperlyConfigured(f"{name} must be an http(s) URL{such}, got {url!r}")
    url_port(name, parts)
    return url


def s3_storage(
    *,
    bucket: str,
    endpoint_url: str = "",
    access_key: str = "",
    secret_key: str = "",
    region: str = "us-east-1",
    timeout: int = 10,
) -> dict:
    """STORAGES["default"] for an S3-compatible bucket (django-storages' S3Storage).

    ``endpoint_url`` empty means AWS itself; MinIO, Ceph or moto give theirs
    (``http://minio:9000``), addressed by path (``endpoint/bucket/key``), which every
    S3-compatible store serves. Keys empty: boto3's own chain (environment, instance
    role). Stored names are never overwritten (a suffix is added, as on disk); files
    read through ``open`` spill to a temporary file past 2.5 MB, never held in memory.
    Each request waits ``timeout`` seconds per attempt, three attempts.
    """
    from botocore.config import Config

    if not BUCKET_NAME.match(bucket):
        raise ImproperlyConfigured(
            f"AWS_STORAGE_BUCKET_NAME must be an S3 bucket name (3-63 lower-case letters, "
            f"digits, '.' or '-'), got {bucket!r}"
        )
    http_url("AWS_S3_ENDPOINT_URL", endpoint_url, "http://minio:9000")
    if bool(access_key) != bool(secret_key):
        raise ImproperlyConfigured(
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither "
            "(boto3 then finds credentials itself, e.g. an instance role)"
        )
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            "endpoint_url": endpoint_url or None,
            "access_key": access_key or None,
            "secret_key": secret_key or None,
            "region_name": region or None,
            "file_overwrite": False,
            "default_acl": None,
            "querystring_auth": True,
            "max_memory_size": 2_621_440,
            "client_config": Config(
                signature_version="s3v4",
                s3={"addressing_style": "path" if endpoint_url else "auto"},
                connect_timeout=timeout,
                read_timeout=timeout,
                retries={"mode": "standard", "total_max_attempts": 3},
            ),
        },
    }
