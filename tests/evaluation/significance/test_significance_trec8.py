"""Real per-topic scores: TREC-8 ad hoc (129 runs) and TREC 2013 Web (34 runs).

The counts of significant pairs are those of ``tests/fixtures/trec8-per-topic/README.md``
(all pairs, two-sided, alpha = 0.05, scipy 1.17). The randomization test is off here
(``permutations=0``) so the 8,256-pair families stay fast; it is checked elsewhere.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation.significance import adjust_p, compare_all_pairs
from evaluation.significance import paired as significance
from tests import FIXTURES as ALL_FIXTURES

FIXTURES = ALL_FIXTURES / "trec8-per-topic"

# matrix: (pairs, paired t, t + Holm, t + BH, Wilcoxon), from the fixture README
README = {
    "adhoc8_ap": (8256, 5981, 3084, 5801, 6055),
    "adhoc8_p10": (8256, 5317, 2882, 5098, 5313),
    "adhoc8_rr": (8256, 4585, 1763, 4168, 4578),
    "web2013_ndcg20": (561, 220, 57, 162, 228),
}
# Ours, with the per-need differences rounded to 12 decimals before ranking |d|: P@10
# and RR take few distinct values, and a difference such as 0.3 - 0.2 differs from
# 0.4 - 0.3 by float noise; unrounded, scipy ranks such "ties" as distinct (the
# README's recipe, reproduced below), which moves 134 P@10 pairs across 0.05.
WILCOXON_ROUNDED = {"adhoc8_ap": 6055, "adhoc8_p10": 5351, "adhoc8_rr": 4581, "web2013_ndcg20": 228}


def load(name: str) -> pd.DataFrame:
    return pd.read_csv(FIXTURES / f"{name}.csv")


@pytest.fixture(scope="module", params=sorted(README))
def family(request: pytest.FixtureRequest) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    scores = load(request.param)
    return request.param, scores, compare_all_pairs(scores, permutations=0)


def test_readme_counts(family: tuple[str, pd.DataFrame, pd.DataFrame]) -> None:
    name, scores, pairs = family
    count, t, holm, bh, _ = README[name]
    assert scores.shape == (50, 129 if name.startswith("adhoc8") else 34)
    assert len(pairs) == count
    assert (pairs["t_p"] < 0.05).sum() == t
    assert (pairs["t_p_adjusted"] < 0.05).sum() == holm  # Holm is the default
    assert (adjust_p(pairs["t_p"], "bh") < 0.05).sum() == bh
    bh_family = compare_all_pairs(scores, permutations=0, correction="bh")
    assert (bh_family["t_p_adjusted"] < 0.05).sum() == bh
    assert (pairs["wilcoxon_p"] < 0.05).sum() == WILCOXON_ROUNDED[name]
    tested = ["t_p", "t_p_adjusted", "wilcoxon_p", "wilcoxon_p_adjusted"]
    assert pairs[tested].notna().all().all() and (pairs[tested] > 0).all().all()


def test_readme_wilcoxon_counts_are_scipy_on_unrounded_differences(
    family: tuple[str, pd.DataFrame, pd.DataFrame],
) -> None:
    name, scores, _ = family
    x = scores.to_numpy()
    a, b = np.triu_indices(x.shape[1], 1)
    raw = x[:, a] - x[:, b]  # float noise kept, as the README's recipe did
    _, p = significance._wilcoxon(raw)
    assert (p < 0.05).sum() == README[name][4]


def test_each_pair_equals_scipy_on_real_data() -> None:
    """Every Web 2013 pair and 400 P@10 pairs (many ties): scipy called pair by pair."""
    rng = np.random.default_rng(0)
    for name, limit in (("web2013_ndcg20", None), ("adhoc8_p10", 400)):
        scores = load(name)
        pairs = compare_all_pairs(scores, permutations=0)
        rows = pairs if limit is None else pairs.iloc[rng.choice(len(pairs), limit, replace=False)]
        for row in rows.itertuples():
            d = significance.paired_differences(scores[row.a].to_numpy(), scores[row.b].to_numpy())
            if not d.any():
                assert row.t_p == row.wilcoxon_p == 1.0
                continue
            t = stats.ttest_1samp(d, 0.0)
            w = stats.wilcoxon(d, correction=False)
            assert row.t_statistic == pytest.approx(t.statistic, rel=1e-9, abs=1e-9)
            assert row.t_p == pytest.approx(t.pvalue, rel=1e-9, abs=1e-12)
            assert row.wilcoxon_statistic == w.statistic
            assert row.wilcoxon_p == pytest.approx(w.pvalue, rel=1e-9, abs=1e-12)


def test_randomization_cannot_survive_holm_over_all_pairs() -> None:
    """The README's warning, on a 10-run slice at B = 10,000 versus 8,256 pairs."""
    scores = load("adhoc8_ap").iloc[:, :10]
    pairs = compare_all_pairs(scores, permutations=10_000)
    assert pairs["randomization_p"].min() == 1 / 10_001
    assert (
        adjust_p(pairs["randomization_p"].tolist() + [1.0] * (8256 - 45)) >= 8256 / 10_001
    ).all()
