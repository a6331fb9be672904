"""The long fixed tables ``leaderboard/settings.py`` names, so that the settings read as a
list: Django REST framework's and drf-spectacular's settings, Celery's queues and beat
schedule, the Content-Security-Policy and Permissions-Policy.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue


def celery_queues(default: str, score: str, compare: str) -> list[Queue]:
    """The Celery queues: the default one (beat's housekeeping), scoring and comparing.

    Scoring and comparing must differ, or a comparison fan-out would delay the next run's
    scoring; the default queue may be either of them (it is then declared once).
    """
    if score == compare:
        raise ImproperlyConfigured(
            f"CELERY_SCORE_QUEUE and CELERY_COMPARE_QUEUE must differ (both {score!r}):"
            " comparisons on the scoring queue would delay the next run's scoring"
        )
    return [
        Queue(name, Exchange(name), routing_key=name)
        for name in dict.fromkeys([default, score, compare])
    ]


# Content-Security-Policy: scripts, styles, images and fetches from this site only, no
# inline script or style, no plugins, no framing, forms post only here. The admin needs
# nothing more (its data rides in data- attributes and JSON script elements).
CSP_DIRECTIVES = {
    "default-src": ["'self'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
    "object-src": ["'none'"],
}

# Permissions-Policy: the powerful browser features, each refused to the site and to
# anything it might embed (the site uses none of them).
BROWSER_FEATURES = (
    "accelerometer autoplay browsing-topics camera display-capture encrypted-media "
    "fullscreen geolocation gyroscope hid magnetometer microphone midi payment "
    "publickey-credentials-get screen-wake-lock serial usb xr-spatial-tracking"
).split()


def beat_schedule(outbox_seconds: int) -> dict:
    """Celery beat's periodic tasks (CELERY_BEAT_SCHEDULE).

    The sweep runs every minute, so a dead task's run is back in the queue a minute or two
    after it died (its lease, then the next sweep), at one indexed query when nothing is
    stuck; the outbox sends queued runs the broker never accepted every ``outbox_seconds``;
    presigned uploads never confirmed are deleted hourly. Ticks nobody ran in time
    (workers down) expire instead of piling up.
    """
    return {
        "sweep-stuck-submissions": {"task": "leaderboard.tasks.sweep_stuck", "schedule": 60.0},
        "send-unsent-submissions": {
            "task": "leaderboard.tasks.send_unsent",
            "schedule": float(outbox_seconds),
            "options": {"expires": float(outbox_seconds)},
        },
        "discard-expired-uploads": {
            "task": "leaderboard.tasks.discard_expired_uploads",
            "schedule": 3600.0,
            "options": {"expires": 3600.0},
        },
    }


def rest_framework(token_rate: str, anonymous_rate: str, login_rate: str) -> dict:
    """Django REST framework's settings: hashed bearer tokens, JSON only, JSON errors, and
    request rates per token (per address without one; per username for log-in)."""
    return {
        "DEFAULT_AUTHENTICATION_CLASSES": [
            "leaderboard.api.authentication.BearerTokenAuthentication"
        ],
        "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
        "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
        "DEFAULT_THROTTLE_CLASSES": ["leaderboard.api.throttling.CallerRateThrottle"],
        "DEFAULT_THROTTLE_RATES": {
            "token": token_rate,
            "anonymous": anonymous_rate,
            "login": login_rate,
        },
        "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
        "EXCEPTION_HANDLER": "leaderboard.api.errors.exception_handler",
        "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
        # NaN and infinity are not JSON: null instead (the serializers see to it).
        "STRICT_JSON": True,
    }


# drf-spectacular's settings: the OpenAPI schema of /api/ (docs/api.md).
API_SCHEMA = {
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
    "ENUM_NAME_OVERRIDES": {
        "SubmissionStatus": "leaderboard.models.Submission.Status",
        "Needs": "leaderboard.reading.lenses.NEEDS",
    },
    "PREPROCESSING_HOOKS": ["leaderboard.api.schema.without_presigned_uploads"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "leaderboard.api.schema.path_examples",
    ],
}
