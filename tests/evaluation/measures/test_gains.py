"""Gain parameters and relevance grades as trec_eval 10.0 takes them (gain_init.c).

Every expected value is trec_eval 10.0's printed output, from the command in the
comment above it (files as written by the test), taken from /tmp/te/trec_eval.
"""

from __future__ import annotations

import pytest

from evaluation.__main__ import main
from evaluation.trec import read_qrels

# one relevant document (d1), one judged non-relevant (d2), one judged negative (d3,
# "unjudged": -2 in trec_eval's ranking); the run puts d3 first and d9, outside the
# qrels (-1, non-pool), last
NEGATIVE_QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 -2\n"
NEGATIVE_RUN = "1 Q0 d3 1 3 t\n1 Q0 d1 2 2 t\n1 Q0 d9 3 1 t\n"
# two relevant documents, one non-relevant, all retrieved in that order
TWICE_QRELS = "1 0 d1 1\n1 0 d2 1\n1 0 d3 0\n"
TWICE_RUN = "1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n1 Q0 d3 3 1 t\n"


def scored(tmp_path, capsys, qrels: str, run: str, *flags: str) -> dict[str, str]:
    """The printed ``all`` value of each measure, as text."""
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    assert main([*flags, str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    return {name.strip(): value.strip() for name, need, value in lines if need == "all"}


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        # /tmp/te/trec_eval -m ndcg.-2=1 q r (and so on for each row)
        ("ndcg.-2=1", "1.6309"),
        ("ndcg.-1=1", "1.1309"),
        ("ndcg.-2=-1", "-0.3691"),
        ("dcg.-1=1", "1.1309"),
        ("ideal_dcg.-2=3", "1.0000"),  # a negative level holds no count: the ideal is d1's
        ("G.-1=1", "1.2619"),
        ("ndcg_rel.-2=1", "1.0000"),
        ("Rndcg.-1=1", "0.5655"),
        ("rbp.-1=1", "0.1710"),
        ("rbp.-2=2,1=0.5", "0.1225"),  # -2's gain scaled into [0, 1] with the others
    ],
)
def test_a_parameter_names_the_gain_of_non_pool_and_unjudged_documents(
    tmp_path, capsys, measure, expected
):
    values = scored(tmp_path, capsys, NEGATIVE_QRELS, NEGATIVE_RUN, "-m", measure)
    assert list(values.values()) == [expected]


def test_a_need_whose_only_positive_gains_are_outside_the_qrels(tmp_path, capsys):
    # /tmp/te/trec_eval -m ndcg_rel.1=2.5,-1=1 -m ndcg.-1=1 -m Rndcg.-1=1 -m G.-1=1 q r
    # (ndcg_rel divides by an ideal DCG of 0: nan, printed as 0)
    flags = ["-m", "ndcg_rel.1=2.5,-1=1", "-m", "ndcg.-1=1", "-m", "Rndcg.-1=1", "-m", "G.-1=1"]
    qrels, run = "1 0 d1 0\n1 0 d2 0\n", "1 Q0 d9 1 3 t\n1 Q0 d1 2 2 t\n"
    assert set(scored(tmp_path, capsys, qrels, run, *flags).values()) == {"0.0000"}


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        # /tmp/te/trec_eval -m ndcg.1=3,1=5 q r: the run's gain is the first entry of the
        # sorted gains array (3), the count is the first parameter's (3): 1.0
        ("ndcg.1=3,1=5", "1.0000"),
        ("G.1=3,1=5", "1.0000"),
        # /tmp/te/trec_eval -m ndcg.1=5,1=3 q r: run gain 3, ideal gain 5
        ("ndcg.1=5,1=3", "0.6000"),
    ],
)
def test_a_level_named_twice(tmp_path, capsys, measure, expected):
    values = scored(tmp_path, capsys, TWICE_QRELS, TWICE_RUN, "-m", measure)
    assert list(values.values()) == [expected]


def test_a_gain_for_a_level_no_document_has(tmp_path, capsys):
    # /tmp/te/trec_eval -m ndcg.300000000=1 q r; /tmp/te/trec_eval -m rbp.300000000=0.5 q r
    values = scored(tmp_path, capsys, TWICE_QRELS, TWICE_RUN, "-m", "ndcg.300000000=1")
    assert values == {"ndcg_300000000=1": "1.0000"}
    values = scored(tmp_path, capsys, TWICE_QRELS, TWICE_RUN, "-m", "rbp.300000000=0.5")
    assert values == {"rbp_300000000=0.5": "0.1900"}
    # /tmp/te/trec_eval -m ndcg.99999999999999999999=1 q r: atol holds it at LONG_MAX
    values = scored(tmp_path, capsys, TWICE_QRELS, TWICE_RUN, "-m", "ndcg.99999999999999999999=1")
    assert values == {"ndcg_99999999999999999999=1": "1.0000"}


LARGE_RUN = "1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n2 Q0 d1 1 1 t\n"


@pytest.mark.parametrize("grade", ["10000000", "99999999999", "9223372036854775807"])
def test_a_very_large_grade_is_one_more_grade(tmp_path, capsys, grade):
    # /tmp/te/trec_eval -m map -m P.2 q r with d2's grade 10000000; trec_eval cannot
    # allocate its per-grade counts for the two larger ones ("Can't calculate measure")
    qrels = f"1 0 d1 1\n1 0 d2 {grade}\n2 0 d1 1\n"
    values = scored(tmp_path, capsys, qrels, LARGE_RUN, "-m", "map", "-m", "P.2", "-m", "bpref")
    assert values == {"map": "1.0000", "P_2": "0.7500", "bpref": "1.0000"}
    every = scored(tmp_path, capsys, qrels, LARGE_RUN, "-m", "all_trec", "-m", "ndcg.7=2")
    assert every["num_rel"] == "3"
    assert read_qrels(tmp_path / "q")["relevance"].max() == int(grade)
