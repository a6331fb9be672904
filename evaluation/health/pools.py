"""Pool bias: would a run have scored lower had its team not contributed to the pool?

Zobel (SIGIR 1998) and Buckley and Voorhees (SIGIR 2004): the judgments of a pooled
benchmark come from the top ``depth`` documents of the participants' runs, so a run
scored against them is helped by the documents only its own team found. Leave one
team out (a participant, in the papers' word: a team or a person, as the caller groups
runs): for each team p,

1. the pool contribution of a participant is the set of (need, document) pairs in the
   top ``depth`` (trec_eval's order, :func:`evaluation.measures.trec_order`) of any of
   its runs; a judged pair in p's contribution and in no other participant's is
   *unique* to p;
2. those judgments are removed, p's runs are rescored on what remains (every need of
   the original judgments kept; a need left without judgments scores 0), and every
   other run keeps its score;
3. each of p's runs reports its score and rank before and after (rank 1 = best,
   competition ranks over all runs), the drop, and the ranking of all runs before
   and after is compared with Kendall's tau (:func:`evaluation.health.agreement.kendall_tau`).

Removing p's unique relevant documents also shrinks R, a need's number of relevant
documents, so a drop can be negative: a run of p that ranked them low (or a teammate's
run found them) loses little and divides by less. Pairs judged but
retrieved by no run within the depth (judged from elsewhere) are unique to nobody and
never removed. Also per run, ``Judged@k`` (ir_measures' name; the engine's
``judged_k``): the share of its top k that is judged, averaged over the needs.

The scores come from each run's :class:`~evaluation.health.judged.JudgedRanks` (its
judged documents and their ranks), several runs' needs ranked as one
:class:`~evaluation.measures.Ranking` and scored by the engine's measures, with the values
:func:`evaluation.measures.evaluate` gives (``complete``) to the last bit: a new run adds
work proportional to its judged documents, and no run file is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from evaluation.health.agreement import kendall_tau
from evaluation.health.judged import READS_UNJUDGED, JudgedRanks, QrelsIndex, judged_ranks
from evaluation.measures import Ranking, trec_order
from evaluation.measures.ranking import NONPOOL, UNJUDGED, grade_codes
from evaluation.measures.request import parse_requests
from evaluation.measures.scoring import score_ranking

__all__ = ["judged_of_ranks", "pool_bias", "pool_bias_of_ranks", "pool_contributions"]


def _top(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The (need_id, doc_id) pairs of a run's top ``depth`` per need, trec_eval's order."""
    need = pd.Categorical(run["need_id"].astype(str))
    order = trec_order(
        need.codes.astype(np.int64),
        run["score"].to_numpy(dtype=np.float64),
        pa.chunked_array([pa.array(run["doc_id"].astype(str).to_numpy(), pa.string())]),
    )
    codes = need.codes[order]
    starts = np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1]
    position = np.arange(codes.size) - np.repeat(starts, np.diff(np.r_[starts, codes.size]))
    keep = order[position < depth]
    return pd.DataFrame(
        {
            "need_id": run["need_id"].astype(str).to_numpy()[keep],
            "doc_id": run["doc_id"].astype(str).to_numpy()[keep],
        }
    )


def pool_contributions(
    runs: Mapping[str, pd.DataFrame], participants: Mapping[str, str], depth: int = 100
) -> pd.DataFrame:
    """Every (need_id, doc_id, participant) in some top ``depth`` of that participant's runs,
    with ``contributors``: how many participants put that pair in their top ``depth``."""
    if depth < 1:
        raise ValueError("pool depth must be at least 1")
    parts = [
        _top(frame, depth).assign(participant=participants[name]) for name, frame in runs.items()
    ]
    if not parts:
        return pd.DataFrame(columns=["need_id", "doc_id", "participant", "contributors"])
    pool = pd.concat(parts, ignore_index=True).drop_duplicates()
    pool["contributors"] = pool.groupby(["need_id", "doc_id"])["participant"].transform("size")
    return pool.reset_index(drop=True)


#: Rows of the judged ranks scored in one batch (several runs' needs at once).
BATCH_ROWS = 1_000_000


