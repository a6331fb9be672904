"""The measure catalog: both name systems, labels, close matches, the stored columns, -m."""

from __future__ import annotations

import pytest

from evaluation.__main__ import main
from evaluation.measures import (
    ALL_TREC,
    UnknownMeasure,
    close_matches,
    evaluate,
    resolve,
    stored_measures,
    stored_requests,
)
from evaluation.measures.catalog import measure_named
from evaluation.trec import read_qrels, read_run
from tests import FIXTURES

SUITE = FIXTURES / "trec_eval-suite"

# name written -> (stored column, -m request, reader's label)
NAMES = {
    "nDCG@10": ("ndcg_cut_10", "ndcg_cut.10", "nDCG@10"),
    "ndcg_cut_10": ("ndcg_cut_10", "ndcg_cut.10", "nDCG@10"),
    "ndcg_cut.10": ("ndcg_cut_10", "ndcg_cut.10", "nDCG@10"),
    "NDCG@10": ("ndcg_cut_10", "ndcg_cut.10", "nDCG@10"),
    "ndcg@10": ("ndcg_cut_10", "ndcg_cut.10", "nDCG@10"),  # as people type it
    "nDCG": ("ndcg", "ndcg", "nDCG"),
    "RR": ("recip_rank", "recip_rank", "RR"),
    "recip_rank": ("recip_rank", "recip_rank", "RR"),
    "MRR": ("recip_rank", "recip_rank", "RR"),
    "RR@10": ("recip_rank_cut_10", "recip_rank_cut.10", "RR@10"),
    "MRR@10": ("recip_rank_cut_10", "recip_rank_cut.10", "RR@10"),
    "recip_rank_cut_10": ("recip_rank_cut_10", "recip_rank_cut.10", "RR@10"),
    "P@10": ("P_10", "P.10", "P@10"),
    "P_10": ("P_10", "P.10", "P@10"),
    "P.10": ("P_10", "P.10", "P@10"),
    "p_10": ("P_10", "P.10", "P@10"),
    "AP": ("map", "map", "AP"),
    "MAP": ("map", "map", "AP"),
    "map": ("map", "map", "AP"),
    "AP@100": ("map_cut_100", "map_cut.100", "AP@100"),
    "R@1000": ("recall_1000", "recall.1000", "R@1000"),
    "recall_1000": ("recall_1000", "recall.1000", "R@1000"),
    "Rprec": ("Rprec", "Rprec", "Rprec"),
    "R-Prec": ("Rprec", "Rprec", "Rprec"),
    "Bpref": ("bpref", "bpref", "Bpref"),
    "bpref": ("bpref", "bpref", "Bpref"),
    "infAP": ("infAP", "infAP", "infAP"),
    "Judged@10": ("judged_10", "judged.10", "Judged@10"),
    "judged_10": ("judged_10", "judged.10", "Judged@10"),
    "Success@1": ("success_1", "success.1", "Success@1"),
    "IPrec@0.1": ("iprec_at_recall_0.10", "iprec_at_recall.0.1", "IPrec@0.1"),
    "iprec_at_recall_0.10": ("iprec_at_recall_0.10", "iprec_at_recall.0.1", "IPrec@0.1"),
    "iprec_at_recall..10": ("iprec_at_recall_0.10", "iprec_at_recall.0.1", "IPrec@0.1"),
    "iprec_at_recall_1.00": ("iprec_at_recall_1.00", "iprec_at_recall.1", "IPrec@1"),
    "NumRet": ("num_ret", "num_ret", "NumRet"),
    "NumRel": ("num_rel", "num_rel", "NumRel"),
    "NumRelRet": ("num_rel_ret", "num_rel_ret", "NumRelRet"),
    "NumQ": ("num_q", "num_q", "NumQ"),
    "SetP": ("set_P", "set_P", "SetP"),
    "SetF": ("set_F", "set_F", "SetF"),
    "gm_map": ("gm_map", "gm_map", "GMAP"),
    "GMAP": ("gm_map", "gm_map", "GMAP"),
    "Rprec_mult_0.20": ("Rprec_mult_0.20", "Rprec_mult.0.2", "Rprec_mult_0.20"),
    "11pt_avg": ("11pt_avg", "11pt_avg", "11pt_avg"),
    "unj_10": ("unj_10", "unj.10", "unj_10"),
}


