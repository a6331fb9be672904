"""Settings for the leaderboard platform, all from environment variables.

Development defaults need nothing installed: an SQLite file in the project and Celery
tasks run eagerly in-process. Production (docker-compose) sets DATABASE_URL,
CELERY_BROKER_URL, SECRET_KEY, ALLOWED_HOSTS and DEBUG=0. Every variable is listed in
.env.example and in docs/settings.md.

Over 400 lines on purpose: the house style keeps one settings file, each variable next
to its comment and its validation, in blocks by concern (queues, /health/, ...).
"""

import datetime as dt
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from exc


def at_least(name: str, value: int, minimum: int, unit: str = "", why: str = "") -> int:
    """Refuse to start on a value below ``minimum``, naming the variable and the reason."""
    if value < minimum:
        raise ImproperlyConfigured(
            f"{name} must be at least {minimum}{' ' + unit if unit else ''}, got {value}"
            + (f" ({why})" if why else "")
        )
    return value


def queue_name(name: str, default: str) -> str:
    """A Celery queue name: letters, digits and ``._:-`` (``-Q`` takes a comma list)."""
    value = env_str(name, default).strip() or default
    if not re.fullmatch(r"[A-Za-z0-9._:-]{1,100}", value):
        raise ImproperlyConfigured(
            f"{name} must be a queue name of letters, digits and . _ : - (at most 100), "
            f"got {value!r}"
        )
    return value


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def database_from_url(url: str) -> dict:
    """Turn ``postgres://user:pass@host:port/name`` or ``sqlite:///path`` into DATABASES['default'].

    ``postgres:///name`` (no host) uses the local socket; ``?host=/run/postgresql`` also works.
    """
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = unquote(parts.path)
        if path.startswith("//"):  # sqlite:////abs/path
            path = path[1:]
        elif path.startswith("/"):  # sqlite:///relative/to/project
            path = str(BASE_DIR / path.lstrip("/"))
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path or str(BASE_DIR / "db.sqlite3"),
        }
    if parts.scheme in {"postgres", "postgresql", "pgsql"}:
        options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        host = options.pop("host", parts.hostname or "")
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": host,
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": env_int("CONN_MAX_AGE", 60),
            # A persistent connection is checked before a request reuses it: after a
            # PostgreSQL restart the next request reconnects instead of answering 500.
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parts.scheme!r} is not supported")


def email_from_url(url: str) -> dict:
    """Turn ``smtp://user:pass@host:587/?tls=1`` into Django's EMAIL_* settings.

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
    starttls = options.get("tls", "0").lower() in {"1", "true", "yes", "on"}
    if not options.get("timeout", "10").isdigit():
        raise ImproperlyConfigured(f"EMAIL_URL timeout must be whole seconds: {url!r}")
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parts.hostname or "localhost",
        "EMAIL_PORT": parts.port or (465 if secure else 587 if starttls else 25),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_SSL": secure,
        "EMAIL_USE_TLS": starttls and not secure,
        "EMAIL_TIMEOUT": int(options.get("timeout", "10")),
    }


def cache_from_url(url: str) -> dict:
    """``redis://host:6379/1`` -> Django's RedisCache; empty or ``locmem://`` -> memory.

    The cache holds the API's bad-token counters: one Redis shared by every web process
    makes the limit hold across them; the in-memory cache counts per process.
    """
    scheme = urlsplit(url).scheme
    if scheme in {"", "locmem"}:
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    if scheme in {"redis", "rediss", "unix"}:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            # A stopped or unreachable Redis answers within a second; callers fail open.
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    raise ImproperlyConfigured(f"CACHE_URL scheme {scheme!r} is not supported (redis, locmem)")


BUCKET_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


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
    """
    from botocore.config import Config

    if not BUCKET_NAME_RE.match(bucket):
        raise ImproperlyConfigured(
            f"AWS_STORAGE_BUCKET_NAME must be an S3 bucket name (3-63 lower-case letters, "
            f"digits, '.' or '-'), got {bucket!r}"
        )
    if endpoint_url:
        parts = urlsplit(endpoint_url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ImproperlyConfigured(
                f"AWS_S3_ENDPOINT_URL must be an http(s) URL such as http://minio:9000, "
                f"got {endpoint_url!r}"
            )
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


DEBUG = env_bool("DEBUG", True)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "dev-only-secret-key-not-for-production-0123456789-abcdefghijklmnop"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "axes",
    "csp",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "leaderboard",
]