def _ranking(
    qrels: QrelsIndex,
    batch: list[JudgedRanks],
    keep: np.ndarray | None,
    levels: np.ndarray,
    grades: np.ndarray,
    relevance_level: int,
    full: bool,
) -> Ranking:
    """One :class:`~evaluation.measures.Ranking` of several runs: run j's need i is the
    ranking's need ``j * len(needs) + i``. ``keep``: which of the runs' judged rows
    (concatenated) stay (None: all); ``levels``: per run, its needs x grades counts of
    the judgments left (the grades in ``grades``). ``full``: the rows outside the qrels rebuilt from ``num_ret``."""
    n = len(qrels.needs)
    line = np.concatenate([found.line for found in batch])
    rank = np.concatenate([found.rank for found in batch])
    run = np.repeat(np.arange(len(batch), dtype=np.int32) * n, [len(f.line) for f in batch])
    if keep is not None:
        line, rank, run = line[keep], rank[keep], run[keep]
    need = qrels.need32[line] + run
    rel = qrels.relevance32[line]
    rel[rel < 0] = UNJUDGED
    num_ret = np.concatenate([found.num_ret for found in batch]).astype(np.int64)
    has_run = num_ret > 0
    # evaluate(complete=True) ranks a need without run lines on trec_eval's bogus
    # one-document ranking: one document outside the qrels at rank 1
    num_ret[~has_run] = 1
    if full:
        starts = np.cumsum(num_ret) - num_ret
        every = np.full(int(num_ret.sum()), NONPOOL, np.int64)
        every[starts[need] + rank - 1] = rel
        need = np.repeat(np.arange(len(num_ret)), num_ret)
        rank = np.arange(len(need)) - starts[need] + 1
        rel = every
    return Ranking(
        need_ids=np.arange(len(num_ret)).astype(str).astype(object),
        need=need,
        rank=rank,
        rel=rel,
        num_ret=num_ret,
        has_run=has_run,
        rel_levels=levels.reshape(-1, levels.shape[-1]),
        grades=grades,
        level=relevance_level,
        qrels_positive=int((qrels.relevance > 0).sum()),
    )


def _counts(
    qrels: QrelsIndex, group: np.ndarray, groups: int, grade: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per group (``group`` of each qrels line, -1: none) and need: the count of each
    non-negative grade (``grade``: each line's index into the ``width`` grades, -1 for a
    negative relevance; groups x needs x ``width``) and of all lines."""
    n = len(qrels.needs)
    at = (group >= 0) & (grade >= 0)
    key = (group[at] * n + qrels.need[at]) * width + grade[at]
    levels = np.bincount(key, minlength=groups * n * width).reshape(groups, n, width)
    at = group >= 0
    lines = np.bincount(group[at] * n + qrels.need[at], minlength=groups * n)
    return levels, lines.reshape(groups, n)


def _per_need(
    qrels: QrelsIndex,
    ranks: list[JudgedRanks],
    teams: np.ndarray | None,
    unique_to: np.ndarray,
    measures: list[str],
    relevance_level: int,
) -> dict[str, np.ndarray]:
    """Per-need scores of each measure, runs x needs (``qrels.needs`` order), as
    :func:`evaluate` with ``complete`` gives them: on all the qrels (``teams`` None),
    or on the qrels without the lines unique to each run's team (``unique_to``: the team
    a line is unique to, else -1); a need left with no qrels line scores 0, as one the
    run's qrels lack."""
    requests = parse_requests(measures)
    full = any(req.measure.name in READS_UNJUDGED for req in requests)
    n = len(qrels.needs)
    nonneg = qrels.relevance >= 0
    grades, code = grade_codes(qrels.relevance[nonneg])
    grade = np.full(len(qrels), -1, np.int64)
    grade[nonneg] = code
    width = len(grades)
    every, lines = _counts(qrels, np.zeros(len(qrels), np.int64), 1, grade, width)
    if teams is not None:  # per team: the judgments left without its unique ones
        groups = int(max(unique_to.max(initial=-1), teams.max(initial=-1))) + 1
        gone, gone_lines = _counts(qrels, unique_to, groups, grade, width)
        every, lines = every - gone, lines - gone_lines
    out: dict[str, list[np.ndarray]] = {}
    start = 0
    while start < len(ranks):
        stop, rows = start + 1, len(ranks[start].line)
        while stop < len(ranks) and rows + len(ranks[stop].line) <= BATCH_ROWS:
            rows += len(ranks[stop].line)
            stop += 1
        batch = ranks[start:stop]
        if teams is None:
            keep, at = None, np.zeros(len(batch), np.int64)
        else:  # a run's rows of lines unique to its team go
            at = teams[start:stop]
            line = np.concatenate([found.line for found in batch])
            keep = unique_to[line] != np.repeat(at, [len(found.line) for found in batch])
        levels, left = every[at], lines[at]
        ranking = _ranking(qrels, batch, keep, levels, grades, relevance_level, full)
        columns = score_ranking(ranking, requests, True, False).columns
        if len(columns) < len(measures):  # gm_map, num_q: printed over all needs only
            raise ValueError(
                f"measure {measures[0]!r} has no per-need values (trec_eval prints it for "
                "all needs only): pick a per-need measure such as map or P_10"
            )
        if len(columns) != len(measures):
            raise ValueError(f"measure {measures[0]!r} gives several values: name one")
        for name, values in columns.items():
            values = values.reshape(len(batch), n)
            out.setdefault(name, []).append(np.where(left > 0, values, 0.0))
        start = stop
    return {name: np.concatenate(parts) for name, parts in out.items()}


