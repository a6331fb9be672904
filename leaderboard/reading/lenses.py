"""Which judgments a reader sees: the one rule behind every board, run page, comparison,
export and API answer (``Lens``).

A benchmark's scores are stored per judgments row: each uploaded version, and on a
benchmark with a split (``Benchmark.private_needs``) each version's public and private
parts. A reader asks with ``?judgments=N`` (a version number; the current one by default)
and ``?needs=public|private|all``; what they may see:

- **No split**: the whole version; ``needs`` other than ``all`` is a 400.
- **Split, before the reveal**: the public part. Asking for the private needs (or all of
  them) is a 403, but for the organizers, who see the public part by default (what the
  participants see) and may ask for the others.
- **After the reveal**: the final board (``Benchmark.final_needs``: the private part, or
  the whole version for "all") by default; anyone may choose public, private or all.

A part not derived yet (a split just set) is shown as being prepared, with no scores:
never the whole version in its place, which holds the private needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any
from urllib.parse import quote_plus, urlencode

from django.db.models import Max

from leaderboard.models import Benchmark, Judgments, Result, Submission
from leaderboard.reading.visibility import Problem

NEEDS = ("public", "private", "all")
NEEDS_WORDS = {"public": "public needs", "private": "private needs", "all": "all needs"}
# Where ``Lens.links`` puts each row's value (urlencode leaves it as it is).
_SLOT = "slot"


def utc(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


@dataclass
class Lens:
    """The judgments row one reader is shown on one benchmark.

    ``judgments`` is the row whose results are read (None: nothing to show, because the
    benchmark has no judgments yet or the part is being prepared); ``whole`` its version;
    ``needs`` "all" (the whole version) or the part; ``asked`` the query parameters the
    reader gave, for links to carry; ``allowed`` the ``needs`` this reader may choose;
    ``page`` the page's own other query parameters (measure, need, ...), which a switch to
    another lens keeps.
    """

    benchmark: Benchmark
    judgments: Judgments | None
    whole: Judgments | None
    needs: str
    is_current: bool
    allowed: tuple[str, ...]
    asked: dict[str, str] = field(default_factory=dict)
    page: dict[str, str] = field(default_factory=dict)
    reader: Any = None  # the user shown the lens: whose scores count for ``scored_at``

    @property
    def judgments_id(self) -> int | None:
        return self.judgments.pk if self.judgments else None

    @property
    def version(self) -> int | None:
        return self.whole.version if self.whole else None

    @property
    def part(self) -> str:
        """``Judgments.part`` of the row shown: "" for the whole version."""
        return "" if self.needs == "all" else self.needs

    @property
    def preparing(self) -> bool:
        """A part asked for whose row is not derived yet: shown empty, never replaced."""
        return self.whole is not None and self.judgments is None

    @cached_property
    def versions(self) -> list[tuple[int, int]]:
        """(number, id) of every uploaded version, oldest first."""
        return versions(self.benchmark)

    @cached_property
    def scored_at(self) -> datetime | None:
        """When the shown results were scored: the newest result on the row shown among
        the runs whose scores the reader may see (a hidden run's scoring does not move
        it); a board sets it from the rows it shows, saving the query."""
        if self.judgments is None:
            return None
        results = Result.objects.filter(judgments=self.judgments)
        if self.reader is not None:
            seen = Submission.objects.scores_visible_to(self.reader).values("pk")
            results = results.filter(submission__in=seen)
        return results.aggregate(at=Max("created"))["at"]

    def pick(self, results) -> Result | None:
        """Of one run's results (any iterable, prefetched or not), the one to show: on the
        lens's row; while the current version is being scored (no version asked), the
        run's newest result on the same needs of an older version. Never a result on
        other needs: a public reader is never shown one on the whole version."""
        if self.preparing:
            return None
        mine = [r for r in results if r.judgments.part == self.part]
        for result in mine:
            if result.judgments_id == self.judgments_id:
                return result
        if "judgments" in self.asked:
            return None
        older = [r for r in mine if self.version is None or r.judgments.version < self.version]
        return max(older, key=lambda r: r.judgments.version) if older else None

    def result(self, run) -> Result | None:
        """``pick`` over the run's stored results."""
        return self.pick(run.results.select_related("judgments"))

    def line(self) -> str:
        """What the page says it shows: the version, the needs (how many of the version's)
        and when the shown results were scored, e.g. "Judgments v2, public needs (30 of
        50), scored" and the newest result's UTC minute."""
        if self.whole is None:
            return "No judgments yet."
        text = f"Judgments v{self.version}"
        if not self.is_current:
            current = self.benchmark.current_judgments
            text += f" (not the current v{current.version})" if current else ""
        if self.needs == "all":
            text += f", {NEEDS_WORDS['all']}" if self.benchmark.has_split else ""
            total = len(self.whole.need_ids)
            text += f" ({total})" if self.benchmark.has_split else ""
        elif self.judgments is None:
            return f"{text}, {NEEDS_WORDS[self.needs]}: being prepared, no scores yet."
        else:
            shown, total = len(self.judgments.need_ids), len(self.whole.need_ids)
            text += f", {NEEDS_WORDS[self.needs]} ({shown} of {total})"
        at = self.scored_at
        return f"{text}, scored {utc(at)}" if at else f"{text}, not scored yet"

    def query(self, **changes: str | int | None) -> dict[str, str]:
        """The query parameters that keep this lens in a link, with ``changes`` applied
        (a None value drops the parameter)."""
        params = dict(self.asked)
        for key, value in changes.items():
            if value is None:
                params.pop(key, None)
            else:
                params[key] = str(value)
        return params

    def link(self, path: str, **params: str | int | None) -> str:
        """``path`` with this lens's query and ``params`` (a None value left out): how every
        in-benchmark link keeps the reader on the lens. Only what the reader asked for is
        carried, so the default lens gives clean URLs (``path`` as it is; with ``path`` ""
        the query string alone, "" for the default lens)."""
        query = urlencode(self.query(**params))
        return f"{path}?{query}" if query else path

    def links(self, path: str, name: str, **params: str | int | None) -> Callable[[str], str]:
        """``link(path, **params, name=value)`` as a function of ``value``, the query encoded
        once: a page's thousands of rows (one a need) each link to their own ``name``."""
        key = f"{name}="  # a parameter's name ends at "=": in a value it is encoded
        head, _, tail = self.link(path, **params, **{name: _SLOT}).partition(key + _SLOT)
        return lambda value: f"{head}{key}{quote_plus(str(value))}{tail}"

    def choices(self) -> list[dict]:
        """The other views this reader may switch to: every version at the same needs, and
        each allowed ``needs`` at this version (label, query parameters, the link's query
        string, chosen). The links keep the page's other parameters (``page``): the same
        measure, need or search on the other lens."""
        out = []
        current = self.benchmark.current_judgments_id
        for number, pk in self.versions:
            label = f"v{number}" + (" (current)" if pk == current else "")
            out.append(
                {
                    "label": label,
                    "query": self.query(judgments=None if pk == current else number),
                    "chosen": number == self.version,
                }
            )
        if len(self.allowed) > 1:
            for needs in self.allowed:
                out.append(
                    {
                        "label": NEEDS_WORDS[needs],
                        "query": self.query(needs=needs),
                        "chosen": needs == self.needs,
                    }
                )
        for choice in out:
            choice["href"] = "?" + urlencode({**self.page, **choice["query"]})
        return out

    def payload(self) -> dict:
        """What the API answers carry: which version and which needs their scores are on."""
        return {"judgments_version": self.version, "needs": self.needs}