MIDDLEWARE = [
    "leaderboard.uploads.middleware.RequestStartMiddleware",  # first: before any body is read
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lock-out into the 429 page
]

ROOT_URLCONF = "leaderboard.urls"
WSGI_APPLICATION = "leaderboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": database_from_url(env_str("DATABASE_URL", "sqlite:///db.sqlite3"))}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "my_submissions"
LOGOUT_REDIRECT_URL = "home"

# Throttling (docs/settings.md, "Log-in and token throttling"; accounts/throttle.py). django-axes
# counts failed log-ins per (username, address) pair in the database, so the limits hold
# across web processes: after LOGIN_DELAY_AFTER failures of a pair each further attempt
# waits LOGIN_DELAY_SECONDS doubled per failure; LOGIN_FAILURE_LIMIT failures lock the
# pair, LOGIN_ADDRESS_FAILURE_LIMIT failures from one address (any usernames) lock the
# address, for THROTTLE_COOLOFF_SECONDS after the last failure. Refused attempts are a
# 429 with Retry-After, checked without the password, and extend nothing; a successful
# log-in clears that username's failures from that address only.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
THROTTLE_COOLOFF_SECONDS = env_int("THROTTLE_COOLOFF_SECONDS", 900)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = dt.timedelta(seconds=THROTTLE_COOLOFF_SECONDS)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 100)
LOGIN_DELAY_AFTER = env_int("LOGIN_DELAY_AFTER", 3)
LOGIN_DELAY_SECONDS = env_int("LOGIN_DELAY_SECONDS", 1)
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # failures only; no log of every successful log-in
AXES_VERBOSE = False  # no start-up banner on every manage.py command
AXES_HANDLER = "leaderboard.accounts.throttle.LoginAttempts"
AXES_LOCKOUT_CALLABLE = "leaderboard.accounts.throttle.locked_out"
AXES_CLIENT_IP_CALLABLE = "leaderboard.accounts.throttle.client_address"
# Behind N reverse proxies the client is the N-th address from the right of
# X-Forwarded-For; with 0 (direct) it is REMOTE_ADDR.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
# The API: from this many unknown tokens from one address within the cool-off on, the
# address's unknown tokens get 429 with Retry-After (valid tokens always authenticate)
# until THROTTLE_COOLOFF_SECONDS after the failure that reached the limit. Counted in
# the cache below.
API_TOKEN_FAILURE_LIMIT = env_int("API_TOKEN_FAILURE_LIMIT", 20)
for _name, _value in [
    ("LOGIN_FAILURE_LIMIT", AXES_FAILURE_LIMIT),
    ("LOGIN_ADDRESS_FAILURE_LIMIT", LOGIN_ADDRESS_FAILURE_LIMIT),
    ("LOGIN_DELAY_AFTER", LOGIN_DELAY_AFTER),
    ("LOGIN_DELAY_SECONDS", LOGIN_DELAY_SECONDS),
    ("API_TOKEN_FAILURE_LIMIT", API_TOKEN_FAILURE_LIMIT),
    ("THROTTLE_COOLOFF_SECONDS", THROTTLE_COOLOFF_SECONDS),
]:
    if _value < 1:
        raise ImproperlyConfigured(f"{_name} must be at least 1, got {_value}")

CACHES = {"default": cache_from_url(env_str("CACHE_URL"))}

