"""Settings for the leaderboard platform, all from environment variables.

Development needs nothing installed (SQLite in the project, Celery tasks in-process);
production sets DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY, ALLOWED_HOSTS and DEBUG=0.
docs/settings.md says what each variable does; leaderboard/environment.py reads and checks them.
"""

import datetime as dt
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from leaderboard import environment, settings_tables
from leaderboard.environment import BASE_DIR, env_bool, env_int, env_list, env_str, queue_name

DEBUG = env_bool("DEBUG", True)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "dev-only-secret-key-not-for-production-0123456789-abcdefghijklmnop"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")
if not ALLOWED_HOSTS and not DEBUG:  # else every request is a 400 and nothing says why
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off: the site's host names")
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
    "leaderboard.error_pages.DatabaseDownMiddleware",  # a view without its database: a 503
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

DATABASES = {
    "default": environment.database_from_url(
        env_str("DATABASE_URL", "sqlite:///db.sqlite3"), env_int("CONN_MAX_AGE", 60, 0)
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}Validator"}
    for name in ("UserAttributeSimilarity", "MinimumLength", "CommonPassword", "NumericPassword")
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "my_submissions"
LOGOUT_REDIRECT_URL = "home"

# Log-in throttling (django-axes; docs/settings.md, "Log-in and token throttling").
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
THROTTLE_COOLOFF_SECONDS = env_int("THROTTLE_COOLOFF_SECONDS", 900, 1)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, 1)
AXES_COOLOFF_TIME = dt.timedelta(seconds=THROTTLE_COOLOFF_SECONDS)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 100, 1)
LOGIN_DELAY_AFTER = env_int("LOGIN_DELAY_AFTER", 3, 1)
LOGIN_DELAY_SECONDS = env_int("LOGIN_DELAY_SECONDS", 1, 1)
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # failures only; no log of every successful log-in
AXES_VERBOSE = False  # no start-up banner on every manage.py command
AXES_HANDLER = "leaderboard.accounts.throttle.LoginAttempts"
AXES_LOCKOUT_CALLABLE = "leaderboard.accounts.throttle.locked_out"
AXES_CLIENT_IP_CALLABLE = "leaderboard.accounts.throttle.client_address"
# Behind N proxies the client is the N-th address from the right of X-Forwarded-For.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, 0)
API_TOKEN_FAILURE_LIMIT = env_int("API_TOKEN_FAILURE_LIMIT", 20, 1)

CACHES = {"default": environment.cache_from_url(env_str("CACHE_URL"))}

# The JSON API (docs/api.md): request rates counted per token (per address without one).
API_RATE_TOKEN = environment.env_rate("API_RATE_TOKEN", "600/minute")
API_RATE_ANONYMOUS = environment.env_rate("API_RATE_ANONYMOUS", "300/minute")
API_RATE_LOGIN = environment.env_rate("API_RATE_LOGIN", "20/hour")
IDEMPOTENCY_KEY_HOURS = env_int("IDEMPOTENCY_KEY_HOURS", 24, 1)
REST_FRAMEWORK = settings_tables.rest_framework(API_RATE_TOKEN, API_RATE_ANONYMOUS, API_RATE_LOGIN)
SPECTACULAR_SETTINGS = settings_tables.API_SCHEMA  # the OpenAPI schema: title, description, hooks

# Mail: printed to the console in development, sent with SMTP in production.
globals().update(
    environment.email_from_url(env_str("EMAIL_URL", "console://" if DEBUG else "smtp://localhost"))
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "leaderboard@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# The site's address for links in mails sent outside a request: scheme and host, no path.
SITE_URL = environment.site_url(env_str("SITE_URL", "http://localhost:8000"))

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if not DEBUG:  # hashed names and compressed copies, from collectstatic's manifest
    STORAGES["staticfiles"]["BACKEND"] = "whitenoise.storage.CompressedManifestStaticFilesStorage"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "media/"

# Object storage (docs/settings.md, "Where files live"): a bucket when one is named.
AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
# Seconds a file store may take per attempt (three attempts), never a hung process.
STORAGE_TIMEOUT_SECONDS = env_int("STORAGE_TIMEOUT_SECONDS", 10, 1, "seconds")
PRESIGNED_UPLOAD_SECONDS = env_int("PRESIGNED_UPLOAD_SECONDS", 3600, 60, "seconds")
PRESIGNED_ENDPOINT_URL = environment.env_url("PRESIGNED_ENDPOINT_URL")
if AWS_STORAGE_BUCKET_NAME:
    STORAGES["default"] = environment.s3_storage(
        bucket=AWS_STORAGE_BUCKET_NAME,
        endpoint_url=env_str("AWS_S3_ENDPOINT_URL"),
        access_key=env_str("AWS_ACCESS_KEY_ID"),
        secret_key=env_str("AWS_SECRET_ACCESS_KEY"),
        region=env_str("AWS_S3_REGION_NAME", "us-east-1"),
        timeout=STORAGE_TIMEOUT_SECONDS,
    )

# Uploads: anything above 2.5 MB streams to a temporary file, never held in memory.
MAX_UPLOAD_MB = env_int("MAX_UPLOAD_MB", 500, 1)
UPLOAD_GRACE_SECONDS = env_int("UPLOAD_GRACE_SECONDS", 300, 0)
# What a gzipped file may expand to, counted while decompressing (upload and worker alike).
MAX_UNCOMPRESSED_MB = env_int("MAX_UNCOMPRESSED_MB", min(4 * MAX_UPLOAD_MB, 10240))
if not 1 <= MAX_UNCOMPRESSED_MB <= 10240:
    raise ImproperlyConfigured(
        f"MAX_UNCOMPRESSED_MB must be between 1 and 10240 (10 GB), got {MAX_UNCOMPRESSED_MB}"
    )
# Content past this many times the compressed bytes (past 8 MB) is a gzip bomb: refused.
MAX_GZIP_RATIO = env_int("MAX_GZIP_RATIO", 100, 20)
UPLOAD_REFUSAL_LIMIT = env_int("UPLOAD_REFUSAL_LIMIT", 20, 1)
UPLOAD_REFUSAL_WINDOW = env_int("UPLOAD_REFUSAL_WINDOW", 3600, 60, "seconds")
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
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000, 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp): everything from this site only, nothing inline.
CONTENT_SECURITY_POLICY = {"DIRECTIVES": settings_tables.CSP_DIRECTIVES}
# Permissions-Policy: every powerful browser feature refused (the site uses none).
PERMISSIONS_POLICY = {feature: [] for feature in settings_tables.BROWSER_FEATURES}

