"""Significance: paired tests between runs over the needs of one benchmark, and corrections.

- :mod:`evaluation.significance.paired`: one pair of runs need by need: the paired t,
  Wilcoxon signed-rank and randomization tests, mean difference, interval, effect
  size, wins/ties/losses (:func:`compare_pair`, ``PAIR_KEYS``), and what is paired,
  what a missing need counts as and how zeros and ties are treated (its docstring).
- :mod:`evaluation.significance.families`: many runs: the needs x runs matrix
  (:func:`paired_matrix`), every pair (:func:`compare_all_pairs`), one run against
  many (:func:`compare_one_against_many`), corrections over a family (:func:`adjust_frame`).
- :mod:`evaluation.significance.corrections`: Holm and Benjamini-Hochberg
  (:func:`adjust_p`), Tukey's HSD blocked by need (:func:`tukey_hsd_blocked`).

Imports: numpy, pandas, scipy and these modules only; it takes score arrays or
matrices, so nothing of :mod:`evaluation.trec` or :mod:`evaluation.measures` (the
``compare`` command in :mod:`evaluation.cli.compare` scores runs first), and no
Django. Modules here import each other by module path
(``evaluation.significance.paired``), never through this package, which re-exports them.
"""

from evaluation.significance.corrections import (
    CORRECTIONS,
    P_FLOOR,
    adjust_p,
    p_text,
    tukey_hsd_blocked,
)
from evaluation.significance.families import (
    adjust_frame,
    compare_all_pairs,
    compare_one_against_many,
    paired_matrix,
)
from evaluation.significance.paired import (
    PAIR_KEYS,
    FewNeedsWarning,
    compare_pair,
    paired_differences,
    randomization_enumerates,
    sign_flips,
)

__all__ = [
    "CORRECTIONS",
    "P_FLOOR",
    "PAIR_KEYS",
    "FewNeedsWarning",
    "adjust_frame",
    "adjust_p",
    "compare_all_pairs",
    "compare_one_against_many",
    "compare_pair",
    "paired_differences",
    "p_text",
    "paired_matrix",
    "randomization_enumerates",
    "sign_flips",
    "tukey_hsd_blocked",
]
