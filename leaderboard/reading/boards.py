"""Assembling what the reader's pages show: ranked leaderboards, significance against the
leader, the all-pairs matrix and a pairwise comparison. Over 400 lines: the board's rows,
ranks, best-per-team filter and tests against #1 are one computation whose decisions
(below) read best together; paging and menus already live in ``paging`` and ``menus``.

Decisions, stated once:

- **Ranks** are competition ranks ("1, 2, 2, 4") on the value rounded to four decimals,
  the precision ``trec_eval`` prints and the table shows: two runs a reader sees with the
  same score share a rank. Runs without a value for the measure come last, unranked.
- **Significance against the leader**: the paired t-test's raw p of #1 against every other
  ranked run, Holm-corrected over that family (the family changes whenever a run arrives,
  so nothing corrected is stored), alpha 0.05. A run whose corrected p is at least alpha
  is *statistically tied* with #1. A p that cannot be computed (identical scores on every
  need) counts as 1: no evidence of a difference.
- Stored comparisons exist for the benchmark's tested measures (its primary measure and
  those the organizer chose, ``map`` by default); pairs not stored yet (still queued), and
  any other measure, are tested here when the board is small enough to do so in a few
  milliseconds; otherwise the page says the tests are pending or where to find them.
- **A run's team** is the one it was submitted under (``Submission.team``), as final
  runs count it: the board names it and groups by it. A run submitted in no team is its
  participant's alone (a team of one), even after they join a team.
- **Best run per team** (``?best=team``): each team's best run by the ranking measure
  only; ranks and tests against #1 are over the rows kept: #1 is the best run overall,
  the Holm family "#1 vs. each other team's best".
- **Measures** are named in either system (``?measure=nDCG@10`` or ``ndcg_cut_10``) and
  shown with the catalog's labels (``evaluation.measures.resolve``); an unknown name is an
  error naming close matches, never a ranking by another measure. Counts (``num_ret``,
  ``num_rel_ret`` ...) are shown as columns but not offered to rank by: asking to is an
  error too (``NotRankable``). Menus list measures in the catalog's groups (``menus``).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evaluation.measures import CatalogEntry, UnknownMeasure, resolve
from evaluation.significance import (
    adjust_p,
    compare_one_against_many,
)
from leaderboard.models import Benchmark, Comparison, Result, Submission
from leaderboard.reading.lenses import Lens, default_lens, default_rows
from leaderboard.reading.names import rename_rows

ALPHA = 0.05
PLACES = 4
TOP_RUNS = 50
# Per-need table of the run page: AP, P@5, P@10, RR, Rprec, NumRel, NumRelRet.
NEED_COLUMNS = ("map", "P_5", "P_10", "recip_rank", "Rprec", "num_rel", "num_rel_ret")
CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "tukey": "Tukey HSD", "none": "none"}
# On-the-fly tests for a measure without stored comparisons up to this many cells.
ON_THE_FLY_CELLS = 200_000
ELEVEN = [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]


@functools.lru_cache(maxsize=4096)
def _entry(measure: str) -> CatalogEntry | None:
    try:
        return resolve(measure)
    except UnknownMeasure:
        return None


def measure_column(name: str | None, default: str) -> str:
    """The stored column a reader's ``?measure=`` names, in either name system
    (``nDCG@10`` and ``ndcg_cut_10`` both give ``ndcg_cut_10``); ``default`` when none is
    given. Raises ``UnknownMeasure`` (with ``.suggestions``) for a name the catalog does
    not know: a page answers that with a problem page, never with another ranking."""
    if name is None or not name.strip():
        return default
    return resolve(name).column


def unknown_measure_message(error: UnknownMeasure) -> str:
    if isinstance(error, NotRankable):
        return (
            f"“{error.name}” is a count, shown as a column but not a score to rank runs by; "
            f"rank by a measure such as {', '.join(error.suggestions)}."
        )
    hint = f" Did you mean {', '.join(error.suggestions)}?" if error.suggestions else ""
    reason = f" ({error.reason})" if error.reason else ""
    return f"There is no measure “{error.name}”{reason}.{hint}"


def measure_label(measure: str) -> str:
    """The one name people see for a measure, in every page, plot, mail, CSV header and
    ``rrl`` line: the catalog's label (``nDCG@10`` for ``ndcg_cut_10``, ``AP`` for
    ``map``, ``RR@10``), the same for one need's value and for the mean over needs, as
    ir_measures names both; a name the catalog does not know is shown as it is."""
    entry = _entry(measure)
    return entry.label if entry else measure


def measure_labels(measures) -> dict[str, str]:
    """``measure_label`` of each of ``measures``: the ``labels`` object of the JSON
    answers, so a client shows the same names as the pages."""
    return {str(m): measure_label(str(m)) for m in measures}


def is_count(measure: str) -> bool:
    entry = _entry(measure)
    return entry.is_count if entry else measure.startswith("num_")


class NotRankable(UnknownMeasure):
    """A count measure asked for as a ranking (other than a benchmark's primary measure):
    runs are not ranked by how much they return. An ``UnknownMeasure`` to every caller
    (the pages, the exports and the API answer 400 with ``unknown_measure_message``)."""

    def __init__(self, measure: str) -> None:
        ValueError.__init__(self, f"{measure!r} is a count, not a score to rank runs by")
        self.name, self.reason, self.suggestions = measure, "a count", ["AP", "P@10", "nDCG@10"]


def competition_ranks(values: list[float | None]) -> list[int | None]:
    """Ranks of values already sorted best first; equal rounded values share a rank."""
    ranks: list[int | None] = []
    previous = None
    for position, value in enumerate(values, start=1):
        if value is None:
            ranks.append(None)
            continue
        key = round(value, PLACES)
        ranks.append(ranks[-1] if key == previous else position)
        previous = key
    return ranks


def adjusted(pvalues: list[float], method: str) -> list[float]:
    """``adjust_p`` over a family, with uncomputable p (NaN) counted as 1."""
    if not pvalues:
        return []
    p = np.nan_to_num(np.asarray(pvalues, dtype=np.float64), nan=1.0)
    return [float(v) for v in np.asarray(adjust_p(p, method))]


@dataclass
class Row:
    result_id: int
    submission_id: int
    run_name: str
    participant: str
    created: Any
    is_baseline: bool
    is_hidden: bool
    status: str
    summary: dict[str, float]
    num_needs: int
    value: float | None = None
    rank: int | None = None
    p_raw: float | None = None
    p_adjusted: float | None = None
    is_leader: bool = False
    team: str = ""  # the team the run was submitted under ("" for none)
    group: str = ""  # "team:<id>", or "user:<id>" for a run submitted in no team
    description: str = ""
    participant_id: int | None = None
    paper_url: str = ""
    code_url: str = ""
    scored_at: Any = None  # when this result was stored

    @property
    def tied_with_leader(self) -> bool:
        return self.is_leader or (self.p_adjusted is not None and self.p_adjusted >= ALPHA)

    @property
    def differs_from_leader(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < ALPHA

    @property
    def is_public(self) -> bool:
        return not self.is_hidden and self.status != Submission.Status.WITHDRAWN


@dataclass
class Board:
    benchmark: Benchmark
    measure: str
    rows: list[Row]
    measures: list[str]
    columns: list[str]
    # "stored", "computed" (tested here), "unavailable" (too many to test here),
    # "untested" (no per-need values to pair: a summary-only measure such as GMAP), "none"
    significance: str = "none"
    family_size: int = 0
    pending: int = 0  # ranked runs whose stored test against #1 is still queued
    notes: list[str] = field(default_factory=list)
    best_per_team: bool = False
    left_out: int = 0  # runs the best-per-team view does not list
    lens: Lens | None = None  # the judgments row the board ranks on

    @property
    def judgments_id(self) -> int | None:
        return self.lens.judgments_id if self.lens else None

    @property
    def tested(self) -> bool:
        """Whether the "vs #1" column and the "tied with #1" line have tests behind them."""
        return self.significance in ("stored", "computed")

    @property
    def leader(self) -> Row | None:
        return self.rows[0] if self.rows and self.rows[0].value is not None else None

    @property
    def labels(self) -> dict[str, str]:
        """The names people see of the ranking measure and the columns (``measure_label``)."""
        return measure_labels([self.measure, *self.measures])

    @property
    def tied(self) -> list[Row]:
        return [row for row in self.rows if row.tied_with_leader and not row.is_leader]

    @property
    def top(self) -> list[Row]:
        """The runs the all-pairs matrix compares: the first ``TOP_RUNS`` with a value."""
        return [row for row in self.rows if row.value is not None][:TOP_RUNS]

    @property
    def in_matrix(self) -> list[Row]:
        """This board's runs whose pairs the all-pairs matrix of its measure shows: the top
        runs when the measure is tested for every pair (the matrix offers no other) and the
        board lists every run (the matrix is not per team); none otherwise."""
        if self.significance != "stored" or self.best_per_team:
            return []
        return self.top

    @property
    def matrix_family(self) -> str:
        """The matrix's Holm family in words, as the board names it ("" without pairs)."""
        runs = len(self.in_matrix)
        return f"all {runs * (runs - 1) // 2} pairs of the top {runs} runs" if runs > 1 else ""

    @property
    def family(self) -> str:
        """The family the "vs #1" column's p-values are corrected over, in words: the
        matrix corrects over all pairs, a larger family, so the two can disagree."""
        n = self.family_size
        return f"Holm-corrected over the {n} comparison{'' if n == 1 else 's'} with #1"


def leaderboard_rows(benchmark: Benchmark, user, judgments_id: int | None) -> list[Row]:
    """Every result on one judgments row the user may see, as plain rows (one query)."""
    values = Result.objects.on_leaderboard(benchmark, user, judgments_id).values(
        "pk",
        "summary",
        "num_needs",
        "submission_id",
        "submission__run_name",
        "submission__participant_id",
        "submission__participant__username",
        "submission__participant__profile__display_name",
        "submission__team_id",
        "submission__team__name",
        "submission__created",
        "submission__is_baseline",
        "submission__is_hidden",
        "submission__status",
        "submission__description",
        "submission__participant_id",
        "submission__paper_url",
        "submission__code_url",
        "created",
    )
    rows = [
        Row(
            result_id=v["pk"],
            submission_id=v["submission_id"],
            run_name=v["submission__run_name"],
            participant=v["submission__participant__profile__display_name"]
            or v["submission__participant__username"],
            created=v["submission__created"],
            is_baseline=v["submission__is_baseline"],
            is_hidden=v["submission__is_hidden"],
            status=v["submission__status"],
            summary=v["summary"] or {},
            num_needs=v["num_needs"],
            team=v["submission__team__name"] or "",
            group=(
                f"team:{v['submission__team_id']}"
                if v["submission__team_id"]
                else f"user:{v['submission__participant_id']}"
            ),
            description=v["submission__description"],
            participant_id=v["submission__participant_id"],
            paper_url=v["submission__paper_url"],
            code_url=v["submission__code_url"],
            scored_at=v["created"],
        )
        for v in values
    ]
    return rename_rows(rows, benchmark, user)  # pseudonyms until the reveal


def _value(summary: dict, measure: str) -> float | None:
    value = summary.get(measure)
    if value is None or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def build_leaderboard(
    benchmark: Benchmark,
    user,
    measure: str | None = None,
    best: str | None = None,
    lens: Lens | None = None,
) -> Board:
    """The ranked table for ``measure`` (the primary one by default), with significance
    marks against the leader; with ``best="team"`` each team's best run only (any other
    value: every run). On the judgments row of ``lens`` (the reader's default one when
    not given). A constant number of queries whatever the number of runs.
    """
    lens = lens or default_lens(benchmark, user)
    primary = benchmark.primary_measure
    asked = measure
    measure = measure_column(measure, primary)  # UnknownMeasure: the view's problem page
    if asked and asked.strip() and measure != primary and is_count(measure):
        raise NotRankable(measure)  # the view's problem page, as for an unknown name
    rows = leaderboard_rows(benchmark, user, lens.judgments_id)
    # The lens's line says when the shown results were scored: these rows' newest.
    lens.scored_at = max((row.scored_at for row in rows), default=None)
    measures = sorted({name for row in rows for name in row.summary})
    notes = []
    if measure != primary and measure not in measures:
        notes.append(
            f"No run has a value for “{measure_label(measure)}”; ranked by {measure_label(primary)}."
        )
        measure = primary
    for row in rows:
        row.value = _value(row.summary, measure)
    # Best first; equal values keep the earlier submission first, then the lower id.
    rows.sort(key=lambda r: (r.value is None, -(r.value or 0.0), r.created, r.submission_id))
    total = len(rows)
    if best == "team":
        rows = best_per_group(rows)
    for row, rank in zip(rows, competition_ranks([r.value for r in rows]), strict=True):
        row.rank = rank
    shown = [primary, *(benchmark.shown_measures or ())]
    columns = [m for m in dict.fromkeys(shown) if m in measures]
    if measure not in columns:
        columns.append(measure)
    board = Board(benchmark, measure, rows, measures, columns, notes=notes, lens=lens)
    board.best_per_team, board.left_out = best == "team", total - len(rows)
    _mark_against_leader(board)
    return board


def best_per_group(rows: list[Row]) -> list[Row]:
    """The first row of each team (``Row.group``) from rows already sorted best first:
    each team's best run; for a team with no value on the measure, its earliest run."""
    firsts: dict[str, Row] = {}
    for row in rows:
        firsts.setdefault(row.group, row)
    return list(firsts.values())  # dicts keep insertion order: still best first


def _mark_against_leader(board: Board) -> None:
    leader = board.leader
    if leader is None:
        return
    leader.is_leader = True
    others = [row for row in board.rows[1:] if row.value is not None]
    if not others:
        return
    raw: dict[int, float] = {}
    if board.measure in board.benchmark.tested_measures():
        board.significance = "stored"
        # Two index lookups joined by UNION ALL: SQLite plans "a = x OR b = x" as a scan.
        family = Comparison.objects.filter(judgments_id=board.judgments_id, measure=board.measure)
        as_a = family.filter(submission_a_id=leader.submission_id)
        as_b = family.filter(submission_b_id=leader.submission_id)
        raw = dict(
            as_a.values_list("submission_b_id", "t_p").union(
                as_b.values_list("submission_a_id", "t_p"), all=True
            )
        )
        missing = [row for row in others if row.submission_id not in raw]
        # Comparisons still queued (a new run, a measure just chosen for testing): tested
        # here when that is cheap, so the table and the "tied" line never wait on them.
        if missing and (len(missing) + 1) * max(leader.num_needs, 1) <= ON_THE_FLY_CELLS:
            raw.update(_t_tests_against(leader, missing, board.measure))
        board.pending = sum(row.submission_id not in raw for row in others)
    elif (len(others) + 1) * max(leader.num_needs, 1) <= ON_THE_FLY_CELLS:
        board.significance = "computed"
        raw = _t_tests_against(leader, others, board.measure)
        if not raw:  # no per-need values of the measure: nothing to pair, no claim
            board.significance = "untested"
            return
    else:
        board.significance = "unavailable"
        return
    tested = [row for row in others if row.submission_id in raw]
    board.family_size = len(tested)
    for row, p_adj in zip(
        tested, adjusted([raw[row.submission_id] for row in tested], "holm"), strict=True
    ):
        row.p_raw = raw[row.submission_id]
        row.p_adjusted = p_adj


def _t_tests_against(leader: Row, others: list[Row], measure: str) -> dict[int, float]:
    """Paired t-test p of the leader against each run (the engine's, as stored ones are)."""
    ids = [leader.result_id] + [row.result_id for row in others]
    blobs = dict(Result.objects.filter(pk__in=ids).values_list("pk", "per_need"))
    columns = {}
    for row in [leader, *others]:
        frame = judged(Result(per_need=blobs[row.result_id]).per_need_frame())
        if measure in frame.columns:
            columns[row.submission_id] = frame[measure]
    if leader.submission_id not in columns:
        return {}
    scores = pd.DataFrame(columns).fillna(0.0)
    base = scores.pop(leader.submission_id).to_numpy()
    if scores.empty:
        return {}
    with warnings.catch_warnings():  # FewNeedsWarning: the caption already says n
        warnings.simplefilter("ignore")
        tests = compare_one_against_many(base, scores, permutations=0)  # t-test only needed
    return dict(zip(scores.columns.tolist(), tests["t_p"].tolist(), strict=True))


def current_leaders(benchmarks: list[Benchmark], user) -> dict[int, tuple[Row, int]]:
    """Per benchmark id: the leader on its primary measure and the number of runs shown,
    on the judgments row each benchmark's lens shows ``user`` by default."""
    runs = Submission.objects.live().scores_visible_to(user)
    rows = list(default_rows(benchmarks).values())
    values = Result.objects.filter(
        submission__benchmark__in=benchmarks,
        judgments_id__in=[pk for pk in rows if pk is not None],
        submission__in=runs,
    ).values(
        "pk",
        "summary",
        "submission_id",
        "submission__benchmark_id",
        "submission__run_name",
        "submission__created",
    )
    primary = {b.pk: b.primary_measure for b in benchmarks}
    best: dict[int, tuple[Row, int]] = {}
    for v in values:
        bid = v["submission__benchmark_id"]
        row = Row(
            v["pk"],
            v["submission_id"],
            v["submission__run_name"],
            "",
            v["submission__created"],
            False,
            False,
            "",
            v["summary"] or {},
            0,
        )
        row.value = _value(row.summary, primary[bid])
        current, count = best.get(bid, (None, 0))
        if current is None or (
            row.value is not None
            and (
                current.value is None
                or (-row.value, row.created) < (-current.value, current.created)
            )
        ):
            current = row
        best[bid] = (current, count + 1)
    return best


def judged(frame: pd.DataFrame) -> pd.DataFrame:
    """The needs significance tests pair over: those with at least one relevant document
    (as ``leaderboard.pipeline.comparing.compare`` does; without ``num_rel``, every need)."""
    if "num_rel" not in frame.columns:
        return frame
    return frame[frame["num_rel"].to_numpy() > 0]
