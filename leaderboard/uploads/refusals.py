"""A per-user budget of refused uploads, so that a loop of bad files stays cheap.

Every upload refused for its file (a bad line, too large, a gzip bomb) costs the web
process the check that refused it. After ``UPLOAD_REFUSAL_LIMIT`` refusals within
``UPLOAD_REFUSAL_WINDOW`` seconds, counted from the first of them, the user's uploads
are answered 429 at once, before the body is read, until that window ends. The counts
live in the cache (Redis in production, shared by every web process); a count lost to
a cache that restarted only gives a user a fresh budget, and a cache that does not
answer counts nothing: uploads go on unbudgeted (a warning is logged), never a 500.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)


def _keys(user) -> tuple[str, str]:
    return f"upload-refusals:{user.pk}", f"upload-refusals-since:{user.pk}"


def count(user) -> None:
    """One more refused upload for ``user`` (the first opens a window)."""
    window = settings.UPLOAD_REFUSAL_WINDOW
    counter, since = _keys(user)
    try:
        cache.add(since, time.time(), window)
        cache.add(counter, 0, window)
        try:
            cache.incr(counter)
        except ValueError:  # expired between add and incr: this refusal opens a new window
            cache.set(counter, 1, window)
    except Exception:  # the cache is not answering: the refusal stands, uncounted
        log.warning("upload refusal not counted: the cache is not answering", exc_info=True)


def seconds_to_wait(user) -> int:
    """0 while ``user`` may upload; else the seconds until the window of refusals ends."""
    counter, since = _keys(user)
    try:
        found = cache.get_many([counter, since])
    except Exception:  # the cache is not answering: take the upload rather than fail
        log.warning("upload refusal budget skipped: the cache is not answering", exc_info=True)
        return 0
    if found.get(counter, 0) < settings.UPLOAD_REFUSAL_LIMIT:
        return 0
    opened = found.get(since, time.time())
    return max(int(opened + settings.UPLOAD_REFUSAL_WINDOW - time.time()) + 1, 1)


def too_many(wait: int) -> str:
    """The reason a user over the budget is given."""
    minutes = -(-wait // 60)
    return (
        f"Your last {settings.UPLOAD_REFUSAL_LIMIT} uploads were refused (see the reasons "
        f"they were given); fix the file and try again in {minutes} minute"
        f"{'s' if minutes != 1 else ''}."
    )
