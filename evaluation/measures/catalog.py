"""The measure catalog: every measure this engine computes, named the way trec_eval names it.

The one place measures are named. :data:`MEASURES` lists them in trec_eval's
``te_trec_measures`` order (which is also its output order), each with its kind
of parameters, defaults, summary over needs and the function in
:mod:`evaluation.measures.definitions` or :mod:`evaluation.measures.gains` that
computes it; :data:`OFFICIAL`, :data:`ALL_TREC` and the ``set`` group are
trec_eval's measure sets. :func:`parse_requests` reads trec_eval's ``-m``
syntax (``"map"``, ``"P.5,7,3"``, ``"ndcg.1=3,2=9"``,
``"iprec_at_recall..10,.20"``, a set name) and :func:`compute_request` parses a
measure's parameters by its kind and computes it on a :class:`Ranking`.

Kinds of parameters: ``long_cut`` integer cutoffs (``P.5,10``, read with C's
``atol``), ``double_cut`` float levels (``iprec_at_recall..10,.20``),
``double_params`` float parameters (``utility``, ``set_F``, ``11pt_avg``),
``pairs`` ``key=value`` pairs (``ndcg.1=3,2=9``), ``plain`` none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.measures import definitions as d
from evaluation.measures import gains as g
from evaluation.measures.interpolation import STANDARD_LEVELS
from evaluation.measures.ranking import Ranking

__all__ = [
    "ALL_TREC",
    "BOGUS_ZEROED",
    "MEASURES",
    "NOT_IMPLEMENTED",
    "OFFICIAL",
    "Measure",
    "Request",
    "compute_request",
    "parse_requests",
    "split_params",
]

_CUTS = ["5", "10", "15", "20", "30", "100", "200", "500", "1000"]


@dataclass(frozen=True)
class Measure:
    """One trec_eval measure: its name, kind of parameters, computation and summary.

    ``compute`` takes the :class:`Ranking` (and, by kind, the parsed parameters
    and the printed name) and returns printed name -> one value per need.
    ``summary`` says how the ``all`` line is formed; ``per_need`` whether the
    measure has per-need values; ``integer`` whether it prints as an integer.
    """

    name: str
    kind: str  # "long_cut", "double_cut", "double_params", "pairs", "plain"
    compute: Callable
    defaults: tuple[str, ...] = ()
    summary: str = "mean"  # "mean", "gm", "sum", "num_rel", "num_q", "none"
    per_need: bool = True
    integer: bool = False


# trec_eval's te_trec_measures order, which is also its output order
MEASURES = [
    Measure("runid", "plain", lambda r: {}, summary="runid", per_need=False),
    Measure("num_q", "plain", lambda r: {}, summary="num_q", per_need=False, integer=True),
    Measure(
        "num_ret",
        "plain",
        lambda r: {"num_ret": d.counts(r)["num_ret"]},
        summary="sum",
        integer=True,
    ),
    Measure(
        "num_rel",
        "plain",
        lambda r: {"num_rel": d.counts(r)["num_rel"]},
        summary="num_rel",
        integer=True,
    ),
    Measure(
        "num_rel_ret",
        "plain",
        lambda r: {"num_rel_ret": d.counts(r)["num_rel_ret"]},
        summary="sum",
        integer=True,
    ),
    Measure("map", "plain", d.ap),
    Measure("gm_map", "plain", d.gm_ap, summary="gm", per_need=False),
    Measure("Rprec", "plain", d.r_precision),
    Measure("bpref", "plain", d.bpref),
    Measure("recip_rank", "plain", d.reciprocal_rank),
    Measure("iprec_at_recall", "double_cut", d.iprec_at_recall, STANDARD_LEVELS),
    Measure("P", "long_cut", d.precision_at, tuple(_CUTS)),
    Measure("relstring", "double_params", None, ("10",), summary="none"),
    Measure("recall", "long_cut", d.recall_at, tuple(_CUTS)),
    Measure("infAP", "plain", d.infap),
    Measure("gm_bpref", "plain", d.gm_bpref, summary="gm", per_need=False),
    Measure(
        "Rprec_mult",
        "double_cut",
        d.r_precision_multiples,
        ("0.2", "0.4", "0.6", "0.8", "1.0", "1.2", "1.4", "1.6", "1.8", "2.0"),
    ),
    Measure("utility", "double_params", d.utility, ("1.0", "-1.0", "0.0", "0.0")),
    Measure("11pt_avg", "double_params", d.eleven_point, STANDARD_LEVELS),
    Measure("binG", "plain", d.binary_gain),
    Measure("G", "pairs", g.g_measure),
    Measure("dcg", "pairs", g.ndcg),
    Measure("ideal_dcg", "pairs", g.ndcg),
    Measure("ndcg", "pairs", g.ndcg),
    Measure("ndcg_rel", "pairs", g.ndcg_rel),
    Measure("Rndcg", "pairs", g.rndcg),
    Measure("ndcg_cut", "long_cut", g.ndcg_cut, tuple(_CUTS)),
    Measure("map_cut", "long_cut", d.map_at, tuple(_CUTS)),
    Measure("relative_P", "long_cut", d.relative_precision_at, tuple(_CUTS)),
    Measure("success", "long_cut", d.success_at, ("1", "5", "10")),
    Measure("set_P", "plain", lambda r: d.set_measures(r, "set_P")),
    Measure("set_relative_P", "plain", lambda r: d.set_measures(r, "set_relative_P")),
    Measure("set_recall", "plain", lambda r: d.set_measures(r, "set_recall")),
    Measure("set_map", "plain", lambda r: d.set_measures(r, "set_map")),
    Measure(
        "set_F", "double_params", lambda r, p, name: d.set_measures(r, "set_F", p, name), ("1.0",)
    ),
    Measure("num_nonrel_judged_ret", "plain", d.num_nonrel_judged_ret, summary="sum", integer=True),
    Measure("rbp", "pairs", g.rbp),
    Measure("rbp_resid", "pairs", g.rbp_resid),
    Measure("unj", "long_cut", d.unjudged_at, ("5", "10", "20")),
]
_BY_NAME = {m.name: m for m in MEASURES}
# measures trec_eval resets after scoring a need on its bogus ranking (-c, no run lines)
BOGUS_ZEROED = ("num_ret", "utility", "unj", "rbp_resid")

OFFICIAL = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
ALL_TREC = tuple(m.name for m in MEASURES if m.name not in ("dcg", "ideal_dcg"))
#: trec_eval's all_trec measures this engine does not compute (experimental gain measures)
NOT_IMPLEMENTED: tuple[str, ...] = ()
_SETS = {
    "official": OFFICIAL,
    "all_trec": ALL_TREC,
    "set": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ),
}


@dataclass
class Request:
    """A measure asked for with ``-m``, with its parameter text (None: the defaults)."""

    measure: Measure
    params: str | None  # the text after the first '.', as given


def parse_requests(measures: Sequence[str] | None) -> list[Request]:
    """Resolve ``-m`` arguments into measures (trec_eval order) with their parameters.

    As trec_eval: a set name marks its members; the first parameters given for
    a measure win; unknown names raise ValueError.
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for text in measures if measures is not None else ["official"]:
        name, dot, rest = text.partition(".")
        if dot:
            if not rest:
                raise ValueError(f"improper measure parameters in {text!r}")
            params.setdefault(name, rest)
        if name in _SETS:
            marked.update(_SETS[name])
        elif name in _BY_NAME:
            marked.add(name)
        elif name in NOT_IMPLEMENTED:
            raise ValueError(f"measure {name!r} is not implemented by this engine")
        else:
            raise ValueError(f"illegal measure {text!r}")
    return [Request(m, params.get(m.name)) for m in MEASURES if m.name in marked]


