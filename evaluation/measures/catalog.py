"""The measure catalog: every measure the engine computes, under both names the field uses.

The one place measures are named. :data:`MEASURES` lists trec_eval's measures
in its ``te_trec_measures`` order (also its output order), each with its kind
of parameters, defaults, summary over needs and the function in
:mod:`evaluation.measures.definitions` or :mod:`evaluation.measures.gains` that
computes it, then the two measures trec_eval lacks (``recip_rank_cut``,
ir_measures' ``RR@k``; ``judged``, its ``Judged@k``). :data:`OFFICIAL` and
:data:`ALL_TREC` are trec_eval's sets; :func:`measure_sets` also gives 9.0.8's.

Two name systems, both accepted everywhere (:func:`resolve`):

- trec_eval's, which data and output keep: a column is the measure's name, plus
  ``_`` and the cutoff for measures with cutoffs (``ndcg_cut_10``, ``P_10``,
  ``iprec_at_recall_0.10``, ``recip_rank_cut_10``); ``-m`` requests are
  ``measure.params`` (``P.5,10``), parsed in :mod:`evaluation.measures.request`;
- ir_measures' (``nDCG@10``, ``AP``, ``RR@10``, ``P@10``, ``R@1000``,
  ``Judged@10``), mapped as its pytrec_eval provider maps them to trec_eval, and
  used as the reader's label (:attr:`CatalogEntry.label`).

Kinds of parameters: ``long_cut`` integer cutoffs (``P.5,10``, read with C's
``atol``), ``double_cut`` float levels (``iprec_at_recall..10,.20``),
``double_params`` float parameters (``utility``, ``set_F``, ``11pt_avg``),
``pairs`` ``key=value`` pairs (``ndcg.1=3,2=9``), ``bare`` none.

Just over 400 lines: the measure table and its two name systems are one
concern, and splitting them would make two places that name measures.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evaluation.measures import definitions as d
from evaluation.measures import experimental
from evaluation.measures import gains as g
from evaluation.measures.interpolation import STANDARD_LEVELS

__all__ = [
    "ALL_TREC",
    "BOGUS_ZEROED",
    "MEASURES",
    "NOT_IMPLEMENTED",
    "OFFICIAL",
    "STORED",
    "TREC_EVAL_10_ONLY",
    "ENGINE_ONLY",
    "GROUPS",
    "CatalogEntry",
    "Measure",
    "UnknownMeasure",
    "close_matches",
    "measure_named",
    "measure_sets",
    "resolve",
    "stored_measures",
    "stored_requests",
]

_CUTS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")


@dataclass(frozen=True)
class Measure:
    """One measure: its name, kind of parameters, computation and summary.

    ``compute`` takes the :class:`Ranking` (and, by kind, the parsed parameters
    and the printed name) and returns printed name -> one value per need.
    ``summary`` says how the ``all`` line is formed; ``per_need`` whether the
    measure has per-need values; ``integer`` whether it prints as an integer.
    """

    name: str
    kind: str  # "long_cut", "double_cut", "double_params", "pairs", "bare"
    compute: Callable | None
    defaults: tuple[str, ...] = ()
    summary: str = "mean"  # "mean", "gm", "sum", "num_rel", "num_q", "none", "runid"
    per_need: bool = True
    integer: bool = False


def _count(name: str, summary: str = "sum") -> Measure:
    return Measure(name, "bare", lambda r: {name: d.counts(r)[name]}, summary=summary, integer=True)


# trec_eval's te_trec_measures order, which is also its output order
MEASURES = [
    Measure("runid", "bare", lambda r: {}, summary="runid", per_need=False),
    Measure("num_q", "bare", lambda r: {}, summary="num_q", per_need=False, integer=True),
    _count("num_ret"),
    _count("num_rel", summary="num_rel"),
    _count("num_rel_ret"),
    Measure("map", "bare", d.ap),
    Measure("gm_map", "bare", d.gm_ap, summary="gm", per_need=False),
    Measure("Rprec", "bare", d.r_precision),
    Measure("bpref", "bare", d.bpref),
    Measure("recip_rank", "bare", d.reciprocal_rank),
    Measure("iprec_at_recall", "double_cut", d.iprec_at_recall, STANDARD_LEVELS),
    Measure("P", "long_cut", d.precision_at, _CUTS),
    Measure("relstring", "double_params", None, ("10",), summary="none"),
    Measure("recall", "long_cut", d.recall_at, _CUTS),
    Measure("infAP", "bare", d.infap),
    Measure("gm_bpref", "bare", d.gm_bpref, summary="gm", per_need=False),
    Measure(
        "Rprec_mult",
        "double_cut",
        d.r_precision_multiples,
        ("0.2", "0.4", "0.6", "0.8", "1.0", "1.2", "1.4", "1.6", "1.8", "2.0"),
    ),
    Measure("utility", "double_params", d.utility, ("1.0", "-1.0", "0.0", "0.0")),
    Measure("11pt_avg", "double_params", d.eleven_point, STANDARD_LEVELS),
    Measure("binG", "bare", d.binary_gain),
    Measure("G", "pairs", experimental.g_measure),
    Measure("dcg", "pairs", g.ndcg),
    Measure("ideal_dcg", "pairs", g.ndcg),
    Measure("ndcg", "pairs", g.ndcg),
    Measure("ndcg_rel", "pairs", experimental.ndcg_rel),
    Measure("Rndcg", "pairs", experimental.rndcg),
    Measure("ndcg_cut", "long_cut", g.ndcg_cut, _CUTS),
    Measure("map_cut", "long_cut", d.map_at, _CUTS),
    Measure("relative_P", "long_cut", d.relative_precision_at, _CUTS),
    Measure("success", "long_cut", d.success_at, ("1", "5", "10")),
    Measure("set_P", "bare", lambda r: d.set_measures(r, "set_P")),
    Measure("set_relative_P", "bare", lambda r: d.set_measures(r, "set_relative_P")),
    Measure("set_recall", "bare", lambda r: d.set_measures(r, "set_recall")),
    Measure("set_map", "bare", lambda r: d.set_measures(r, "set_map")),
    Measure(
        "set_F", "double_params", lambda r, p, name: d.set_measures(r, "set_F", p, name), ("1.0",)
    ),
    Measure("num_nonrel_judged_ret", "bare", d.num_nonrel_judged_ret, summary="sum", integer=True),
    Measure("rbp", "pairs", g.rbp),
    Measure("rbp_resid", "pairs", g.rbp_resid),
    Measure("unj", "long_cut", d.unjudged_at, ("5", "10", "20")),
    # not trec_eval's: ir_measures' RR@k and Judged@k, printed after trec_eval's own
    Measure("recip_rank_cut", "long_cut", d.reciprocal_rank_at, ("5", "10", "20", "100")),
    Measure("judged", "long_cut", d.judged_at, ("5", "10", "20")),
]
_BY_NAME = {m.name: m for m in MEASURES}
# measures trec_eval resets after scoring a need on its bogus ranking (-c, no run lines)
BOGUS_ZEROED = ("num_ret", "utility", "unj", "rbp_resid")
#: measures trec_eval 9.0.8 does not have (its all_trec set lacks them)
TREC_EVAL_10_ONLY = ("dcg", "ideal_dcg", "rbp", "rbp_resid", "unj")

OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
#: the engine's own measures, outside trec_eval's sets
ENGINE_ONLY = ("recip_rank_cut", "judged")
ALL_TREC = tuple(m.name for m in MEASURES if m.name not in ("dcg", "ideal_dcg", *ENGINE_ONLY))
#: trec_eval's all_trec measures this engine does not compute (experimental gain measures)
NOT_IMPLEMENTED: tuple[str, ...] = ()
_SET = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F",
)  # fmt: skip
#: what the platform stores for every run: all of trec_eval's, RR@k and Judged@k
STORED = ("all_trec", "recip_rank_cut", "judged")


def measure_sets(trec_eval_9: bool = False) -> dict[str, tuple[str, ...]]:
    """trec_eval's measure sets (``official``, ``all_trec``, ``set``); 9.0.8's on request."""
    all_trec = tuple(m for m in ALL_TREC if not (trec_eval_9 and m in TREC_EVAL_10_ONLY))
    return {"official": OFFICIAL, "all_trec": all_trec, "set": _SET}


def measure_named(name: str) -> Measure | None:
    """The measure called ``name`` in trec_eval's ``-m`` syntax, or None."""
    return _BY_NAME.get(name)