def _means(values: np.ndarray) -> np.ndarray:
    """Each run's mean over the needs, summed as pandas' ``mean`` sums a column."""
    return np.ascontiguousarray(values).sum(axis=1) / values.shape[1]


def pool_bias(
    qrels: pd.DataFrame | object,
    runs: Mapping[str, object],
    participants: Mapping[str, str],
    *,
    measure: str = "map",
    depth: int = 100,
    judged_k: int = 10,
    relevance_level: int = 1,
) -> dict:
    """Leave-one-team-out pool bias of runs (see the module docstring).

    ``runs`` maps a run name to a run (a file, a :class:`~evaluation.trec.Run`, a frame:
    whatever :func:`evaluation.measures.evaluate` reads); each is read once into its
    :class:`~evaluation.health.judged.JudgedRanks` and :func:`pool_bias_of_ranks` does
    the rest (same arguments and result).
    """
    index = QrelsIndex(qrels)
    ranks = {name: judged_ranks(index, run) for name, run in runs.items()}
    return pool_bias_of_ranks(
        index,
        ranks,
        participants,
        measure=measure,
        depth=depth,
        judged_k=judged_k,
        relevance_level=relevance_level,
    )


def pool_bias_of_ranks(
    qrels: QrelsIndex,
    runs: Mapping[str, JudgedRanks],
    participants: Mapping[str, str],
    *,
    measure: str = "map",
    depth: int = 100,
    judged_k: int = 10,
    relevance_level: int = 1,
) -> dict:
    """Leave-one-team-out pool bias from each run's stored judged ranks.

    ``runs`` maps a run name to its :class:`~evaluation.health.judged.JudgedRanks` on
    ``qrels``; ``participants`` maps each run name to its team. Returns ``runs``: a
    DataFrame, one row per run (``run``, ``participant``: its team, ``score``,
    ``loo_score``, ``drop`` = score - loo_score, ``rank``, ``loo_rank``,
    ``rank_change`` = loo_rank - rank, ``judged``: Judged@``judged_k``), sorted by drop
    descending; ``participants``: one row per team (``unique_judged``,
    ``unique_relevant``: the judgments only it contributed, ``max_drop``, ``tau``:
    original vs leave-this-one-out ranking of all runs); ``max_drop`` over all runs;
    ``depth`` and ``measure``. Work: a run's judged documents, twice (scored on all
    judgments, then on its team's left out); no run file is read.
    """
    missing = set(runs) - set(participants)
    if missing:
        raise ValueError(f"no participant given for runs {sorted(missing)[:5]}")
    if depth < 1:
        raise ValueError("pool depth must be at least 1")
    names = list(runs)
    if not names:
        raise ValueError("no runs to assess")
    found = [runs[name] for name in names]
    by_participant = np.array([participants[name] for name in names])
    teams, team_of = np.unique(by_participant, return_inverse=True)
    # the teams that put each judged line in some run's top `depth`: one team or several
    first = np.full(len(qrels), -1, np.int64)
    several = np.zeros(len(qrels), bool)
    for team, ranks in zip(team_of, found, strict=True):
        top = ranks.line[ranks.rank <= depth]
        seen = first[top]
        several[top] |= (seen >= 0) & (seen != team)
        first[top] = np.where(seen >= 0, seen, team)
    unique_to = np.where(several, -1, first)
    judged_measure = f"Judged@{judged_k}"
    both = [measure, judged_measure] if measure != judged_measure else [measure]
    values = _per_need(qrels, found, None, unique_to, both, relevance_level)
    judged_column = f"judged_{judged_k}"  # the engine's name; columns come in its order
    others = [c for c in values if c != judged_column] or [judged_column]
    score, judged = _means(values[others[0]]), _means(values[judged_column])
    unique = unique_to >= 0
    unique_judged = np.bincount(unique_to[unique], minlength=len(teams))
    relevant = unique & (qrels.relevance >= relevance_level)
    unique_relevant = np.bincount(unique_to[relevant], minlength=len(teams))
    changed = np.flatnonzero(unique_judged[team_of] > 0)
    loo = score.copy()
    if len(changed):
        left_out = _per_need(
            qrels, [found[i] for i in changed], team_of[changed], unique_to, [measure],
            relevance_level,
        )  # fmt: skip
        loo[changed] = _means(next(iter(left_out.values())))
    rows = []
    rank = _competition_ranks(score)
    loo_rank = np.empty(len(names), dtype=np.int64)
    for participant in pd.unique(by_participant):
        mine = np.flatnonzero(by_participant == participant)
        team = int(np.searchsorted(teams, participant))
        trial = score.copy()
        trial[mine] = loo[mine]
        loo_rank[mine] = _competition_ranks(trial)[mine]
        drops = score[mine] - trial[mine]
        rows.append(
            {
                "participant": participant,
                "runs": int(mine.size),
                "unique_judged": int(unique_judged[team]),
                "unique_relevant": int(unique_relevant[team]),
                "max_drop": float(drops.max()),
                "tau": kendall_tau(score, trial),
            }
        )
    table = pd.DataFrame(
        {
            "run": names,
            "participant": by_participant,
            "score": score,
            "loo_score": loo,
            "drop": score - loo,
            "rank": rank,
            "loo_rank": loo_rank,
            "rank_change": loo_rank - rank,
            "judged": judged,
        }
    ).sort_values(["drop", "run"], ascending=[False, True], kind="stable")
    return {
        "measure": measure,
        "depth": depth,
        "judged_k": judged_k,
        "runs": table.reset_index(drop=True),
        "participants": pd.DataFrame(rows),
        "max_drop": float(table["drop"].max()) if len(table) else float("nan"),
    }


