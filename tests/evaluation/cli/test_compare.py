"""``python -m evaluation compare``: the --scores path, and qrels + runs through the engine."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation.cli.compare import JSON_PAIR_KEYS, main, render_text
from evaluation.significance import compare_all_pairs
from tests import FIXTURES as ALL_FIXTURES
from tests import ROOT

FIXTURES = ALL_FIXTURES / "trec8-per-topic"


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    """Four TREC 2013 Web runs (nDCG@20), 50 needs, no need-id column."""
    scores = pd.read_csv(FIXTURES / "web2013_ndcg20.csv").iloc[:, :4]
    path = tmp_path / "web4.csv"
    scores.to_csv(path, index=False)
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_scores_json_has_the_issue_keys_and_the_library_numbers(
    matrix: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_json(capsys, "--scores", str(matrix), "--permutations", "2000", "--seed", "4")
    assert {"measure", "correction", "permutations", "needs", "runs", "pairs"} <= set(report)
    assert report["correction"] == "holm" and report["permutations"] == 2000
    assert report["needs"] == 50
    scores = pd.read_csv(matrix)
    assert [r["name"] for r in report["runs"]] == list(scores.columns)
    assert [r["mean"] for r in report["runs"]] == pytest.approx(scores.mean().tolist())
    expected = compare_all_pairs(scores, permutations=2000, seed=4)
    assert len(report["pairs"]) == 6
    for pair, row in zip(report["pairs"], expected.to_dict("records"), strict=True):
        assert list(pair) == list(JSON_PAIR_KEYS)
        for key in JSON_PAIR_KEYS:
            assert pair[key] == row[key], key
    assert any("1/(B+1)" in note for note in report["notes"])


def test_correction_option(matrix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = run_json(capsys, "--scores", str(matrix), "--correction", "none", "--permutations", "0")
    bh = run_json(capsys, "--scores", str(matrix), "--correction", "bh", "--permutations", "0")
    assert raw["correction"] == "none" and bh["correction"] == "bh"
    for plain, corrected in zip(raw["pairs"], bh["pairs"], strict=True):
        assert plain["t_p_adjusted"] == plain["t_p"]
        assert corrected["t_p_adjusted"] >= corrected["t_p"]
        assert plain["randomization_p"] is None  # skipped: null, not NaN (valid JSON)


def test_text_table_names_tests_alpha_correction_and_marks(
    matrix: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--scores", str(matrix), "--permutations", "1000", "-m", "ndcg_cut_20"]) == 0
    out = capsys.readouterr().out
    assert "paired t" in out and "Wilcoxon signed-rank" in out and "randomization" in out
    assert "alpha = 0.05" in out and "Holm over all 6 pairs" in out
    assert "1/(B+1)" in out and "mean ndcg_cut_20" in out
    lines = [line for line in out.splitlines() if line.startswith("run1  run2")]
    assert len(lines) == 1 and "*" in lines[0]  # run1 beats run2 clearly
    quiet = [line for line in out.splitlines() if line.startswith("run2  run3")]
    assert "*" not in quiet[0]


def test_holm_floor_note_for_large_families(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(
        capsys, "--scores", str(FIXTURES / "web2013_ndcg20.csv"), "--permutations", "2000"
    )
    assert len(report["pairs"]) == 561
    assert any("no randomization p can pass Holm over 561 pairs" in n for n in report["notes"])
    assert all(p["randomization_p_adjusted"] > 0.05 for p in report["pairs"])


def test_need_id_column_gzip_and_edge_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scores.csv.gz"
    with gzip.open(path, "wt") as out:
        out.write("need_id,same,twin,offset\n")
        for i in range(8):
            value = round(0.1 * i, 1)
            out.write(f"40{i},{value},{0.1 + 0.2 if i == 3 else value},{value + 0.05}\n")
    report = run_json(capsys, "--scores", str(path), "--permutations", "500")
    assert report["needs"] == 8 and report["measure"] is None
    same_twin, same_offset = report["pairs"][0], report["pairs"][1]
    assert (same_twin["ties"], same_twin["t_p"], same_twin["wilcoxon_p"]) == (8, 1.0, 1.0)
    assert same_twin["randomization_p"] == 1.0
    assert same_offset["effect_size"] is None  # -inf: JSON has no infinity
    assert same_offset["t_p"] > 0


def test_effect_size_of_one_need_is_undefined_not_infinite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, offset = tmp_path / "one.csv", tmp_path / "offset.csv"
    one.write_text("a,b\n0.5,0.3\n")
    offset.write_text("a,b\n0.5,0.3\n0.4,0.2\n0.3,0.1\n")
    assert main(["--scores", str(one)]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert "nan]       -  1/0/0" in row and "inf" not in row  # no sd from one need: NaN
    assert main(["--scores", str(offset)]) == 0
    assert "+0.2000]    +inf  3/0/0" in capsys.readouterr().out  # sd = 0


def test_few_needs_warning_is_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tiny.csv"
    path.write_text("x,y\n0.1,0.2\n0.3,0.5\n0.2,0.4\n")
    report = run_json(capsys, "--scores", str(path))
    assert any("cannot reach" in note for note in report["notes"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("a,b\n0.1,0.2\n0.3,\n", "tiny.csv:3: run 'b': '' is not a number"),
        ("a,b\n0.1,0.2\n0.3,x\n", "tiny.csv:3: run 'b': 'x' is not a number"),
        ("a,b\n0.1,0.2\n0.3,0.4\n-inf,0.1\n", "tiny.csv:4: run 'a': '-inf' is not a finite number"),
        ("a,b\n0.1,1e999\n", "tiny.csv:2: run 'b': '1e999' is not a finite number"),
        ("need,a,b\n1,0.1,0.2\n1,0.3,0.3\n", "tiny.csv:3: need '1' listed twice"),
        ("a\n0.1\n", "at least two run columns"),
    ],
)
def test_bad_matrix_is_reported_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "tiny.csv"
    path.write_text(content)
    assert main(["--scores", str(path)]) == 1
    assert message in capsys.readouterr().err


def test_usage_errors(matrix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        [],
        ["qrels", "run1"],
        ["--scores", str(matrix), "qrels"],
        ["--scores", str(matrix), "--correction", "bonferroni"],
        ["--scores", str(matrix), "--permutations", "-1"],
        ["--scores", str(matrix), "--seed", "-1"],  # numpy's generator: non-negative only
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
    capsys.readouterr()
    assert main(["--scores", str(matrix.with_name("missing.csv"))]) == 1
    assert "missing.csv" in capsys.readouterr().err


def test_module_entry_point(matrix: Path) -> None:
    """``python -m evaluation compare`` once the engine's __main__ delegates to us."""
    if not (ROOT / "evaluation" / "__main__.py").exists():
        pytest.skip("evaluation/__main__.py (engine) not written yet")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluation",
            "compare",
            "--scores",
            str(matrix),
            "--format",
            "json",
            "--permutations",
            "100",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["pairs"]) == 6