# ------------------------------------------------------------------ the two name systems

# ir_measures' name -> (trec_eval measure without a cutoff, trec_eval measure with one),
# as ir_measures' pytrec_eval provider maps them (RR@k and Judged@k are the engine's own)
_IR = {
    "AP": ("map", "map_cut"), "nDCG": ("ndcg", "ndcg_cut"), "P": (None, "P"),
    "R": (None, "recall"), "RR": ("recip_rank", "recip_rank_cut"), "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None), "infAP": ("infAP", None), "Success": (None, "success"),
    "IPrec": (None, "iprec_at_recall"), "Judged": (None, "judged"), "NumQ": ("num_q", None),
    "NumRet": ("num_ret", None), "NumRel": ("num_rel", None),
    "NumRelRet": ("num_rel_ret", None), "SetP": ("set_P", None),
    "SetRelP": ("set_relative_P", None), "SetR": ("set_recall", None), "SetF": ("set_F", None),
    "SetAP": ("set_map", None),
    "GMAP": ("gm_map", None),  # not ir_measures': the field's usual name for gm_map
}  # fmt: skip
# ir_measures' aliases, and the reader's spellings
_ALIASES = {
    "MAP": "AP", "NDCG": "nDCG", "Precision": "P", "Recall": "R", "MRR": "RR",
    "RPrec": "Rprec", "R-Prec": "Rprec", "BPref": "Bpref",
}  # fmt: skip
_LABEL = {measure: name for name, pair in _IR.items() for measure in pair if measure is not None}
_COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")
#: the reader's families of measures, in the order a page lists them (CatalogEntry.group)
GROUPS = ("precision", "recall", "rank-based", "graded", "judged", "counts")
_GROUP_OF = {
    **dict.fromkeys(
        ("P", "relative_P", "set_P", "set_relative_P", "Rprec", "Rprec_mult",
         "iprec_at_recall", "11pt_avg"), "precision"),
    **dict.fromkeys(("recall", "set_recall"), "recall"),
    **dict.fromkeys(
        ("ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "dcg", "ideal_dcg", "G", "binG", "rbp",
         "rbp_resid"), "graded"),
    **dict.fromkeys(("judged", "unj"), "judged"),
    **dict.fromkeys(_COUNTS, "counts"),
}  # fmt: skip
_LOWER_IS_BETTER = ("unj", "rbp_resid")  # shares of unjudged documents, residuals
_TEXT = ("runid", "relstring")
_IR_NAME = re.compile(r"^([A-Za-z-]+)(?:@(\S+))?$")


