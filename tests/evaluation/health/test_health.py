"""Benchmark health: power, MDD, topic set size, discriminative power, tau, tau_AP.

On the TREC-8 ad hoc per-topic matrices (``tests/fixtures/trec8-per-topic``): the MDD
and power against scipy's noncentral t called directly, the topic set size as the
smallest n meeting the power, and discriminative power equal to the fixture README's
counts / 8,256 pairs. Pool bias is in ``test_health_pools.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation.health import (
    asl_curve,
    benchmark_health,
    discriminative_power,
    kendall_tau,
    minimum_detectable_difference,
    pair_p_values,
    pairwise_t_p,
    residual_variance,
    t_test_power,
    tau_ap,
    topic_set_size,
)
from evaluation.significance import compare_all_pairs
from tests import FIXTURES as ALL_FIXTURES

FIXTURES = ALL_FIXTURES / "trec8-per-topic"
PAIRS = 8256
# matrix: (paired t, t + Holm, t + BH, Wilcoxon with differences rounded), the README's
README = {
    "adhoc8_ap": (5981, 3084, 5801, 6055),
    "adhoc8_p10": (5317, 2882, 5098, 5351),
    "adhoc8_rr": (4585, 1763, 4168, 4581),
}


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(FIXTURES / f"{name}.csv")


def direct_power(delta: float, n: int, sigma_d: float, alpha: float = 0.05) -> float:
    """The definition, written out: both tails of the noncentral t beyond +-t_crit."""
    df = n - 1
    crit = stats.t.ppf(1 - alpha / 2, df)
    nc = math.sqrt(n) * delta / sigma_d
    dist = stats.nct(df, nc)
    return float(1 - dist.cdf(crit) + dist.cdf(-crit))


def slow_residual_variance(x: np.ndarray) -> float:
    n, m = x.shape
    grand = x.mean()
    ss = 0.0
    for i in range(n):
        for j in range(m):
            ss += (x[i, j] - x[i].mean() - x[:, j].mean() + grand) ** 2
    return ss / ((n - 1) * (m - 1))


def test_residual_variance_toy_and_against_the_definition() -> None:
    assert residual_variance([[1, 2], [3, 5]]) == pytest.approx(0.25)
    x = load("adhoc8_ap").iloc[:, :12].to_numpy()
    assert residual_variance(x) == pytest.approx(slow_residual_variance(x), rel=1e-12)
    assert math.isnan(residual_variance([[1.0, 2.0]]))


@pytest.mark.parametrize("name", sorted(README))
def test_mdd_and_power_against_scipy_nct(name: str) -> None:
    scores = load(name)
    n = scores.shape[0]
    sigma_d = math.sqrt(2 * residual_variance(scores))
    mdd = minimum_detectable_difference(n, sigma_d)
    assert direct_power(mdd, n, sigma_d) == pytest.approx(0.8, abs=1e-9)
    assert direct_power(mdd * 0.99, n, sigma_d) < 0.8 < direct_power(mdd * 1.01, n, sigma_d)
    for delta in (0.01, 0.05, 0.1):
        assert t_test_power(delta, n, sigma_d) == pytest.approx(direct_power(delta, n, sigma_d))
    # a stricter test or more power needs a larger difference
    assert minimum_detectable_difference(n, sigma_d, alpha=0.01) > mdd
    assert minimum_detectable_difference(n, sigma_d, power=0.9) > mdd


def test_mdd_known_value_and_edges() -> None:
    # few needs: scipy's nct gives NaN far in the lower tail (df = 3, lambda = 40)
    assert t_test_power(2.0, 4, 0.1) == 1.0
    assert direct_power(minimum_detectable_difference(4, 0.1), 4, 0.1) == pytest.approx(0.8)
    assert minimum_detectable_difference(50, 0.1) == pytest.approx(0.040418, abs=1e-6)
    assert math.isnan(minimum_detectable_difference(1, 0.1))
    assert minimum_detectable_difference(50, 0.0) == 0.0
    with pytest.raises(ValueError, match="power"):
        minimum_detectable_difference(50, 0.1, power=1.0)


@pytest.mark.parametrize("name", sorted(README))
def test_topic_set_size_is_the_smallest_n_meeting_the_power(name: str) -> None:
    sigma_d = math.sqrt(2 * residual_variance(load(name)))
    for delta in (0.02, 0.05, 0.1):
        n = topic_set_size(delta, sigma_d)
        assert direct_power(delta, n, sigma_d) >= 0.8
        assert n == 2 or direct_power(delta, n - 1, sigma_d) < 0.8
    # with the MDD of 50 needs, 50 needs are (just) enough
    assert topic_set_size(minimum_detectable_difference(50, sigma_d) + 1e-9, sigma_d) == 50
    assert topic_set_size(0.0, sigma_d) is None


def test_topic_set_size_small_exhaustive() -> None:
    """Every n from 2 up, for a difference needing few needs."""
    sigma_d = 0.2
    n = topic_set_size(0.3, sigma_d)
    powers = [direct_power(0.3, k, sigma_d) for k in range(2, 40)]
    assert n == 2 + next(i for i, p in enumerate(powers) if p >= 0.8)


@pytest.fixture(scope="module", params=sorted(README))
def family(request: pytest.FixtureRequest) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    scores = load(request.param)
    return request.param, scores, compare_all_pairs(scores, permutations=0)


def test_discriminative_power_equals_the_readme_counts(family) -> None:
    name, scores, pairs = family
    t, holm, bh, wilcoxon = README[name]
    for p in (pairs["t_p"].to_numpy(), pair_p_values(scores, "t")):
        assert discriminative_power(p)["share"] == t / PAIRS
        assert discriminative_power(p, correction="holm")["share"] == holm / PAIRS
        assert discriminative_power(p, correction="bh")["share"] == bh / PAIRS
        assert discriminative_power(p, correction="bh")["significant"] == bh
    w = pair_p_values(scores, "wilcoxon")
    assert discriminative_power(w)["share"] == wilcoxon / PAIRS
    assert discriminative_power(w)["pairs"] == PAIRS
    w_holm = discriminative_power(w, correction="holm")["significant"]
    w_bh = discriminative_power(w, correction="bh")["significant"]
    assert w_holm < w_bh < wilcoxon


def test_gram_matrix_t_equals_the_significance_package(family) -> None:
    _, scores, pairs = family
    assert pairwise_t_p(scores) == pytest.approx(pairs["t_p"].to_numpy(), rel=1e-8)


def test_gram_matrix_t_on_identical_and_offset_runs() -> None:
    """Near-identical runs are where var(a) + var(b) - 2 cov(a, b) cancels."""
    rng = np.random.default_rng(1)
    base = rng.random(30)
    scores = pd.DataFrame(
        {"a": base, "b": base, "c": base + 0.1, "d": base + rng.normal(0, 1e-7, 30)}
    )
    expected = compare_all_pairs(scores, permutations=0)["t_p"].to_numpy()
    got = pairwise_t_p(scores)
    assert got[0] == 1.0  # a = b
    assert got == pytest.approx(expected, rel=1e-6)


def test_discriminative_power_toy_and_bad_input() -> None:
    assert discriminative_power([0.01, 0.04, 0.03])["significant"] == 3
    assert discriminative_power([0.01, 0.04, 0.03], correction="holm")["significant"] == 1
    assert discriminative_power([0.01, np.nan])["pairs"] == 1
    assert math.isnan(discriminative_power([])["share"])
    with pytest.raises(ValueError, match="correction"):
        discriminative_power([0.1], correction="bonferroni")
    with pytest.raises(ValueError, match="test"):
        pair_p_values(load("adhoc8_ap").iloc[:, :3], "sign")


def test_asl_curve_sorted_and_thinned() -> None:
    curve = asl_curve([0.5, 0.01, np.nan, 0.2])
    assert curve.tolist() == [[1, 0.01], [2, 0.2], [3, 0.5]]
    p = pairwise_t_p(load("adhoc8_ap"))
    thin = asl_curve(p, "holm", points=50)
    assert len(thin) == 50 and thin[0, 0] == 1 and thin[-1, 0] == PAIRS
    assert (np.diff(thin[:, 1]) >= 0).all()
    assert (thin[:, 1] < 0.05).sum() > 0


def slow_tau_ap(reference: list[float], estimate: list[float]) -> float:
    """Yilmaz, Aslam and Robertson's definition, item by item (no ties in the tests)."""
    order = sorted(range(len(estimate)), key=lambda i: -estimate[i])
    n = len(order)
    total = 0.0
    for i in range(1, n):
        run = order[i]
        correct = sum(1 for j in order[:i] if reference[j] > reference[run])
        total += correct / i
    return 2.0 / (n - 1) * total - 1.0


