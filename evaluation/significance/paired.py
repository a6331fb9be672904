"""Paired significance tests between runs, over the needs of one benchmark.

What is paired: two runs are compared need by need, over one set of needs, the needs of
the qrels with at least one relevant document. A need a run did not answer scores 0
(``trec_eval -c``); ``families.paired_matrix`` builds the needs x runs matrix that way. For runs
a and b the per-need differences are d = a - b, rounded to 12 decimals so float noise
(0.1 + 0.2 vs 0.3) cannot decide a sign, a zero or a tie between two |d|; |d| <= 1e-12
counts as a zero (a tie between the runs).

For each pair (all two-sided, alpha is the caller's):

- ``mean_diff`` = mean(d), its 95% confidence interval from the t distribution
  (``ci_low``, ``ci_high``), ``effect_size`` = mean(d) / sd(d) (Cohen's d_z, ddof = 1),
  ``wins`` / ``ties`` / ``losses`` = #(d > 0) / #(d = 0) / #(d < 0).
- Paired t-test, as ``scipy.stats.ttest_rel``: ``t_statistic``, ``t_p``.
- Wilcoxon signed-rank, as ``scipy.stats.wilcoxon(d, correction=False)``: zero
  differences dropped, ties given average ranks, no continuity correction, and scipy's
  ``method="auto"`` choice made for this pair alone (exact distribution for n <= 50
  with no zeros and no ties; exact sign-flip enumeration for n <= 13 otherwise, done
  here as one matrix product that equals scipy's; normal approximation else). Pairs
  whose choice is the same are sent to scipy together.
  ``wilcoxon_statistic`` is min(R+, R-), as scipy reports it.
- Paired randomization test: the signs of d are flipped at random B times and
  p = (1 + #{b : |sum(s_b d)| >= |sum(d)|}) / (B + 1), so p >= 1/(B + 1), never 0; when
  2^n <= B all 2^n sign vectors are enumerated instead and p = #{...} / 2^n (exact).
  The B x n sign matrix comes from ``numpy.random.default_rng(seed)`` and depends on
  (n, B, seed) only: it is shared by every pair of a call, and a pair gets the same p
  whether it is computed alone, among all pairs, or one against many. Another seed
  changes p only by Monte-Carlo error, about sqrt(p (1 - p) / B).

Identical runs give every p = 1 and no NaN. A constant nonzero difference has sd = 0:
t and the effect size are +-inf and the t-test p is at the floor. No p-value is ever 0:
one that underflows is reported as the smallest normal double (``P_FLOOR``). With fewer
than 6 needs a ``FewNeedsWarning`` says that the Wilcoxon and randomization tests
cannot reach p < 0.05 (their smallest two-sided p is 2 / 2^n).

Families of pairs (a needs x runs matrix, all pairs, one run against many) and their
corrections are in :mod:`evaluation.significance.families`; every path goes through
:func:`compare_blocks` here, so a pair gets the same numbers on each.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import numpy as np
from scipy import stats

from evaluation.significance.corrections import P_FLOOR

__all__ = [
    "FEW_NEEDS",
    "NOISE_DECIMALS",
    "PAIR_KEYS",
    "P_COLUMNS",
    "TIE_TOLERANCE",
    "FewNeedsWarning",
    "compare_blocks",
    "compare_pair",
    "paired_differences",
    "randomization_enumerates",
    "sign_flips",
]

#: Differences are rounded to this many decimals; |d| <= TIE_TOLERANCE is a zero.
NOISE_DECIMALS = 12
TIE_TOLERANCE = 1e-12
#: Below this many needs no Wilcoxon or randomization test can reach p < 0.05.
FEW_NEEDS = 6

PAIR_KEYS = (
    "n",
    "mean_diff",
    "ci_low",
    "ci_high",
    "effect_size",
    "wins",
    "ties",
    "losses",
    "t_statistic",
    "t_p",
    "wilcoxon_statistic",
    "wilcoxon_p",
    "randomization_p",
)
P_COLUMNS = ("t_p", "wilcoxon_p", "randomization_p")

# Working-set bounds (numbers of float64 elements) for the blocked computation. Every
# reader is in this module, so a test can shrink them here and check the blocks agree.
_SIGN_BLOCK = 1 << 21  # rows of the sign matrix held at once: 16 MB
_DIFF_BLOCK = 1 << 22  # needs x pairs of differences held at once: 32 MB
_FLIP_BLOCK = 1 << 23  # flipped sums (sign rows x pairs) held at once: 64 MB


class FewNeedsWarning(UserWarning):
    """Fewer than 6 paired needs: nonparametric tests cannot reach p < 0.05."""


def paired_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-need differences a - b with float noise removed (see the module docstring).

    Works elementwise on arrays of any shape: rounded to 12 decimals, |d| <= 1e-12 is 0.
    Example: ``paired_differences([0.1 + 0.2], [0.3])`` is ``[0.0]``.
    """
    d = np.round(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64), NOISE_DECIMALS)
    d[np.abs(d) <= TIE_TOLERANCE] = 0.0
    return d