def versions(benchmark: Benchmark) -> list[tuple[int, int]]:
    """(number, id) of every uploaded version, oldest first."""
    return list(benchmark.judgments.versions().order_by("version").values_list("version", "pk"))


def default_needs(benchmark: Benchmark, revealed: bool) -> str:
    if not benchmark.has_split:
        return "all"
    return benchmark.final_needs if revealed else "public"


def allowed_needs(
    benchmark: Benchmark, user, revealed: bool, organises: bool | None = None
) -> tuple[str, ...]:
    """The ``needs`` a reader may ask for on this benchmark; ``organises``, whether
    ``user`` organises it, is asked of the database when not given."""
    if not benchmark.has_split:
        return ("all",)
    if revealed:
        return NEEDS
    if organises is None:
        organises = benchmark.is_organised_by(user)
    return NEEDS if organises else ("public",)


def resolve_lens(
    benchmark: Benchmark,
    user,
    version: str | int | None = None,
    needs: str | None = None,
    now: datetime | None = None,
) -> Lens:
    """The lens of ``user`` on ``benchmark`` for the asked ``version`` and ``needs`` (None:
    the defaults above). Raises ``Problem``: 400 for a malformed value or a part on a
    benchmark without a split, 404 for an unknown version, 403 for needs not revealed."""
    asked: dict[str, str] = {}
    current = benchmark.current_judgments_id
    whole = benchmark.current_judgments if current else None  # select_related by the views
    if version is not None and version != "":
        text = str(version).strip()
        if not (text.isascii() and text.isdigit()):
            raise Problem(f"judgments is a version number (1, 2 ...), not “{version}”.", 400)
        number = int(text)
        # Past the column's range no version exists (and the database refuses to compare).
        found = benchmark.judgments.versions().filter(version=number) if number < 2**31 else None
        whole = found.first() if found is not None else None
        if whole is None:
            listed = ", ".join(f"v{n}" for n, _ in versions(benchmark)) or "none yet"
            raise Problem(
                f"{benchmark.title} has no judgments version {number}; versions: {listed}.",
                404,
            )
        asked["judgments"] = str(number)
    revealed = benchmark.revealed(now)
    allowed = allowed_needs(benchmark, user, revealed)
    if needs is None or needs == "":
        needs = default_needs(benchmark, revealed)
    else:
        if needs not in NEEDS:
            raise Problem(f"needs is one of public, private or all, not “{needs}”.", 400)
        if not benchmark.has_split and needs != "all":
            raise Problem(
                f"{benchmark.title} has no split into public and private needs: every score "
                "is on all its needs (leave needs out, or ask for needs=all).",
                400,
            )
        if needs not in allowed:
            when = (
                f"from the reveal at {utc(benchmark.reveal_at)}"
                if benchmark.reveal_at
                else "once the organizers set a reveal time"
            )
            raise Problem(f"Scores on the private needs are shown {when}.", 403)
        asked["needs"] = needs
    shown = whole
    if whole is not None and needs != "all":
        shown = Judgments.objects.filter(parent=whole, part=needs).first()
    return Lens(
        benchmark=benchmark,
        judgments=shown,
        whole=whole,
        needs=needs,
        is_current=whole is not None and whole.pk == current,
        allowed=allowed,
        asked=asked,
        reader=user,
    )