@pytest.mark.parametrize("name", NAMES)
def test_names_both_ways(name):
    entry = resolve(name)
    assert (entry.column, entry.request, entry.label) == NAMES[name]
    # the label and the column name the same entry again
    assert resolve(entry.label) == resolve(entry.column)


def test_labels_map_to_trec_eval_as_ir_measures_maps_them():
    """Every label ir_measures parses is the trec_eval measure its pytrec_eval provider
    computes for it; the others are trec_eval's names (measures ir_measures lacks)."""
    ir_measures = pytest.importorskip("ir_measures")
    provider = ir_measures.pytrec_eval
    provider.initialize()
    own = []
    for entry in stored_measures():
        try:
            parsed = ir_measures.parse_measure(entry.label)
        except (ValueError, NameError, SyntaxError, TypeError):
            assert entry.label == entry.column or entry.label == "GMAP", entry
            continue
        if parsed.NAME == "Judged" or parsed.NAME == "RR" and entry.param is not None:
            own.append(entry.label)  # not pytrec_eval's: checked on values in test_new_measures
            continue
        (invoker,) = provider._build_invokers([parsed], {"q": {"d": 1}})
        ((_, trec_name),) = invoker.measure_map.values()
        assert trec_name == entry.column, entry
    assert own == ["RR@5", "RR@10", "RR@20", "RR@100", "Judged@5", "Judged@10", "Judged@20"]


def test_directions_counts_and_summary_only():
    assert resolve("unj_10").higher_is_better is False
    assert resolve("rbp_resid").higher_is_better is False
    assert resolve("nDCG@10").higher_is_better and resolve("Judged@10").higher_is_better
    assert resolve("num_ret").is_count and not resolve("map").is_count
    assert [e.column for e in stored_measures() if not e.per_need] == [
        "num_q",
        "gm_map",
        "gm_bpref",
    ]