def test_tau_ap_ties_count_as_agreeing_in_any_run_order() -> None:
    # Two runs tied on one ranking: the result must not depend on which was listed first.
    assert tau_ap([1, 1], [1, 2]) == tau_ap([1, 1], [2, 1]) == 1.0
    assert tau_ap([2, 1], [1, 1]) == tau_ap([1, 2], [1, 1]) == 1.0
    rng = np.random.default_rng(5)
    for _ in range(50):
        x = rng.integers(0, 4, 9).astype(float)  # P@10-like means: many ties
        y = x + rng.integers(-1, 2, 9)
        order = rng.permutation(9)
        assert tau_ap(x[order], y[order]) == tau_ap(x, y)
        # a tie is what breaking it in the other ranking's favour gives (alike if tied in both)
        alike = 1e-12 * np.arange(9)
        xs, ys = x + 1e-9 * y - alike, y + 1e-9 * x - alike
        assert tau_ap(x, y) == pytest.approx(slow_tau_ap(list(xs), list(ys)), abs=1e-12)
    assert tau_ap([1, 1, 2], [1, 1, 2]) == 1.0  # a ranking against itself, ties and all


def test_tau_and_tau_ap() -> None:
    assert kendall_tau([3, 2, 1], [3, 1, 2]) == pytest.approx(1 / 3)
    assert tau_ap([3, 2, 1], [3, 1, 2]) == pytest.approx(0.5)
    assert tau_ap([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert tau_ap([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # a swap at the top costs tau_AP more than one at the bottom; tau sees them alike
    top, bottom = [4, 3, 2, 1], [3, 4, 2, 1]
    assert kendall_tau(top, bottom) == kendall_tau(top, [4, 3, 1, 2])
    assert tau_ap(top, bottom) < tau_ap(top, [4, 3, 1, 2])
    means = {name: load(name).mean(axis=0).to_numpy() for name in README}
    for a, b in itertools.permutations(README, 2):
        x, y = means[a], means[b]
        assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
        # the fixture's means have ties; the slow reference wants none: break them alike
        xs, ys = (np.argsort(np.argsort(v + np.arange(v.size) * 1e-12)) for v in (x, y))
        assert tau_ap(xs, ys) == pytest.approx(slow_tau_ap(list(xs), list(ys)), abs=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(20):
        x, y = rng.random(25), rng.random(25)
        assert tau_ap(x, y) == pytest.approx(slow_tau_ap(list(x), list(y)), abs=1e-12)
        assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    with pytest.raises(ValueError, match="same runs"):
        tau_ap([1, 2], [1, 2, 3])


def test_benchmark_health_summary() -> None:
    matrices = {m: load(f"adhoc8_{m}") for m in ("ap", "p10", "rr")}
    health = benchmark_health(matrices, correction="bh")
    assert (health["needs"], health["runs"], health["primary"]) == (50, 129, "ap")
    ap = health["measures"]["ap"]
    assert ap["discriminative_power"]["significant"] == 5801
    assert ap["tau"] == ap["tau_ap"] == 1.0
    sigma = math.sqrt(2 * residual_variance(matrices["ap"]))
    assert ap["mdd"] == pytest.approx(minimum_detectable_difference(50, sigma))
    assert ap["topic_set_size"]["0.05"] == topic_set_size(0.05, sigma)
    p10 = health["measures"]["p10"]
    assert p10["tau"] == pytest.approx(kendall_tau(matrices["ap"].mean(), matrices["p10"].mean()))
    assert len(ap["asl"]) == 200 and ap["asl"][-1][0] == PAIRS
    given = benchmark_health(matrices, p_values={"ap": np.full(PAIRS, 0.5)})
    assert given["measures"]["ap"]["discriminative_power"]["significant"] == 0