# The JSON API (leaderboard/api/, docs/api.md): Django REST framework with the
# hashed bearer tokens, JSON errors, and request rates counted per token (per address
# without one) in the cache above; the schema is generated by drf-spectacular.
API_RATE_TOKEN = env_str("API_RATE_TOKEN", "600/minute")
API_RATE_ANONYMOUS = env_str("API_RATE_ANONYMOUS", "300/minute")
API_RATE_LOGIN = env_str("API_RATE_LOGIN", "20/hour")
for _name, _rate in [
    ("API_RATE_TOKEN", API_RATE_TOKEN),
    ("API_RATE_ANONYMOUS", API_RATE_ANONYMOUS),
    ("API_RATE_LOGIN", API_RATE_LOGIN),
]:
    _number, _, _period = _rate.partition("/")
    if not (_number.isdigit() and int(_number) > 0 and _period[:1] in ("s", "m", "h", "d")):
        raise ImproperlyConfigured(
            f"{_name} must be requests/period (period s, m, h or d), e.g. 600/minute; got {_rate!r}"
        )
# How long a submit's Idempotency-Key is remembered (its first answer replayed).
IDEMPOTENCY_KEY_HOURS = env_int("IDEMPOTENCY_KEY_HOURS", 24)
if IDEMPOTENCY_KEY_HOURS < 1:
    raise ImproperlyConfigured(
        f"IDEMPOTENCY_KEY_HOURS must be at least 1, got {IDEMPOTENCY_KEY_HOURS}"
    )
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["leaderboard.api.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_THROTTLE_CLASSES": ["leaderboard.api.throttling.CallerRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "token": API_RATE_TOKEN,
        "anonymous": API_RATE_ANONYMOUS,
        "login": API_RATE_LOGIN,
    },
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "leaderboard.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "STRICT_JSON": True,  # NaN and infinity are not JSON: null instead (serializers see to it)
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Ranked retrieval leaderboards API",
    "VERSION": "2",
    "DESCRIPTION": (
        "Benchmarks, leaderboards, comparisons, exports, submitting runs and polling their "
        "scores. Get a token with `POST /api/tokens/` (username and password) or at "
        "/accounts/tokens/, and send it as `Authorization: Bearer <token>`. Without a token, "
        "GET requests see what an anonymous reader sees. Every error is "
        '`{"error": ..., "details": {...}}`.'
    ),
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,  # uploads as multipart with format: binary
    "SCHEMA_PATH_PREFIX": "/api/",
    # <id:...> (leaderboard/converters.py): at most 18 digits
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999_999}
    },
    "SWAGGER_UI_DIST": "SIDECAR",  # served from this site: no CDN
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"SubmissionStatus": "leaderboard.models.Submission.Status"},
    "PREPROCESSING_HOOKS": ["leaderboard.api.schema.without_presigned_uploads"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "leaderboard.api.schema.path_examples",
    ],
}

