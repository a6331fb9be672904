"""One benchmark's health in one call: what the platform stores and the page shows.

:func:`benchmark_health` takes the needs x runs matrix of each measure (the same runs and
needs in each) and returns a JSON-ready dict: for every measure V_E, sigma_d, the MDD at
the requested power, the topic set sizes for the requested differences, discriminative
power under one test and correction with its (thinned) ASL curve, and Kendall's tau and
tau_AP of its ranking of the runs (by mean) against the primary measure's. Raw p-values
stored elsewhere (the platform's comparisons) may be passed in per measure instead of
being recomputed; they must cover every pair of the runs in ``np.triu_indices`` order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from evaluation.health.agreement import kendall_tau, tau_ap
from evaluation.health.discrimination import asl_curve, discriminative_power, pair_p_values
from evaluation.health.power import (
    minimum_detectable_difference,
    residual_variance,
    topic_set_size,
)

__all__ = ["DELTAS", "benchmark_health"]

#: The differences the topic set sizes are given for.
DELTAS = (0.01, 0.02, 0.05)
#: Points kept of each ASL curve (the page plots them).
ASL_POINTS = 200


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def benchmark_health(
    matrices: Mapping[str, pd.DataFrame],
    *,
    primary: str | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    power: float = 0.8,
    deltas: Sequence[float] = DELTAS,
    p_values: Mapping[str, np.ndarray] | None = None,
    permutations: int = 10_000,
) -> dict:
    """The health of a benchmark from its per-need scores (see the module docstring).

    ``matrices``: measure name -> needs x runs DataFrame; ``primary`` (default the first
    measure) is the ranking every other measure's is compared with. NaN and infinities
    become None so the result is valid JSON.
    """
    if not matrices:
        raise ValueError("no measure to assess")
    primary = primary or next(iter(matrices))
    if primary not in matrices:
        raise ValueError(f"primary measure {primary!r} has no scores")
    reference = matrices[primary].mean(axis=0).to_numpy()
    first = matrices[primary]
    out: dict = {
        "needs": int(first.shape[0]),
        "runs": int(first.shape[1]),
        "primary": primary,
        "test": test,
        "correction": correction,
        "alpha": alpha,
        "power": power,
        "deltas": list(deltas),
        "measures": {},
    }
    for name, scores in matrices.items():
        if scores.shape != first.shape:
            raise ValueError(f"measure {name!r} scores other runs or needs than {primary!r}")
        n = scores.shape[0]
        v_e = residual_variance(scores)
        sigma_d = math.sqrt(2 * v_e) if math.isfinite(v_e) else math.nan
        given = None if p_values is None else p_values.get(name)
        p = (
            pair_p_values(scores, test, permutations=permutations)
            if given is None
            else np.asarray(given, dtype=np.float64)
        )
        discrim = discriminative_power(p, alpha=alpha, correction=correction)
        means = scores.mean(axis=0).to_numpy()
        out["measures"][name] = {
            "mean": _finite(float(means.mean())) if means.size else None,
            "v_e": _finite(v_e),
            "sigma_d": _finite(sigma_d),
            "mdd": _finite(minimum_detectable_difference(n, sigma_d, alpha, power)),
            "topic_set_size": {
                str(delta): topic_set_size(delta, sigma_d, alpha, power) for delta in deltas
            },
            "discriminative_power": {**discrim, "share": _finite(discrim["share"])},
            "asl": [[int(r), float(v)] for r, v in asl_curve(p, correction, ASL_POINTS)],
            "tau": _finite(kendall_tau(reference, means)),
            "tau_ap": _finite(tau_ap(reference, means)),
        }
    return out