# QRELS RUN RUN ...: needs the engine (evaluation.measures.evaluate).

QRELS = """\
401 0 d1 1
401 0 d2 1
401 0 d3 0
402 0 d4 2
402 0 d5 0
403 0 d6 1
404 0 d7 0
"""
# AP by hand (trec_eval -c: a judged need the run did not answer is 0; need 404 has
# no relevant document and is not paired):
#   good: 401 d1 d2 -> 1; 402 d4 -> 1; 403 d6 -> 1
#   poor: 401 d3 d1 d2 -> (1/2 + 2/3)/2 = 7/12; 402 d5 d4 -> 1/2; 403 unanswered -> 0
GOOD = "401 Q0 d1 1 3.0 good\n401 Q0 d2 2 2.0 good\n402 Q0 d4 1 1.0 good\n403 Q0 d6 1 1.0 good\n"
POOR = "401 Q0 d3 1 3.0 poor\n401 Q0 d1 2 2.0 poor\n401 Q0 d2 3 1.0 poor\n"
POOR += "402 Q0 d5 1 2.0 poor\n402 Q0 d4 2 1.0 poor\n"


def test_qrels_and_runs_through_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(
        "evaluation.measures", reason="engine's evaluation/measures.py not yet written"
    )
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "good.run").write_text(GOOD)
    (tmp_path / "poor.run").write_text(POOR)
    shutil.copy(tmp_path / "good.run", tmp_path / "copy.run")
    report = run_json(
        capsys,
        str(tmp_path / "qrels"),
        str(tmp_path / "good.run"),
        str(tmp_path / "poor.run"),
        str(tmp_path / "copy.run"),
        "-m",
        "map",
        "--permutations",
        "0",
    )
    assert report["measure"] == "map" and report["needs"] == 3
    runs = {r["name"]: r["mean"] for r in report["runs"]}
    assert runs == pytest.approx(
        {"good.run": 1.0, "poor.run": (7 / 12 + 1 / 2 + 0) / 3, "copy.run": 1.0}
    )
    good_poor, good_copy = report["pairs"][0], report["pairs"][1]
    assert (good_poor["a"], good_poor["b"]) == ("good.run", "poor.run")
    assert (good_poor["wins"], good_poor["ties"], good_poor["losses"]) == (3, 0, 0)
    assert good_poor["mean_diff"] == pytest.approx(1 - (7 / 12 + 1 / 2) / 3)
    assert good_copy["t_p"] == good_copy["wilcoxon_p"] == 1.0
    assert any("cannot reach" in note for note in report["notes"])
    # trec_eval -c's MAP of poor.run averages over 4 needs, 404 included: say why it differs
    assert (
        "1 of the 4 needs of the qrels has no relevant document and is not paired: means "
        "and differences are over the 3 others (trec_eval -c averages over all 4)"
    ) in report["notes"]