class UnknownMeasure(ValueError):
    """A name that is no column of the catalog: ``name``, why (``reason``, or None:
    neither name system knows it) and close matches (``suggestions``).

    The message starts as trec_eval's does: ``illegal measure 'ndcg10'; did you
    mean nDCG@10, ndcg_cut_10?``.
    """

    def __init__(self, name: str, reason: str | None = None) -> None:
        self.name = name
        self.reason = reason
        self.suggestions = close_matches(name)
        why = f" ({reason})" if reason else ""
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"illegal measure {name!r}{why}{hint}")


@dataclass(frozen=True)
class CatalogEntry:
    """One column a run can have: ``ndcg_cut_10`` is ``nDCG@10``.

    ``column``: trec_eval's printed name, the name stored and output;
    ``measure`` and ``param``: the trec_eval measure and its cutoff text (None
    when it has none), so :attr:`request` is the ``-m`` text that computes it;
    ``label``: the reader's name (ir_measures' where it has one, else
    trec_eval's); ``per_need``: False for summary-only measures (``gm_map``,
    ``gm_bpref``, ``num_q``); ``is_count``: a count summed over needs
    (``num_ret`` ...), not a score to rank by.
    """

    column: str
    measure: str
    param: str | None
    label: str
    higher_is_better: bool
    is_count: bool
    per_need: bool

    @property
    def request(self) -> str:
        return self.measure if self.param is None else f"{self.measure}.{self.param}"

    @property
    def group(self) -> str:
        """The family a reader looks for it under (one of :data:`GROUPS`): precision,
        recall, graded (gains), judged (pool coverage), counts; the rest (AP, RR, bpref,
        success ...) are rank-based."""
        return _GROUP_OF.get(self.measure, "rank-based")