def test_the_counts_are_the_integer_measures_and_each_measure_has_one_label():
    counts = [e.column for e in stored_measures() if e.is_count]
    assert counts == ["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]
    # a count is what trec_eval prints as an integer: the engine's flag, the catalog's
    assert all(measure_named(e.measure).integer == e.is_count for e in stored_measures())
    # one label for a measure, whatever it was called by: the mean and one need's value alike
    assert {resolve(n).label for n in ("map", "AP", "MAP", "ap")} == {"AP"}
    assert {resolve(n).label for n in ("recip_rank_cut_10", "RR@10", "MRR@10")} == {"RR@10"}


@pytest.mark.parametrize(
    ("name", "reason", "suggested"),
    [
        ("bogus", None, []),
        ("ndcg10", None, ["nDCG@10"]),
        ("MRR10", None, ["RR@10"]),
        ("P", "a cutoff is needed, e.g. @10", ["P@5", "P_5", "P@10"]),
        ("ndcg_cut", "a cutoff is needed", ["ndcg_cut_5", "ndcg_cut_10"]),
        ("P@0", "the cutoff must be a positive integer", []),
        ("RR@ten", "the cutoff must be a positive integer", []),
        ("Rprec@10", "it takes no cutoff", []),
        ("relstring", "text, not a number", []),
        ("runid", "text, not a number", []),
        ("AP(rel=2)@10", "ir_measures' (rel=...) parameters are not taken; see -l", []),
        ("ndcg.1=3,2=9", "only a cutoff can follow its name; use -m syntax for other parameters", []),
    ],
)  # fmt: skip
def test_unknown_names_say_why_and_what_is_close(name, reason, suggested):
    with pytest.raises(UnknownMeasure) as caught:
        resolve(name)
    assert caught.value.reason == reason
    assert caught.value.suggestions[: len(suggested)] == suggested
    assert str(caught.value).startswith(f"illegal measure {name!r}")
    assert isinstance(caught.value, ValueError)


def test_close_matches():
    assert close_matches("nDCG@11")[0] in ("nDCG@10", "nDCG@15")
    assert "Judged@10" in close_matches("judge@10")
    assert close_matches("zzzz") == []


@pytest.fixture(scope="module")
def suite():
    return read_qrels(SUITE / "qrels.test"), read_run(SUITE / "results.test")


def test_stored_columns_are_what_evaluate_gives(suite):
    qrels, run = suite
    result = evaluate(qrels, run, stored_requests(), complete=True)
    per_need = [e.column for e in stored_measures() if e.per_need]
    assert list(result.per_need.columns) == per_need
    assert set(result.summary) == {e.column for e in stored_measures()}
    # trec_eval's all_trec, every default cutoff, then RR@k and Judged@k
    assert {e.measure for e in stored_measures()} == set(ALL_TREC) - {"runid", "relstring"} | {
        "recip_rank_cut",
        "judged",
    }
    assert {"ndcg_cut_10", "recip_rank_cut_10", "judged_10", "recall_1000"} <= set(per_need)


def test_stored_columns_with_a_benchmarks_own_cutoffs(suite):
    qrels, run = suite
    extra = ["RR@3", "nDCG@10", "P@7", "IPrec@0.25"]
    assert stored_requests(extra) == [
        "all_trec", "recip_rank_cut", "judged", "recip_rank_cut_3", "P_7", "iprec_at_recall_0.25",
    ]  # fmt: skip
    result = evaluate(qrels, run, stored_requests(extra))
    assert list(result.per_need.columns) == [e.column for e in stored_measures(extra) if e.per_need]
    columns = list(result.per_need.columns)
    assert columns.index("P_5") < columns.index("P_7") < columns.index("P_10")
    assert columns.index("recip_rank_cut_3") < columns.index("recip_rank_cut_5")


def test_requests_in_both_syntaxes(suite):
    qrels, run = suite

    def columns(*measures):
        return list(evaluate(qrels, run, list(measures)).per_need.columns)

    # in trec_eval's output order, the engine's own measures last
    assert columns("nDCG@10", "P.5,10", "RR@10") == [
        "P_5", "P_10", "ndcg_cut_10", "recip_rank_cut_10",
    ]  # fmt: skip
    # catalog names add cutoffs: to the defaults, to trec_eval's parameters, to each other
    assert columns("P", "P@7") == [f"P_{k}" for k in (5, 7, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert columns("P.5", "P@10", "P_10") == ["P_5", "P_10"]
    assert columns("nDCG@20", "nDCG@10") == ["ndcg_cut_10", "ndcg_cut_20"]
    # trec_eval's own rule is kept for its own syntax: the first parameters win
    assert columns("P.5", "P.10") == ["P_5"]
    same = evaluate(qrels, run, ["AP", "nDCG@10", "RR"]).per_need
    trec = evaluate(qrels, run, ["map", "ndcg_cut.10", "recip_rank"]).per_need
    assert same.equals(trec)


def test_cli_takes_both_syntaxes_and_prints_trec_eval_names(capsys):
    code = main(["-m", "nDCG@10", "-m", "P.5,10", "-m", "RR@10", "-m", "MAP",
                 str(SUITE / "qrels.test"), str(SUITE / "results.test")])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == [
        "map", "P_5", "P_10", "ndcg_cut_10", "recip_rank_cut_10",
    ]  # fmt: skip
    code = main(["-m", "ndcg10", str(SUITE / "qrels.test"), str(SUITE / "results.test")])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "illegal measure 'ndcg10'; did you mean nDCG@10" in err


def test_every_stored_measure_has_a_reader_group():
    # The pages' measure menus are grouped from the catalog, not by hand.
    from evaluation.measures.catalog import GROUPS, stored_measures

    entries = stored_measures()
    assert {entry.group for entry in entries} == set(GROUPS)
    for entry in entries:
        assert (entry.group == "counts") == entry.is_count, entry.column
    groups = {entry.column: entry.group for entry in entries}
    assert groups["P_10"] == groups["Rprec"] == "precision"
    assert groups["recall_100"] == "recall"
    assert groups["map"] == groups["recip_rank"] == groups["bpref"] == "rank-based"
    assert groups["ndcg_cut_10"] == groups["ndcg"] == "graded"
    assert groups["judged_10"] == "judged"
    assert groups["num_rel_ret"] == groups["num_q"] == "counts"