def test_bad_run_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip(
        "evaluation.measures", reason="engine's evaluation/measures.py not yet written"
    )
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "good.run").write_text(GOOD)
    (tmp_path / "bad.run").write_text("401 Q0 d1 1 notascore bad\n")
    assert (
        main([str(tmp_path / "qrels"), str(tmp_path / "good.run"), str(tmp_path / "bad.run")]) == 1
    )
    assert "bad.run" in capsys.readouterr().err


def test_matrix_values_are_deterministic(matrix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = run_json(capsys, "--scores", str(matrix), "--permutations", "3000", "--seed", "9")
    again = run_json(capsys, "--scores", str(matrix), "--permutations", "3000", "--seed", "9")
    assert first == again
    assert np.isfinite([p["randomization_p"] for p in first["pairs"]]).all()


@pytest.mark.parametrize("measure", ["P_5", "P.5"])
def test_measure_by_printed_name_or_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], measure: str
) -> None:
    pytest.importorskip(
        "evaluation.measures", reason="engine's evaluation/measures.py not yet written"
    )
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "good.run").write_text(GOOD)
    (tmp_path / "poor.run").write_text(POOR)
    argv = [str(tmp_path / name) for name in ("qrels", "good.run", "poor.run")]
    report = run_json(capsys, *argv, "-m", measure, "--permutations", "0")
    assert report["measure"] == "P_5"
    # P@5: good 2/5, 1/5, 1/5; poor 2/5, 1/5, 0
    assert report["pairs"][0]["mean_diff"] == pytest.approx(0.2 / 3)
    assert main([*argv, "-m", "P"]) == 1
    assert "name one" in capsys.readouterr().err
    for summary_only in ("gm_map", "num_q"):  # no per-need values to pair
        assert main([*argv, "-m", summary_only]) == 1
        err = capsys.readouterr().err
        assert f"measure '{summary_only}' has no per-need values" in err
        assert "several values" not in err


def test_exact_enumeration_floor_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "small.csv"
    rows = [f"{i / 10},{i / 10 + 0.05},{i / 20}" for i in range(8)]
    path.write_text("x,y,z\n" + "\n".join(rows) + "\n")
    report = run_json(capsys, "--scores", str(path))
    assert any("all 2^8 sign flips" in note and "2/2^8" in note for note in report["notes"])
    x_y = report["pairs"][0]
    assert x_y["randomization_p"] == 2 / 256  # constant offset: identity and all-minus
    assert main(["--scores", str(path)]) == 0
    assert "exact: all 2^8 sign flips" in capsys.readouterr().out


def test_the_holm_note_of_two_runs_speaks_of_one_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README's compare line on the demo: two runs, four needs, one pair."""
    path = tmp_path / "two.csv"
    path.write_text("a,b\n0.1,0.2\n0.3,0.5\n0.2,0.1\n0.4,0.6\n")
    notes = run_json(capsys, "--scores", str(path))["notes"]
    assert any("pass Holm over 1 pair at alpha = 0.05" in note for note in notes), notes


def test_a_p_just_below_alpha_is_not_printed_as_alpha() -> None:
    pair = {
        "a": "x", "b": "y", "n": 30, "mean_diff": 0.01, "ci_low": 0.0, "ci_high": 0.02,
        "effect_size": 0.4, "wins": 17, "ties": 0, "losses": 13,
        "t_p": 0.04996, "t_p_adjusted": 0.04996, "wilcoxon_p": 0.05, "wilcoxon_p_adjusted": 0.05,
        "randomization_p": 0.6, "randomization_p_adjusted": 0.6,
    }  # fmt: skip
    report = {
        "alpha": 0.05, "correction": "holm", "measure": "map", "needs": 30, "permutations": 0,
        "seed": 0, "runs": [{"name": "x", "mean": 0.3}, {"name": "y", "mean": 0.29}],
        "pairs": [pair], "notes": [],
    }  # fmt: skip
    row = render_text(report).splitlines()[-1]
    assert "0.04996 / 0.04996*" in row and "0.0500 / 0.0500 " in row
