"""Pool bias: would a run have scored lower had its participant not contributed to the pool?

Zobel (SIGIR 1998) and Buckley and Voorhees (SIGIR 2004): the judgments of a pooled
benchmark come from the top ``depth`` documents of the participants' runs, so a run
scored against them is helped by the documents only its own participant found. Leave
one participant out: for each participant p,

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

A participant is a team or a person, as the caller groups runs. Pairs judged but
retrieved by no run within the depth (judged from elsewhere) are unique to nobody and
never removed. Also per run, ``Judged@k`` (ir_measures' name; the engine's
``judged_k``): the share of its top k that is judged, averaged over the needs.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

from evaluation.health.agreement import kendall_tau
from evaluation.measures import evaluate, trec_order
from evaluation.trec import as_qrels, as_run

__all__ = ["pool_bias", "pool_contributions"]


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


def _scores(
    qrels: pd.DataFrame, run: pd.DataFrame, measure: str, needs: pd.Index, **kw
) -> pd.Series:
    return _score_table(qrels, run, [measure], needs, **kw).iloc[:, 0]


def _score_table(
    qrels: pd.DataFrame, run: pd.DataFrame, measures: list[str], needs: pd.Index, **kw
) -> pd.DataFrame:
    """Per-need scores of each measure (one evaluation: the run is ordered once), over
    ``needs`` (a need the run or the qrels lack scores 0)."""
    table = evaluate(qrels, run, measures=measures, complete=True, **kw).per_need
    if table.shape[1] != len(measures):
        raise ValueError(f"measure {measures[0]!r} gives several values: name one")
    table.index = table.index.astype(str)
    return table.reindex(needs, fill_value=0.0)


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
    """Leave-one-participant-out pool bias (see the module docstring).

    ``runs`` maps a run name to a run (a file, a :class:`~evaluation.trec.Run`, a frame:
    whatever :func:`evaluation.measures.evaluate` reads); ``participants`` maps each run
    name to its participant. Returns ``runs``: a DataFrame, one row per run (``run``,
    ``participant``, ``score``, ``loo_score``, ``drop`` = score - loo_score, ``rank``,
    ``loo_rank``, ``rank_change`` = loo_rank - rank, ``judged``: Judged@``judged_k``),
    sorted by drop descending; ``participants``: one row per participant
    (``unique_judged``, ``unique_relevant``: the judgments only it contributed,
    ``max_drop``, ``tau``: original vs leave-this-one-out ranking of all runs);
    ``max_drop`` over all runs; ``depth`` and ``measure``.
    """
    missing = set(runs) - set(participants)
    if missing:
        raise ValueError(f"no participant given for runs {sorted(missing)[:5]}")
    qrels = as_qrels(qrels)
    qrels = qrels.assign(need_id=qrels["need_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    needs = pd.Index(pd.unique(qrels["need_id"]), name="need_id")
    frames = {name: _frame(run) for name, run in runs.items()}
    pool = pool_contributions(frames, participants, depth)
    unique = pool[pool["contributors"] == 1].merge(qrels, on=["need_id", "doc_id"])
    kw = {"relevance_level": relevance_level}
    names = list(frames)
    score = np.empty(len(names))
    judged = np.empty(len(names))
    judged_measure = f"Judged@{judged_k}"
    both = [measure, judged_measure] if measure != judged_measure else [measure]
    for i, name in enumerate(names):
        means = _score_table(qrels, frames[name], both, needs, **kw).mean()
        judged_column = f"judged_{judged_k}"  # the engine's name; columns come in its order
        others = [c for c in means.index if c != judged_column] or [judged_column]
        score[i], judged[i] = means[others[0]], means[judged_column]
    loo = score.copy()
    by_participant = np.array([participants[name] for name in names])
    rows = []
    rank = _competition_ranks(score)
    loo_rank = np.empty(len(names), dtype=np.int64)
    for participant in pd.unique(by_participant):
        mine = np.flatnonzero(by_participant == participant)
        removed = unique[unique["participant"] == participant]
        trial = score.copy()
        if len(removed):
            key = pd.MultiIndex.from_frame(removed[["need_id", "doc_id"]])
            kept = qrels[~pd.MultiIndex.from_frame(qrels[["need_id", "doc_id"]]).isin(key)]
            for i in mine:  # nothing judged left (one participant pooled it all): zeros
                trial[i] = (
                    _scores(kept, frames[names[i]], measure, needs, **kw).mean()
                    if len(kept)
                    else 0.0
                )
        loo[mine] = trial[mine]
        loo_rank[mine] = _competition_ranks(trial)[mine]
        drops = score[mine] - trial[mine]
        rows.append(
            {
                "participant": participant,
                "runs": int(mine.size),
                "unique_judged": int(len(removed)),
                "unique_relevant": int((removed["relevance"] >= relevance_level).sum()),
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


def _frame(run: object) -> pd.DataFrame:
    if isinstance(run, pd.DataFrame) and {"need_id", "doc_id", "score"} <= set(run.columns):
        return run
    return as_run(run).frame


def _competition_ranks(scores: np.ndarray) -> np.ndarray:
    """1 + the number of runs scoring strictly higher (ties share the best rank)."""
    ordered = np.sort(scores)[::-1]
    return 1 + np.searchsorted(-ordered, -scores, side="left")
