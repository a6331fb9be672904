"""The validators the API's answers and the pages send: ``last_change`` (their
``Last-Modified``) and ``etag`` (an ``ETag`` from the exact bytes shown and whom they
were shown to).

Both depend only on what the caller can see: a run hidden from them, or a result on a
judgments row their lens does not show (the private needs of a public reader before the
reveal), moves neither.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from django.db.models import Max, Q

from leaderboard.models import Submission
from leaderboard.reading.lenses import Lens


def last_change(lens: Lens, user) -> dt.datetime:
    """The newest moment the board ``user`` sees through ``lens`` could have changed: the
    runs they may see (submitted, finished, scored on the lens's judgments row), a run
    hidden, shown again or withdrawn, and the judgments versions. A run hidden from
    ``user`` moves nothing while hidden, and a result on another row (the private needs
    of a public reader) moves nothing either: neither changes a board they can see."""
    benchmark = lens.benchmark
    runs = Submission.objects.for_benchmark(benchmark)
    # The visibility rule's subqueries are built once (they cost more to build than to
    # run); a run's results join its row, and a newest moment is the same over repeats.
    seen = runs.filter(pk__in=runs.scores_visible_to(user).values("pk"))
    shown = seen.aggregate(
        created=Max("created"),
        finished=Max("finished"),
        scored=Max("results__created", filter=Q(results__judgments_id=lens.judgments_id)),
    )
    # Hiding or withdrawing a run takes it off the boards it was on, showing it adds it
    # (a hidden run withdrawn was on no public board).
    changed = runs.aggregate(
        visibility=Max("visibility_changed_at"),
        withdrawn=Max("withdrawn_at", filter=Q(is_hidden=False)),
    )
    judged = benchmark.judgments.filter(Q(part="") | Q(pk=lens.judgments_id)).aggregate(
        created=Max("created")
    )
    # The reveal opens the phases' boards and shows real names: the board changes then.
    revealed = benchmark.reveal_at if benchmark.revealed() else None
    moments = [
        benchmark.created,
        shown["created"],
        shown["finished"],
        shown["scored"],
        changed["visibility"],
        changed["withdrawn"],
        judged["created"],
        revealed,
    ]
    return max(m for m in moments if m is not None)


def etag(*parts: str | bytes) -> str:
    """A strong ``ETag`` of ``parts`` (the bytes shown, and for a page whom to): the first
    128 bits of their SHA-256, quoted."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)
    return f'"{digest.hexdigest()[:32]}"'
