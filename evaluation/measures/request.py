"""Measure requests: the ``-m`` arguments, in either name system, parsed and computed.

:func:`parse_requests` reads a list of ``-m`` texts into :class:`Request`\\ s in
trec_eval's output order. A text is read in trec_eval's ``-m`` syntax when its
name (before the first ``.``) is a trec_eval measure or set: ``"map"``,
``"P.5,7,3"``, ``"ndcg.1=3,2=9"``, ``"iprec_at_recall..10,.20"``, ``"all_trec"``;
there, as in trec_eval, a set marks its members and the first parameters given
for a measure win. Any other text is a catalog name
(:func:`evaluation.measures.catalog.resolve`): ``"nDCG@10"``, ``"RR@10"``,
``"AP"``, ``"P_10"``, ``"recip_rank_cut_10"``; its cutoff is *added* to the
measure's cutoffs (to the defaults when a set or the bare name asked for the
measure, else to the cutoffs given), so ``-m all_trec -m P@7`` gives ``P_7``
next to trec_eval's nine defaults, and ``-m nDCG@10 -m nDCG@20`` both.

:func:`compute_request` parses a request's parameters by its measure's kind and
computes it on a :class:`~evaluation.measures.ranking.Ranking`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.measures.catalog import (
    MEASURES,
    NOT_IMPLEMENTED,
    Measure,
    measure_named,
    measure_sets,
    resolve,
)
from evaluation.measures.ranking import Ranking

__all__ = ["Request", "compute_request", "parse_requests", "split_params"]


@dataclass
class Request:
    """A measure asked for with ``-m``, with its parameter text (None: the defaults)."""

    measure: Measure
    params: str | None  # the text after the first '.', as given


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


def _cut_value(measure: Measure, text: str) -> float:
    """The value a cutoff text stands for (what makes two cutoffs the same)."""
    return float(_atol(text)) if measure.kind == "long_cut" else _number(measure, text)


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(measure: Measure, text: str) -> float:
    """A parameter's value: a decimal number (trec_eval's atof would read ``a`` as 0
    and ``1_0`` as 1, surely not what was meant), else a ValueError naming the measure."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise ValueError(f"{measure.name}: parameter {text!r} is not a number")
    return float(text)


def _with_cutoffs(measure: Measure, base: str | None, added: list[str]) -> str | None:
    """``base`` parameters (None: the defaults) plus the ``added`` cutoffs, each value once."""
    if not added:
        return base
    texts = split_params(base) if base else list(measure.defaults)
    seen = {_cut_value(measure, t) for t in texts}
    for text in added:
        if _cut_value(measure, text) not in seen:
            seen.add(_cut_value(measure, text))
            texts.append(text)
    return ",".join(texts)


def parse_requests(measures: Sequence[str] | None, trec_eval_9: bool = False) -> list[Request]:
    """Resolve ``-m`` arguments (either name system) into measures, in trec_eval's order.

    ``trec_eval_9``: the sets are 9.0.8's (``all_trec`` without ``rbp``,
    ``rbp_resid`` and ``unj``, which 9.0.8 lacks); asked for by name they are
    still computed. Unknown names raise
    :class:`~evaluation.measures.catalog.UnknownMeasure` (a ValueError naming
    close matches); a malformed parameter text raises ValueError.
    """
    sets = measure_sets(trec_eval_9)
    marked: set[str] = set()
    bare: set[str] = set()  # asked for without parameters (a set or the plain name)
    params: dict[str, str] = {}
    added: dict[str, list[str]] = {}
    for text in measures if measures is not None else ["official"]:
        name, dot, rest = text.partition(".")
        if name in sets or measure_named(name) is not None:
            if dot:
                if not rest:
                    raise ValueError(f"improper measure parameters in {text!r}")
                params.setdefault(name, rest)
            else:
                bare.add(name)
            if name in sets:
                marked.update(sets[name])
                bare.update(sets[name])
            else:
                marked.add(name)
            continue
        if name in NOT_IMPLEMENTED:
            raise ValueError(f"measure {name!r} is not implemented by this engine")
        entry = resolve(text)
        marked.add(entry.measure)
        if entry.param is not None:  # a cutoff (the catalog names no other parameter)
            added.setdefault(entry.measure, []).append(entry.param)
    requests = []
    for m in MEASURES:
        if m.name not in marked:
            continue
        given = params.get(m.name)
        if m.name in added and given is None and m.name not in bare:
            # only catalog names asked for it: their cutoffs, not the defaults
            given, cuts = added[m.name][0], added[m.name][1:]
        else:
            cuts = added.get(m.name, [])
        requests.append(Request(m, _with_cutoffs(m, given, cuts)))
    return requests


def compute_request(req: Request, ranking: Ranking) -> dict[str, np.ndarray]:
    """Parse ``req``'s parameters by its measure's kind and compute it on ``ranking``.

    Returns printed name (``P_10``, ``ndcg_cut_5`` ...) -> one value per need.
    Raises ValueError for cutoffs that are not positive, duplicate cutoffs or
    malformed ``key=value`` pairs, as trec_eval refuses them.
    """
    m, text = req.measure, req.params
    if m.kind == "bare":
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
            ((t, _number(m, t)) for t in (split_params(text) if text else m.defaults)),
            key=lambda x: x[1],
        )
        if len({v for _, v in levels}) != len(levels):
            raise ValueError(f"{m.name}: duplicate cutoffs")
        return m.compute(ranking, levels)
    name = f"{m.name}_{text}" if text else m.name
    if m.kind == "double_params":
        values = split_params(text) if text else list(m.defaults)
        if m.name == "11pt_avg":
            return m.compute(ranking, [(t, _number(m, t)) for t in values], name)
        return m.compute(ranking, [_number(m, v) for v in values], name)
    pairs = []
    if text:
        for item in split_params(text):
            key, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"{m.name}: malformed pair parameters in {text!r}")
            pairs.append((key, _number(m, value)))
    return m.compute(ranking, pairs, name)