def judged_of_ranks(
    qrels: QrelsIndex, runs: Mapping[str, JudgedRanks], cutoffs: Sequence[int] = (10, 100)
) -> pd.DataFrame:
    """Judged@k of each run from its stored judged ranks: the engine's ``judged_k``
    measure (:func:`evaluation.measures.definitions.judged_at`), per need judged in the
    top k / min(k, num_ret) (a judgment of any relevance counts, negative too; 0 for a
    need the run left empty), averaged over the needs of ``qrels``: what :func:`evaluation.measures.evaluate`
    (``complete``) gives on the run, to rounding (the needs are summed in the qrels'
    order, trec_eval's summary sums them in its own). The ranks are
    not cut at any ``-M`` depth.

    Returns one row per run (index: the names of ``runs``), a column ``judged_k`` per
    cutoff. Example: a run whose only need has 7 of its top 10 in the qrels, and 40 of
    its 400 lines, has Judged@10 = 0.7 and Judged@100 = 40 / 100 = 0.4 when the 40 are
    in its top 100. Work: the runs' judged documents; no run file is read.
    """
    if not cutoffs or min(cutoffs) < 1:
        raise ValueError("Judged@k needs cutoffs of at least 1")
    columns = [f"judged_{k}" for k in cutoffs]
    names = list(runs)
    if not names:
        return pd.DataFrame(columns=columns, index=pd.Index([], dtype=object), dtype=float)
    nobody = np.full(len(qrels), -1, np.int64)
    found = [runs[name] for name in names]
    values = _per_need(qrels, found, None, nobody, [f"Judged@{k}" for k in cutoffs], 1)
    return pd.DataFrame({c: _means(values[c]) for c in columns}, index=pd.Index(names))


def _competition_ranks(scores: np.ndarray) -> np.ndarray:
    """1 + the number of runs scoring strictly higher (ties share the best rank)."""
    ordered = np.sort(scores)[::-1]
    return 1 + np.searchsorted(-ordered, -scores, side="left")