def _column(measure: Measure, param: str | None) -> str:
    """trec_eval's printed name for ``measure`` with one cutoff ``param``."""
    if param is None:
        return measure.name
    if measure.kind == "double_cut":
        return f"{measure.name}_{float(param):3.2f}"
    return f"{measure.name}_{param}"  # a long cutoff: digits (_entry)


def _entry(measure: Measure, param: str | None) -> CatalogEntry:
    name = measure.name
    if param is not None:  # one spelling per cutoff: "010" is 10, "0.10" and ".1" are 0.1
        param = str(int(param)) if measure.kind == "long_cut" else format(float(param), ".15g")
    ir = _LABEL.get(name)
    if ir is None:
        label = _column(measure, param)
    elif param is None:
        label = ir
    else:
        label = f"{ir}@{param}"
    return CatalogEntry(
        column=_column(measure, param),
        measure=name,
        param=param,
        label=label,
        higher_is_better=name not in _LOWER_IS_BETTER,
        is_count=name in _COUNTS,
        per_need=measure.per_need,
    )


def _checked(measure: Measure, param: str | None, name: str) -> CatalogEntry:
    """The entry for ``measure`` with ``param``, if that names exactly one number column."""
    if measure.name in _TEXT:
        raise UnknownMeasure(name, "text, not a number")
    cut = measure.kind in ("long_cut", "double_cut")
    if param is None:
        if cut:
            raise UnknownMeasure(name, "a cutoff is needed")
        return _entry(measure, None)
    if not cut:  # gains, utility's coefficients ...: trec_eval's -m syntax, not a name
        raise UnknownMeasure(
            name, "only a cutoff can follow its name; use -m syntax for other parameters"
        )
    if measure.kind == "long_cut":
        if not re.fullmatch(r"\d+", param) or int(param) == 0:
            raise UnknownMeasure(name, "the cutoff must be a positive integer")
    else:
        try:
            if float(param) < 0 or "," in param:
                raise ValueError(param)
        except ValueError:
            raise UnknownMeasure(name, "the cutoff must be one number >= 0") from None
    return _entry(measure, param)


def _from_ir(name: str) -> CatalogEntry | None:
    match = _IR_NAME.match(name)
    if not match or _ALIASES.get(match.group(1), match.group(1)) not in _IR:
        return None
    uncut, cut = _IR[_ALIASES.get(match.group(1), match.group(1))]
    if match.group(2) is None:
        if uncut is None:
            raise UnknownMeasure(name, "a cutoff is needed, e.g. @10")
        return _checked(_BY_NAME[uncut], None, name)
    if cut is None:
        raise UnknownMeasure(name, "it takes no cutoff")
    return _checked(_BY_NAME[cut], match.group(2), name)


def _from_trec(name: str) -> CatalogEntry | None:
    """A trec_eval column (``P_10``) or a one-column ``-m`` request (``P.10``)."""
    for sep in (".", "_"):
        head, _, param = name.partition(sep)
        if sep == "_":  # the longest measure name the column starts with
            heads = [m for m in _BY_NAME if name == m or name.startswith(m + "_")]
            if not heads:
                continue
            head = max(heads, key=len)
            param = name[len(head) + 1 :]
        if head in _BY_NAME:
            return _checked(_BY_NAME[head], param or None, name)
    return None


def _resolve_exact(name: str) -> CatalogEntry | None:
    return _from_ir(name) or _from_trec(name)