def split_params(params: str) -> list[str]:
    """A measure's parameter text split at commas, as trec_eval does (``"5,10"``)."""
    return params.split(",")


def _atol(text: str) -> int:
    """C's atol: the leading integer of the text (``"23.4"`` -> 23)."""
    digits = ""
    for i, ch in enumerate(text.strip()):
        if ch.isdigit() or (i == 0 and ch in "+-"):
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return 0


def compute_request(req: Request, ranking: Ranking) -> dict[str, np.ndarray]:
    """Parse ``req``'s parameters by its measure's kind and compute it on ``ranking``.

    Returns printed name (``P_10``, ``ndcg_cut_5`` ...) -> one value per need.
    Raises ValueError for cutoffs that are not positive, duplicate cutoffs or
    malformed ``key=value`` pairs, as trec_eval refuses them.
    """
    m, text = req.measure, req.params
    if m.kind == "plain":
        return m.compute(ranking)
    if m.kind == "long_cut":
        cuts = sorted(_atol(t) for t in (split_params(text) if text else m.defaults))
        if cuts[0] <= 0:
            raise ValueError(f"{m.name}: cutoffs must be positive")
        if len(set(cuts)) != len(cuts):
            raise ValueError(f"{m.name}: duplicate cutoffs")
        return m.compute(ranking, cuts)
    if m.kind == "double_cut":
        levels = sorted(
            ((t, float(t)) for t in (split_params(text) if text else m.defaults)),
            key=lambda x: x[1],
        )
        if len({v for _, v in levels}) != len(levels):
            raise ValueError(f"{m.name}: duplicate cutoffs")
        return m.compute(ranking, levels)
    name = f"{m.name}_{text}" if text else m.name
    if m.kind == "double_params":
        values = split_params(text) if text else list(m.defaults)
        if m.name == "11pt_avg":
            return m.compute(ranking, [(t, float(t)) for t in values], name)
        return m.compute(ranking, [float(v) for v in values], name)
    pairs = []
    if text:
        for item in split_params(text):
            key, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"{m.name}: malformed pair parameters in {text!r}")
            pairs.append((key, float(value)))
    return m.compute(ranking, pairs, name)
