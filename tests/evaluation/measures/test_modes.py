"""``interpolation=``: the seed's exact rule, trec_eval 9.0.8's and 10.0's, through the API.

The fixtures' outputs, line for line, are in test_fixtures.py; here the rules
themselves, on hand-picked R and levels, and what each mode does besides.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from evaluation.measures import (
    MODES,
    NeedWithoutRun,
    evaluate,
    interpolated_curve,
    relevant_ranks,
)
from evaluation.measures.interpolation import recall_cutoff

# (level, R) -> n for exact, trec_eval-9, trec_eval-10
CUTOFFS = {
    ("0.7", 3): (3, 2, 2),  # 2.0999...: 9.0.8 slips (2.0999 + 0.9 < 3), 10.0 rounds down
    ("0.7", 23): (17, 16, 16),
    ("0.3", 77): (24, 23, 23),  # trec_eval's own qrels.test, need 302
    ("0.3", 67): (21, 20, 20),
    ("0.1", 474): (48, 48, 47),  # 10.0 reports recall 47/474 = 0.0992 as 0.1
    ("0.5", 3): (2, 2, 2),  # 1.5: 10.0 rounds halves away from zero
    ("0.5", 5): (3, 3, 3),
    ("0.1", 15): (2, 2, 2),  # 1.5000000000000002
    ("0.1", 25): (3, 3, 3),  # 2.5: lround 3
    ("0.25", 2): (1, 1, 1),  # 0.5: lround 1
    ("0.2", 2): (1, 1, 0),  # 0.4: 10.0 asks for 0 relevant documents (the top precision)
    ("0.0", 40): (0, 0, 0),
    ("1.0", 40): (40, 40, 40),
    (".75", 10): (8, 8, 8),  # 7.5
}


@pytest.mark.parametrize(("level", "R"), CUTOFFS)
def test_recall_cutoffs(level, R):
    got = tuple(int(recall_cutoff(level, np.array([R]), mode)[0]) for mode in MODES)
    assert got == CUTOFFS[(level, R)]


def test_recall_cutoffs_against_c_arithmetic_written_out():
    """The three rules over many R, against their definitions written with Python's
    floats (C doubles) and fractions, one value at a time."""
    R = np.arange(0, 2001)
    for level in ("0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", ".25", ".33"):
        exact = [math.ceil(Fraction(level) * r) for r in R]
        v9 = [int(float(level) * float(r) + 0.9) for r in R]
        # lround: the C double product rounded to nearest, halves up (all >= 0 here)
        v10 = [math.floor(Fraction(float(level) * float(r)) + Fraction(1, 2)) for r in R]
        assert recall_cutoff(level, R, "exact").tolist() == exact
        assert recall_cutoff(level, R, "trec_eval-9").tolist() == v9
        assert recall_cutoff(level, R, "trec_eval-10").tolist() == v10


def frames(qrels, run):
    q = pd.DataFrame(qrels, columns=["need_id", "doc_id", "relevance"])
    r = pd.DataFrame(run, columns=["need_id", "doc_id", "score"])
    return q, r


def test_interpolation_rule_by_mode():
    # R = 3, relevant at ranks 1, 2, 9: at 0.7 exact needs all three (3/9);
    # 9.0.8 and 10.0 count two (n = 2 for 2.0999...) and report 2/2
    q, r = frames(
        [("1", d, 1) for d in "abc"],
        [("1", "a", 9.0), ("1", "b", 8.0)] + [("1", f"n{i}", 7.0 - i) for i in range(6)]
        + [("1", "c", 0.0)],
    )  # fmt: skip
    got = {
        m: evaluate(q, r, ["iprec_at_recall.0.7"], interpolation=m).summary["iprec_at_recall_0.70"]
        for m in MODES
    }
    assert got == {"exact": 3 / 9, "trec_eval-9": 1.0, "trec_eval-10": 1.0}
    curve, mean = interpolated_curve(q, r, interpolation="trec_eval-9")
    assert curve.loc["1", 0.7] == 1.0 and mean[0.7] == 1.0


def test_trec_eval_9_reads_scores_as_floats():
    # 0.30000000000000004 > 0.3 as doubles; equal as floats, so doc ids decide (b > a)
    q, r = frames([("1", "a", 1)], [("1", "a", 0.30000000000000004), ("1", "b", 0.3)])
    assert evaluate(q, r, ["recip_rank"]).summary["recip_rank"] == 1.0
    assert evaluate(q, r, ["recip_rank"], interpolation="trec_eval-9").summary["recip_rank"] == 0.5
    assert evaluate(q, r, ["recip_rank"], interpolation="trec_eval-10").summary["recip_rank"] == 1.0
    assert relevant_ranks(q, r, interpolation="trec_eval-9")["rank"].tolist() == [2]
    # beyond float's range: infinities, as C converts them (and no warning)
    q, r = frames([("1", "a", 1)], [("1", "a", 1e300), ("1", "b", 1e301)])
    assert evaluate(q, r, ["recip_rank"], interpolation="trec_eval-9").summary["recip_rank"] == 0.5


def test_trec_eval_9_sets_and_complete():
    q, r = frames(
        [("1", "a", 1), ("1", "b", 0), ("2", "c", 1), ("3", "d", 1)],
        [("1", "a", 1.0), ("1", "b", 0.5), ("3", "x", 1.0)],
    )
    v9 = evaluate(q, r, ["all_trec"], complete=True, interpolation="trec_eval-9")
    v10 = evaluate(q, r, ["all_trec"], complete=True, interpolation="trec_eval-10")
    assert not any(c.startswith(("rbp", "unj")) for c in v9.per_need.columns)
    assert {"rbp", "rbp_resid", "unj_10"} <= set(v10.per_need.columns)
    # asked for by name, 10.0's measures are computed in the 9.0.8 mode too
    assert "unj_10" in evaluate(q, r, ["unj.10"], interpolation="trec_eval-9").per_need
    # need 2 has no run lines: scored (zeros) and averaged in, but 9.0.8 prints no line for it
    assert list(v9.per_need.index) == ["1", "2", "3"] and v9.unprinted == {"2"}
    assert "\t2\t" not in v9.to_trec_eval(per_need=True)
    assert "\t2\t" in v10.to_trec_eval(per_need=True)
    # 9.0.8 adds the missing need's log(0.00001) after the others; the same value here
    assert v9.summary["gm_map"] == math.exp((math.log(1.0) + math.log(1e-5) + math.log(1e-5)) / 3)
    assert v9.summary["map"] == v10.summary["map"] == 1 / 3


def test_trec_eval_10_aborts_without_complete():
    q, r = frames(
        [("1", "a", 1), ("2", "b", 1), ("3", "c", 1)],
        [("1", "a", 1.0), ("3", "c", 1.0)],
    )
    with pytest.raises(NeedWithoutRun) as caught:
        evaluate(q, r, ["map"], interpolation="trec_eval-10")
    assert caught.value.need_id == "2"
    assert str(caught.value) == "result qid '2' not found in qrels"
    assert list(caught.value.partial.per_need.index) == ["1"]  # printed before stopping
    assert caught.value.partial.to_trec_eval(per_need=True, summary=False) == (
        "map                   \t1\t1.0000\n"
    )
    # the other modes skip the need; with complete, 10.0 scores it
    assert evaluate(q, r, ["map"]).summary["map"] == 1.0
    assert evaluate(q, r, ["map"], interpolation="trec_eval-10", complete=True).summary[
        "map"
    ] == pytest.approx(2 / 3)
    # nothing before the missing need: no partial output
    q, r = frames([("0", "z", 1), ("1", "a", 1)], [("1", "a", 1.0)])
    with pytest.raises(NeedWithoutRun) as caught:
        evaluate(q, r, ["map"], interpolation="trec_eval-10")
    assert caught.value.need_id == "0" and caught.value.partial is None


def test_unknown_mode():
    q, r = frames([("1", "a", 1)], [("1", "a", 1.0)])
    with pytest.raises(ValueError, match="interpolation must be one of exact, trec_eval-9"):
        evaluate(q, r, interpolation="trec_eval-8")


def test_gm_summaries_use_the_c_librarys_log_and_exp():
    """gm_map and gm_bpref bit for bit as trec_eval adds them: glibc's log per need,
    summed in need order, glibc's exp. numpy's own vectorised log and exp (AVX-512)
    differ from glibc's in the last bit for some values; these are such values:
    AP = (1/1 + 2/17 + 3/24) / 3 and, over 17 needs, exp(log(AP) / 17)."""
    rows_q = [("a", d, 1) for d in ("d1", "d17", "d24")]
    rows_r = [("a", f"d{rank}", 100.0 - rank) for rank in range(1, 25)]
    for need in range(16):  # AP = 1: log 0
        rows_q.append((f"n{need:02d}", "x", 1))
        rows_r.append((f"n{need:02d}", "x", 1.0))
    q, r = frames(rows_q, rows_r)
    result = evaluate(q, r, ["map", "gm_map", "bpref", "gm_bpref"])
    assert result.per_need.loc["a", "map"] == (1 / 1 + 2 / 17 + 3 / 24) / 3
    for name, base in (("gm_map", "map"), ("gm_bpref", "bpref")):
        total = 0.0
        for value in result.per_need[base]:
            total += math.log(max(value, 0.00001))
        assert result.summary[name] == math.exp(total / 17), name