# Celery. With no broker configured, tasks run eagerly in-process.
CELERY_BROKER_URL = environment.broker_url("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or "cache+memory://")
CELERY_RESULT_EXPIRES = 3600
# Queues (docs/scaling.md): beat's housekeeping, scoring, comparing; leaderboard.celery.route.
CELERY_TASK_DEFAULT_QUEUE = queue_name("CELERY_QUEUE", "celery")
CELERY_SCORE_QUEUE = queue_name("CELERY_SCORE_QUEUE", "score")
CELERY_COMPARE_QUEUE = queue_name("CELERY_COMPARE_QUEUE", "compare")
CELERY_TASK_QUEUES = settings_tables.celery_queues(
    CELERY_TASK_DEFAULT_QUEUE, CELERY_SCORE_QUEUE, CELERY_COMPARE_QUEUE
)
CELERY_TASK_ROUTES = ["leaderboard.celery.route"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A task's hard limit; the soft one comes a minute or a tenth earlier (1740 s of 1800).
TASK_TIME_LIMIT = env_int(
    "TASK_TIME_LIMIT",
    1800,
    10,
    "seconds",
    "the soft limit, when a task gives its run back, comes a tenth of it, at most a "
    "minute, earlier",
)
CELERY_TASK_TIME_LIMIT = TASK_TIME_LIMIT
CELERY_TASK_SOFT_TIME_LIMIT = TASK_TIME_LIMIT - min(60, TASK_TIME_LIMIT // 10)
# Broker socket timeouts: a broker down or hung costs a publish seconds, never a request.
BROKER_TIMEOUT_SECONDS = env_int("BROKER_TIMEOUT_SECONDS", 3, 1)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Must exceed the longest task, or Redis redelivers a task that is still running.
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 2 * TASK_TIME_LIMIT, 1),
    # Look for messages of dead workers every 10 s (kombu's default scans every 100 s).
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
    "socket_timeout": BROKER_TIMEOUT_SECONDS,
    "socket_connect_timeout": BROKER_TIMEOUT_SECONDS,
}
# Two quick retries of a publish before the outbox takes over.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
# An upload's one try to hand its run to the broker (ms); then the outbox sends it.
UPLOAD_PUBLISH_TIMEOUT_MS = env_int("UPLOAD_PUBLISH_TIMEOUT_MS", 500, 50, "ms")
CELERY_REDIS_SOCKET_TIMEOUT = BROKER_TIMEOUT_SECONDS
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = BROKER_TIMEOUT_SECONDS
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A running task renews its claim every third of this; the sweep takes back expired ones.
LEASE_SECONDS = env_int("LEASE_SECONDS", 60, 3, "seconds", "renewed every third of it")
STUCK_AFTER_SECONDS = env_int("STUCK_AFTER_SECONDS", 2 * TASK_TIME_LIMIT, 1)
BENCHMARK_HEALTH_DELAY_SECONDS = env_int("BENCHMARK_HEALTH_DELAY_SECONDS", 10, 0)
MAX_SCORING_ATTEMPTS = env_int("MAX_SCORING_ATTEMPTS", 3, 1)
# The outbox: queued runs the broker never accepted are sent again this often.
OUTBOX_INTERVAL_SECONDS = env_int("OUTBOX_INTERVAL_SECONDS", 20, 1)
# Beat: the sweep every minute, the outbox every OUTBOX_INTERVAL_SECONDS, expired uploads hourly.
CELERY_BEAT_SCHEDULE = settings_tables.beat_schedule(OUTBOX_INTERVAL_SECONDS)

# /health/ (leaderboard/probes.py): the longest it waits for its checks.
HEALTH_TIMEOUT_SECONDS = env_int(
    "HEALTH_TIMEOUT_SECONDS", 3, 2, "seconds", "the workers' ping alone waits a second"
)
HEALTH_CACHE_SECONDS = env_int("HEALTH_CACHE_SECONDS", 5, 0)
# A secret in X-Health-Token that gets the full check from any address; empty: loopback.
HEALTH_TOKEN = env_str("HEALTH_TOKEN")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": environment.log_level("LOG_LEVEL", "INFO")},
}