# Mail (password reset). Development prints mails to the console; production sends
# them with SMTP (EMAIL_URL, e.g. smtp://user:pass@mail.example.org:587/?tls=1).
globals().update(
    email_from_url(env_str("EMAIL_URL", "console://" if DEBUG else "smtp://localhost"))
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "leaderboard@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# The site's address as readers reach it, for links in mails sent outside a request
# (a worker mailing that a run was scored): scheme and host, no path.
SITE_URL = env_str("SITE_URL", "http://localhost:8000").rstrip("/")
if urlsplit(SITE_URL).scheme not in {"http", "https"} or not urlsplit(SITE_URL).netloc:
    raise ImproperlyConfigured(f"SITE_URL must be http(s)://host[:port], got {SITE_URL!r}")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "media/"

# --- Object storage (docs/settings.md, "Where files live") --------------
# Uploaded runs and judgments go to an S3-compatible bucket (django-storages, boto3)
# when AWS_STORAGE_BUCKET_NAME is set, else under MEDIA_ROOT. With a bucket, web
# processes and workers on different hosts share the files through it and nothing else.
AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
# A file store that does not answer costs a request or a task this many seconds per
# attempt (three attempts), never a hung web process.
STORAGE_TIMEOUT_SECONDS = at_least(
    "STORAGE_TIMEOUT_SECONDS", env_int("STORAGE_TIMEOUT_SECONDS", 10), 1, "seconds"
)
# How long a presigned upload URL (leaderboard/uploads/presigned.py) stays valid.
PRESIGNED_UPLOAD_SECONDS = at_least(
    "PRESIGNED_UPLOAD_SECONDS", env_int("PRESIGNED_UPLOAD_SECONDS", 3600), 60, "seconds"
)
# The bucket's address as participants' clients reach it, when it differs from the one
# web and workers use (MinIO in docker-compose: http://minio:9000 inside, the host's
# public name outside). Presigned URLs are signed for this host. Empty: the same.
PRESIGNED_ENDPOINT_URL = env_str("PRESIGNED_ENDPOINT_URL")
if PRESIGNED_ENDPOINT_URL and urlsplit(PRESIGNED_ENDPOINT_URL).scheme not in {"http", "https"}:
    raise ImproperlyConfigured(
        f"PRESIGNED_ENDPOINT_URL must be an http(s) URL, got {PRESIGNED_ENDPOINT_URL!r}"
    )
if AWS_STORAGE_BUCKET_NAME:
    STORAGES["default"] = s3_storage(
        bucket=AWS_STORAGE_BUCKET_NAME,
        endpoint_url=env_str("AWS_S3_ENDPOINT_URL"),
        access_key=env_str("AWS_ACCESS_KEY_ID"),
        secret_key=env_str("AWS_SECRET_ACCESS_KEY"),
        region=env_str("AWS_S3_REGION_NAME", "us-east-1"),
        timeout=STORAGE_TIMEOUT_SECONDS,
    )
# --- end of object storage -------------------------------------------------------------

# Uploads: stream anything above 2.5 MB to a temporary file, never hold it in memory.
MAX_UPLOAD_MB = env_int("MAX_UPLOAD_MB", 500)
# A run whose upload began before a phase closed is still taken this long after the close.
UPLOAD_GRACE_SECONDS = env_int("UPLOAD_GRACE_SECONDS", 300)
# What a (gzipped) file may expand to, counted while decompressing: a gzip bomb is
# refused at the limit, by the upload check and by the worker's reader alike.
MAX_UNCOMPRESSED_MB = env_int("MAX_UNCOMPRESSED_MB", min(4 * MAX_UPLOAD_MB, 10240))
if not 1 <= MAX_UNCOMPRESSED_MB <= 10240:
    raise ImproperlyConfigured(
        f"MAX_UNCOMPRESSED_MB must be between 1 and 10240 (10 GB), got {MAX_UNCOMPRESSED_MB}"
    )
# A gzipped upload whose content grows past this many times the compressed bytes read
# (once past 8 MB of content) is refused there, without inflating the rest: real runs
# compress 5-15 times, a gzip bomb a thousand times.
MAX_GZIP_RATIO = at_least("MAX_GZIP_RATIO", env_int("MAX_GZIP_RATIO", 100), 20, "")
# After this many refused uploads (bad file, too large) within UPLOAD_REFUSAL_WINDOW
# seconds, a user's uploads are refused at once (429) until the window ends; counted in
# the cache, per user.
UPLOAD_REFUSAL_LIMIT = at_least("UPLOAD_REFUSAL_LIMIT", env_int("UPLOAD_REFUSAL_LIMIT", 20), 1, "")
UPLOAD_REFUSAL_WINDOW = at_least(
    "UPLOAD_REFUSAL_WINDOW", env_int("UPLOAD_REFUSAL_WINDOW", 3600), 60, "seconds"
)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# Django's two handlers, reading 1 MB pieces, the second hashing a file as it arrives.
FILE_UPLOAD_HANDLERS = [
    "leaderboard.uploads.handlers.MemoryUploadHandler",
    "leaderboard.uploads.handlers.HashingUploadHandler",
]
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
FILE_UPLOAD_PERMISSIONS = 0o644

# Security: safe by default when DEBUG is off (python manage.py check --deploy is clean).
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("TRUST_X_FORWARDED_PROTO", False) else None
)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Healthchecks speak plain HTTP to the web process from inside its host (docker compose).
SECURE_REDIRECT_EXEMPT = [r"^health/$"]
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp) on every response: scripts, styles, images and
# fetches from this site only, no inline script or style, no plugins, no framing, forms
# post only here. The admin needs nothing more (its scripts are files; its data rides in
# data- attributes and JSON script elements, which CSP does not execute).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "object-src": ["'none'"],
    }
}
# Permissions-Policy (django-permissions-policy) on every response: the site uses no
# camera, microphone, location, payment, sensor or other powerful browser feature, so
# each is refused to the site and to anything it might embed.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer",
        "autoplay",
        "browsing-topics",
        "camera",
        "display-capture",
        "encrypted-media",
        "fullscreen",
        "geolocation",
        "gyroscope",
        "hid",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "publickey-credentials-get",
        "screen-wake-lock",
        "serial",
        "usb",
        "xr-spatial-tracking",
    )
}