def lens_for(request, benchmark: Benchmark) -> Lens:
    """The lens a page's or an API view's request asks for (``?judgments=``, ``?needs=``)."""
    params = request.GET
    lens = resolve_lens(benchmark, request.user, params.get("judgments"), params.get("needs"))
    # a page number belongs to the list it was counted in, not to another lens's
    lens.page = {k: v for k, v in params.items() if k not in ("judgments", "needs", "page")}
    return lens


def default_lens(benchmark: Benchmark, user) -> Lens:
    """What ``user`` sees of ``benchmark`` when asking for nothing in particular."""
    return resolve_lens(benchmark, user)


def default_lenses(
    benchmarks: Iterable[Benchmark], user, now: datetime | None = None
) -> dict[int, Lens]:
    """Per benchmark id, the lens ``default_lens`` gives ``user``, for a list of benchmarks
    (``current_judgments`` selected with them) in two queries at most however long it is:
    their default parts (``default_rows``) and which of the unrevealed split ones ``user``
    organises (what ``allowed`` holds)."""
    listed = list({b.pk: b for b in benchmarks}.values())
    revealed = {b.pk: b.revealed(now) for b in listed}
    needs = {b.pk: default_needs(b, revealed[b.pk]) for b in listed}
    parts = {(j.parent_id, j.part): j for j in _default_parts(listed, needs)}
    unsure = [b.pk for b in listed if b.has_split and not revealed[b.pk]]
    organised: set[int] = set()
    if unsure and user.is_authenticated:
        mine = Benchmark.objects.filter(pk__in=unsure).organised_by(user)
        organised = set(mine.values_list("pk", flat=True))
    lenses = {}
    for b in listed:
        whole = b.current_judgments if b.current_judgments_id else None
        shown = whole
        if whole is not None and needs[b.pk] != "all":
            shown = parts.get((whole.pk, needs[b.pk]))
        allowed = allowed_needs(b, user, revealed[b.pk], organises=b.pk in organised)
        lenses[b.pk] = Lens(
            benchmark=b,
            judgments=shown,
            whole=whole,
            needs=needs[b.pk],
            is_current=whole is not None,
            allowed=allowed,
            reader=user,
        )
    return lenses


def _default_parts(benchmarks: list[Benchmark], needs: dict[int, str]):
    """The parts of the current versions of those ``benchmarks`` whose default ``needs``
    (per benchmark id) is a part: a QuerySet, empty when there are none."""
    parents = [b.current_judgments_id for b in benchmarks if needs[b.pk] != "all"]
    return Judgments.objects.filter(parent_id__in=[p for p in parents if p is not None])


def default_rows(benchmarks: list[Benchmark], now: datetime | None = None) -> dict[int, int | None]:
    """Per benchmark id, the id of the judgments row its default lens shows (None: nothing
    to show yet), for a list of benchmarks in one query. The default row is the same for
    every reader (organizers too see the public part until they ask for another), so a
    list needs no lens per benchmark; ``resolve_lens`` decides the same way."""
    needs = {b.pk: default_needs(b, b.revealed(now)) for b in benchmarks}
    rows = _default_parts(benchmarks, needs).values_list("parent_id", "part", "pk")
    parts = {(parent, part): pk for parent, part, pk in rows}
    return {
        b.pk: b.current_judgments_id
        if needs[b.pk] == "all"
        else parts.get((b.current_judgments_id, needs[b.pk]))
        for b in benchmarks
    }