def randomization_enumerates(n: int, permutations: int) -> bool:
    """Whether the randomization test on ``n`` needs with ``permutations`` enumerates all
    2^n sign vectors (an exact p) instead of drawing ``permutations`` at random."""
    return 0 < permutations and n < 63 and (1 << n) <= permutations


def sign_flips(n: int, permutations: int, seed: int = 0) -> Iterator[np.ndarray]:
    """Yield the B x n matrix of random signs (+1.0/-1.0) in blocks of rows.

    The blocks and their contents depend on (n, B, seed) only, so every caller with the
    same three numbers sees the same matrix. When 2^n <= B the caller enumerates instead.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _SIGN_BLOCK // n)
    width = (n + 7) // 8
    for start in range(0, permutations, rows):
        count = min(rows, permutations - start)
        bytes_ = rng.integers(0, 256, size=(count, width), dtype=np.uint8)
        bits = np.unpackbits(bytes_, axis=1, count=n)
        yield 1.0 - 2.0 * bits


def _all_signs(n: int) -> np.ndarray:
    """All 2^n sign vectors, the identity (all +1) first."""
    codes = np.arange(1 << n)[:, None] >> np.arange(n)
    return 1.0 - 2.0 * (codes & 1)


def _randomization_p(
    diff_block: Callable[[slice], np.ndarray], pairs: int, n: int, permutations: int, seed: int
) -> np.ndarray:
    """Randomization p of every pair; ``diff_block(slice)`` gives n x pairs differences."""
    if permutations <= 0:
        return np.full(pairs, np.nan)
    exact = randomization_enumerates(n, permutations)
    rows = (1 << n) if exact else min(permutations, max(1, _SIGN_BLOCK // n))
    step = max(1, min(_DIFF_BLOCK // n, _FLIP_BLOCK // rows))
    counts = np.zeros(pairs, dtype=np.int64)
    for start in range(0, pairs, step):
        cols = slice(start, min(pairs, start + step))
        d = diff_block(cols)
        observed = np.abs(d.sum(axis=0))
        # Flipped sums equal to the observed one in exact arithmetic may differ from it
        # by rounding; a relative tolerance counts them as ties (conservative).
        threshold = observed - 1e-9 * np.abs(d).sum(axis=0)
        blocks = [_all_signs(n)] if exact else sign_flips(n, permutations, seed)
        for signs in blocks:
            flipped = signs @ d
            np.abs(flipped, out=flipped)
            counts[cols] += np.count_nonzero(flipped >= threshold, axis=0)
    if exact:
        return counts / float(1 << n)
    return (1.0 + counts) / (permutations + 1.0)


def _wilcoxon(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilcoxon statistic and p per column of d, each as scipy computes it alone.

    scipy's ``method="auto"`` decides from the whole array it is given (any zero or tie
    anywhere changes the method of every column), so the choice is made here per
    column, and columns are sent to scipy together only with the method named.
    """
    n, pairs = d.shape
    statistic = np.zeros(pairs)
    p = np.ones(pairs)
    nonzero = d != 0
    active = nonzero.any(axis=0)  # all-zero columns: identical runs, p = 1
    exact = np.zeros(pairs, dtype=bool)
    small = np.zeros(pairs, dtype=bool)
    if n <= 50:
        magnitude = np.sort(np.abs(d), axis=0)
        tied = ((magnitude[1:] == magnitude[:-1]) & (magnitude[1:] > 0)).any(axis=0)
        exact = active & nonzero.all(axis=0) & ~tied
        small = active & ~exact & (n <= 13)
    asymptotic = active & ~exact & ~small
    for group, method in ((exact, "exact"), (asymptotic, "asymptotic")):
        if group.any():
            result = stats.wilcoxon(d[:, group], method=method, correction=False, axis=0)
            statistic[group] = result.statistic
            p[group] = result.pvalue
    if small.any():
        statistic[small], p[small] = _wilcoxon_enumerated(d[:, small])
    return statistic, p