# Celery. With no broker configured, tasks run eagerly in-process.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or "cache+memory://")
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_DEFAULT_QUEUE = queue_name("CELERY_QUEUE", "celery")
# --- Many workers: scoring and comparing on queues of their own -------------------
# A run's scoring goes to CELERY_SCORE_QUEUE, its comparisons to CELERY_COMPARE_QUEUE
# (leaderboard.celery.route); beat's housekeeping (sweep, outbox) stays on CELERY_QUEUE.
# A worker started without -Q consumes all three, in turn (kombu's round robin), so a
# comparison fan-out delays the next scoring by at most one comparison per worker
# process; a worker started with -Q score consumes scoring only, and is never delayed.
CELERY_SCORE_QUEUE = queue_name("CELERY_SCORE_QUEUE", "score")
CELERY_COMPARE_QUEUE = queue_name("CELERY_COMPARE_QUEUE", "compare")
if CELERY_SCORE_QUEUE == CELERY_COMPARE_QUEUE:
    raise ImproperlyConfigured(
        f"CELERY_SCORE_QUEUE and CELERY_COMPARE_QUEUE must differ (both {CELERY_SCORE_QUEUE!r}):"
        " comparisons on the scoring queue would delay the next run's scoring"
    )
CELERY_TASK_QUEUES = [
    Queue(name, Exchange(name), routing_key=name)
    for name in dict.fromkeys([CELERY_TASK_DEFAULT_QUEUE, CELERY_SCORE_QUEUE, CELERY_COMPARE_QUEUE])
]
CELERY_TASK_ROUTES = ["leaderboard.celery.route"]
# --- end of the queues block -----------------------------------------------------------
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The longest task (scoring a 7M-line run and comparing it with every other run) takes
# well under a minute; the visibility timeout must exceed it or Redis redelivers a task
# that is still running.
TASK_TIME_LIMIT = at_least(
    "TASK_TIME_LIMIT",
    env_int("TASK_TIME_LIMIT", 1800),
    10,
    "seconds",
    "the soft limit, when a task gives its run back, comes a tenth of it, at most a "
    "minute, earlier",
)
CELERY_TASK_TIME_LIMIT = TASK_TIME_LIMIT
# The soft limit leaves the task time to give its run back before the hard kill: a
# minute, or a tenth of the limit when that is shorter (1740 s of 1800, 54 s of 60).
CELERY_TASK_SOFT_TIME_LIMIT = TASK_TIME_LIMIT - min(60, TASK_TIME_LIMIT // 10)
# A broker that is down or hung costs a publish a few seconds, never a hung request:
# socket timeouts, and two quick retries before the outbox takes over.
BROKER_TIMEOUT_SECONDS = at_least("BROKER_TIMEOUT_SECONDS", env_int("BROKER_TIMEOUT_SECONDS", 3), 1)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": at_least(
        "CELERY_VISIBILITY_TIMEOUT", env_int("CELERY_VISIBILITY_TIMEOUT", 2 * TASK_TIME_LIMIT), 1
    ),
    # Look for messages of dead workers every 10 s (kombu's default scans every 100 s).
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
    "socket_timeout": BROKER_TIMEOUT_SECONDS,
    "socket_connect_timeout": BROKER_TIMEOUT_SECONDS,
}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
# An upload's own attempt to hand its run to the broker: one try, on a connection with
# this timeout (milliseconds); a run the broker did not take in time waits in the
# outbox (send_unsent), which sends it with the timeouts above.
UPLOAD_PUBLISH_TIMEOUT_MS = at_least(
    "UPLOAD_PUBLISH_TIMEOUT_MS", env_int("UPLOAD_PUBLISH_TIMEOUT_MS", 500), 50, "ms"
)
CELERY_REDIS_SOCKET_TIMEOUT = BROKER_TIMEOUT_SECONDS
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = BROKER_TIMEOUT_SECONDS
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A running task renews its claim's lease every third of this; the sweep takes back a
# running run only once its lease has run out (its task is dead).
LEASE_SECONDS = at_least(
    "LEASE_SECONDS", env_int("LEASE_SECONDS", 60), 3, "seconds", "renewed every third of it"
)
# A run left queued longer than this (its message lost) is re-queued by the sweep.
STUCK_AFTER_SECONDS = at_least(
    "STUCK_AFTER_SECONDS", env_int("STUCK_AFTER_SECONDS", 2 * TASK_TIME_LIMIT), 1
)
# Benchmark health: recomputed this long after the last run of a batch was
# compared (each newer request supersedes a queued one), on the compare queue.
BENCHMARK_HEALTH_DELAY_SECONDS = at_least(
    "BENCHMARK_HEALTH_DELAY_SECONDS", env_int("BENCHMARK_HEALTH_DELAY_SECONDS", 10), 0
)
MAX_SCORING_ATTEMPTS = at_least("MAX_SCORING_ATTEMPTS", env_int("MAX_SCORING_ATTEMPTS", 3), 1)
# The outbox: queued runs the broker never accepted are sent again this often.
OUTBOX_INTERVAL_SECONDS = at_least(
    "OUTBOX_INTERVAL_SECONDS", env_int("OUTBOX_INTERVAL_SECONDS", 20), 1
)
CELERY_BEAT_SCHEDULE = {
    # Every minute: a dead task's run is back in the queue a minute or two after it died
    # (LEASE_SECONDS, then the next sweep); one indexed query when nothing is stuck.
    "sweep-stuck-submissions": {"task": "leaderboard.tasks.sweep_stuck", "schedule": 60.0},
    "send-unsent-submissions": {
        "task": "leaderboard.tasks.send_unsent",
        "schedule": float(OUTBOX_INTERVAL_SECONDS),
        # Ticks nobody ran in time (workers down) are dropped, not piled up.
        "options": {"expires": float(OUTBOX_INTERVAL_SECONDS)},
    },
}