def resolve(name: str) -> CatalogEntry:
    """The catalog entry ``name`` stands for, in either name system.

    Accepts ir_measures' names (``nDCG@10``, ``AP``, ``MAP``, ``RR@10``,
    ``P@10``, ``R@1000``, ``Judged@10``, ``IPrec@0.1``), trec_eval's columns
    (``ndcg_cut_10``, ``recip_rank``, ``P_10``, ``iprec_at_recall_0.10``) and
    one-column ``-m`` texts (``ndcg_cut.10``); case is ignored when that leaves
    one meaning (``ndcg@10``). Raises :class:`UnknownMeasure` (a ValueError whose
    message names close matches) for anything else, for text measures
    (``runid``, ``relstring``) and for a measure with cutoffs given none (``P``).

    >>> resolve("nDCG@10").column, resolve("recip_rank").label
    ('ndcg_cut_10', 'RR')
    """
    name = name.strip()
    if "(" in name:
        raise UnknownMeasure(name, "ir_measures' (rel=...) parameters are not taken; see -l")
    entry = _resolve_exact(name)
    if entry is not None:
        return entry
    lowered = name.lower()
    meanings = {}
    for known in (*_IR, *_ALIASES, *_BY_NAME):
        if lowered == known.lower() or lowered.startswith(
            (known.lower() + "@", known.lower() + "_", known.lower() + ".")
        ):
            candidate = known + name[len(known) :]
            try:
                found = _resolve_exact(candidate)
            except UnknownMeasure:
                continue
            if found is not None:
                meanings[found.column] = found
    if len(meanings) == 1:
        return next(iter(meanings.values()))
    raise UnknownMeasure(name)


def stored_measures(extra: Iterable[str] = ()) -> list[CatalogEntry]:
    """Every column :func:`stored_requests` asks :func:`evaluate` for, in output order.

    The number columns of :data:`STORED` (all of trec_eval's measures and
    default cutoffs, RR@k, Judged@k), the summary-only ones among them
    (``per_need`` False), plus the catalog names in ``extra`` (a benchmark's
    measures outside the defaults, e.g. ``RR@3``).
    """
    extras = [resolve(name) for name in extra]
    stored = {*ALL_TREC, *ENGINE_ONLY}
    entries = []
    for m in MEASURES:
        mine = [e for e in extras if e.measure == m.name]
        if m.name in _TEXT or (m.name not in stored and not mine):
            continue
        if m.name in stored:
            cut = m.kind in ("long_cut", "double_cut")
            defaults = [_entry(m, p) for p in (m.defaults if cut else [None])]
            columns = {e.column for e in defaults}
            mine = defaults + [e for e in mine if e.column not in columns]
        if m.kind in ("long_cut", "double_cut"):
            mine.sort(key=lambda e: float(e.param))
        entries += list({e.column: e for e in mine}.values())
    return entries


def stored_requests(extra: Iterable[str] = ()) -> list[str]:
    """The ``measures`` argument of :func:`evaluate` that gives :func:`stored_measures`."""
    defaults = {entry.column for entry in stored_measures()}
    return [*STORED, *(c for c in (resolve(name).column for name in extra) if c not in defaults)]


def close_matches(name: str, n: int = 5) -> list[str]:
    """Catalog names close to ``name``, for "unknown measure" errors: the columns of a
    measure named without its cutoff first (``P`` -> ``P@5``, ``P@10`` ...), then
    difflib's nearest labels and columns, case ignored."""
    known: dict[str, str] = {}
    for entry in stored_measures():
        known.setdefault(entry.label.lower(), entry.label)
        known.setdefault(entry.column.lower(), entry.column)
    for alias in _ALIASES:
        known.setdefault(alias.lower(), alias)
    lowered = name.strip().lower()
    found = [k for k in known if k.startswith((lowered + "@", lowered + "_"))]
    import difflib  # only for a misspelt name

    found += difflib.get_close_matches(lowered, list(known), n=n, cutoff=0.6)
    return list(dict.fromkeys(known[k] for k in found))[:n]
