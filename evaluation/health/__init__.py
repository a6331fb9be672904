"""Benchmark health: can this benchmark separate the runs it ranks?

- :mod:`evaluation.health.power`: the residual variance V_E of the two-way ANOVA
  (:func:`residual_variance`), the paired t-test's power on the noncentral t
  (:func:`t_test_power`), the minimum detectable difference
  (:func:`minimum_detectable_difference`) and the topic set size (:func:`topic_set_size`).
- :mod:`evaluation.health.discrimination`: discriminative power over all pairs of runs
  and the ASL curve (:func:`discriminative_power`, :func:`asl_curve`), from raw p-values
  or a score matrix (:func:`pair_p_values`, :func:`pairwise_t_p`).
- :mod:`evaluation.health.agreement`: Kendall's tau and tau_AP between two rankings.
- :mod:`evaluation.health.pools`: leave-one-team-out pool bias and Judged@k
  (:func:`pool_bias` from runs, :func:`pool_bias_of_ranks` from stored judged ranks,
  :func:`judged_of_ranks`: Judged@k of runs from their judged ranks,
  :func:`pool_contributions`).
- :mod:`evaluation.health.judged`: a run's judged documents and their ranks
  (:class:`JudgedRanks`, :func:`judged_ranks`), all pool bias needs of a run.
- :mod:`evaluation.health.summary`: all of it for one benchmark as a JSON-ready dict
  (:func:`benchmark_health`), what the platform stores.

Imports: numpy, pandas, scipy, :mod:`evaluation.significance` (its tests and
corrections, so a pair is tested the same way everywhere), and for pool bias
:mod:`evaluation.measures` (its ranking and scoring) and :mod:`evaluation.trec` to read runs; no Django.
Modules here import each other by module path, never through this package.
"""

from evaluation.health.agreement import kendall_tau, tau_ap
from evaluation.health.discrimination import (
    TESTS,
    asl_curve,
    discriminative_power,
    pair_p_values,
    pairwise_t_p,
)
from evaluation.health.judged import JudgedRanks, QrelsIndex, judged_ranks
from evaluation.health.pools import (
    judged_of_ranks,
    pool_bias,
    pool_bias_of_ranks,
    pool_contributions,
)
from evaluation.health.power import (
    minimum_detectable_difference,
    residual_variance,
    t_test_power,
    topic_set_size,
)
from evaluation.health.summary import DELTAS, benchmark_health

__all__ = [
    "DELTAS",
    "TESTS",
    "JudgedRanks",
    "QrelsIndex",
    "asl_curve",
    "benchmark_health",
    "discriminative_power",
    "judged_of_ranks",
    "judged_ranks",
    "kendall_tau",
    "minimum_detectable_difference",
    "pair_p_values",
    "pairwise_t_p",
    "pool_bias",
    "pool_bias_of_ranks",
    "pool_contributions",
    "residual_variance",
    "t_test_power",
    "tau_ap",
    "topic_set_size",
]