# --- /health/ (leaderboard/health.py) ---------------------------------------------------
# The longest /health/ waits for its checks (database, broker, storage, workers' ping);
# a check not done by then fails, so a hung service never hangs the health check.
HEALTH_TIMEOUT_SECONDS = at_least(
    "HEALTH_TIMEOUT_SECONDS",
    env_int("HEALTH_TIMEOUT_SECONDS", 3),
    2,
    "seconds",
    "the workers' ping alone waits a second",
)
# Callers that are not internal (loopback, or X-Health-Token) get the liveness answer,
# the process and its database, computed at most once per this many seconds per process.
HEALTH_CACHE_SECONDS = at_least("HEALTH_CACHE_SECONDS", env_int("HEALTH_CACHE_SECONDS", 5), 0)
# A secret that gets the full check from any address (a load balancer or monitor outside
# the host) in the X-Health-Token header. Empty: only loopback callers get it.
HEALTH_TOKEN = env_str("HEALTH_TOKEN")
# --- end of the /health/ block -----------------------------------------------------------

# --- Object storage: presigned uploads never confirmed are deleted hourly.
CELERY_BEAT_SCHEDULE["discard-expired-uploads"] = {
    "task": "leaderboard.tasks.discard_expired_uploads",
    "schedule": 3600.0,
    "options": {"expires": 3600.0},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