def _wilcoxon_enumerated(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scipy's Wilcoxon for n <= 13 with zeros or ties, as one matrix product.

    There scipy runs ``permutation_test`` over all 2^n sign flips of the rank sum R+
    (about 0.5 s per pair at n = 13). Flipping signs leaves |d| and its average ranks
    r unchanged, so the null distribution is {u . r : u in {0,1}^n} (zeros get r = 0),
    and p = min(1, 2 min(P(null <= R+), P(null >= R+))) with scipy's tolerance 100 eps R+.
    """
    n = d.shape[0]
    magnitude = np.where(d == 0, np.nan, np.abs(d))
    ranks = np.nan_to_num(stats.rankdata(magnitude, axis=0, nan_policy="omit"))
    r_plus = (ranks * (d > 0)).sum(axis=0)
    r_minus = (ranks * (d < 0)).sum(axis=0)
    gamma = np.abs(100 * np.finfo(np.float64).eps * r_plus)
    subsets = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    p = np.empty(d.shape[1])
    step = max(1, _FLIP_BLOCK >> n)
    for start in range(0, d.shape[1], step):
        cols = slice(start, start + step)
        null = subsets @ ranks[:, cols]
        less = np.count_nonzero(null <= r_plus[cols] + gamma[cols], axis=0)
        greater = np.count_nonzero(null >= r_plus[cols] - gamma[cols], axis=0)
        p[cols] = np.minimum(1.0, 2.0 * np.minimum(less, greater) / (1 << n))
    return np.minimum(r_plus, r_minus), p


def _t_block(d: np.ndarray) -> dict[str, np.ndarray]:
    """Mean, interval, effect size, wins/ties/losses and t-test per column of d."""
    n = d.shape[0]
    wins = np.count_nonzero(d > 0, axis=0)
    losses = np.count_nonzero(d < 0, axis=0)
    identical = wins + losses == 0
    constant = d.max(axis=0) == d.min(axis=0)
    mean = np.where(constant, d[0], d.mean(axis=0))  # exact for a constant offset
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.where(constant, 0.0, d.std(axis=0, ddof=1)) if n > 1 else np.full_like(mean, np.nan)
        se = sd / np.sqrt(n)
        t = np.where(identical, 0.0, mean / se)
        effect = np.where(identical, 0.0, mean / sd)
        t_p = np.where(identical, 1.0, 2.0 * stats.t.sf(np.abs(t), n - 1))
        half = np.where(identical, 0.0, stats.t.ppf(0.975, n - 1) * se)
    return {
        "n": np.full(d.shape[1], n),
        "mean_diff": mean,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "effect_size": effect,
        "wins": wins,
        "ties": n - wins - losses,
        "losses": losses,
        "t_statistic": t,
        "t_p": t_p,
    }


def _paired_block(d: np.ndarray) -> dict[str, np.ndarray]:
    """Everything but the randomization p for each column of d (n needs x pairs)."""
    w_statistic, w_p = _wilcoxon(d)
    return {**_t_block(d), "wilcoxon_statistic": w_statistic, "wilcoxon_p": w_p}


def compare_blocks(
    diff_block: Callable[[slice], np.ndarray], pairs: int, n: int, permutations: int, seed: int
) -> dict[str, np.ndarray]:
    """All statistics for ``pairs`` pairs whose differences ``diff_block`` produces.

    ``diff_block(cols)`` returns the n x len(cols) noise-free differences
    (:func:`paired_differences`) of the pairs in the slice ``cols``; they are asked
    for in blocks so no more than a few tens of MB are held at once. Returns the keys
    of ``PAIR_KEYS``, one array each, in pair order. Warns (``FewNeedsWarning``, on
    the caller's caller) below ``FEW_NEEDS`` needs.
    """
    if n < 1:
        raise ValueError("no needs to pair")
    if n < FEW_NEEDS:
        warnings.warn(
            f"only {n} paired needs: the Wilcoxon and randomization tests cannot reach "
            f"p < 0.05 (smallest two-sided p = 2/2^{n}) and the t-test's normality "
            "cannot be checked",
            FewNeedsWarning,
            stacklevel=3,
        )
    step = max(1, _DIFF_BLOCK // n)
    if pairs == 0:
        return {key: np.empty(0) for key in PAIR_KEYS}
    parts = [
        _paired_block(diff_block(slice(start, min(pairs, start + step))))
        for start in range(0, pairs, step)
    ]
    out = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    out["randomization_p"] = _randomization_p(diff_block, pairs, n, permutations, seed)
    for key in P_COLUMNS:
        # Underflow (t = inf, huge z) must not read as p = 0; NaN (one need) stays.
        out[key] = np.where(np.isnan(out[key]), np.nan, np.clip(out[key], P_FLOOR, 1.0))
    return out


def compare_pair(
    a: np.ndarray, b: np.ndarray, *, permutations: int = 10_000, seed: int = 0
) -> dict:
    """Compare two runs paired need by need (a[i] and b[i] are the same need).

    Returns a dict with exactly the keys of ``PAIR_KEYS``; see the module docstring
    for each. Differences are a - b, so ``wins`` counts needs where a scores higher.
    ``permutations=0`` skips the randomization test (its p is NaN).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("a and b must be 1-d arrays over the same needs")
    d = paired_differences(a, b)[:, None]
    out = compare_blocks(lambda cols: d[:, cols], 1, a.size, permutations, seed)
    return {
        key: (int if key in ("n", "wins", "ties", "losses") else float)(out[key][0])
        for key in PAIR_KEYS
    }
