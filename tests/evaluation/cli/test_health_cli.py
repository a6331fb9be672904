"""``python -m evaluation power|discrim|tau|poolbias``: text and JSON, both input paths, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from evaluation.__main__ import main
from evaluation.health import minimum_detectable_difference, residual_variance
from tests import FIXTURES

AP = str(FIXTURES / "trec8-per-topic" / "adhoc8_ap.csv")
P10 = str(FIXTURES / "trec8-per-topic" / "adhoc8_p10.csv")
SEED = FIXTURES / "seed-library"
SEED_ARGS = [str(SEED / "qrels.txt"), str(SEED / "run-A.txt"), str(SEED / "run-B.txt")]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_power_json_and_text(capsys) -> None:
    code, out, _ = run(capsys, "power", "--scores", AP, "--format", "json", "--delta", "0.05")
    assert code == 0
    report = json.loads(out)
    sigma = math.sqrt(2 * residual_variance(pd.read_csv(AP)))
    assert report["needs"] == 50 and report["runs"] == 129
    assert report["mdd"] == pytest.approx(minimum_detectable_difference(50, sigma))
    assert report["deltas"][0]["topic_set_size"] == 88
    code, out, _ = run(capsys, "power", "--scores", AP)
    assert code == 0 and "minimum detectable difference at 80% power: 0.0667" in out


def test_discrim_counts_of_the_readme(capsys) -> None:
    code, out, _ = run(
        capsys, "discrim", "--scores", AP, "--correction", "holm", "--format", "json"
    )
    report = json.loads(out)
    assert code == 0 and (report["significant"], report["pairs"]) == (3084, 8256)
    assert len(report["asl"]) == 8256
    code, out, _ = run(capsys, "discrim", "--scores", P10, "--test", "wilcoxon")
    assert "5351 of 8256 pairs significant" in out


def test_tau_between_two_matrices_and_two_measures(capsys) -> None:
    code, out, _ = run(capsys, "tau", "--scores", AP, "--scores", P10, "--format", "json")
    report = json.loads(out)
    a, b = pd.read_csv(AP).mean(), pd.read_csv(P10).mean()
    assert code == 0 and report["tau"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert -1 <= report["tau_ap"] < report["tau"]
    code, out, _ = run(capsys, "tau", *SEED_ARGS, "-m", "map", "-m", "P.10")
    assert code == 0 and "Kendall's tau" in out


def test_poolbias_on_runs(capsys) -> None:
    args = ["poolbias", *SEED_ARGS, "--depth", "10", "--format", "json"]
    code, out, _ = run(capsys, *args, "--participant", "run-A.txt=team")
    assert code == 0
    report = json.loads(out)
    assert {r["participant"] for r in report["runs"]} == {"team", "run-B.txt"}
    assert report["max_drop"] >= 0 and report["depth"] == 10
    code, out, _ = run(capsys, "poolbias", *SEED_ARGS)
    assert code == 0 and "largest drop" in out


def test_bad_input(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n0.1,x\n")
    code, _, err = run(capsys, "power", "--scores", str(bad))
    assert code == 1 and "'x' is not a number" in err
    with pytest.raises(SystemExit) as exit_:
        run(capsys, "discrim", "--scores", AP, "--alpha", "2")
    assert exit_.value.code == 2
    for delta in ("0", "-0.05", "nan", "inf"):  # NaN crashed the table, inf meant nothing
        with pytest.raises(SystemExit) as exit_:
            run(capsys, "power", "--scores", AP, "--delta", delta)
        assert exit_.value.code == 2 and "--delta must be a positive number" in (
            capsys.readouterr().err
        )
    with pytest.raises(SystemExit) as exit_:  # not numpy's "expected non-negative integer"
        run(capsys, "discrim", "--scores", AP, "--test", "randomization", "--seed", "-3")
    assert exit_.value.code == 2 and "--seed: '-3' is not a non-negative integer" in (
        capsys.readouterr().err
    )
    with pytest.raises(SystemExit):
        run(capsys, "tau", "--scores", AP)
    other = tmp_path / "other.csv"
    other.write_text("x,y\n0.1,0.2\n0.3,0.4\n")
    code, _, err = run(capsys, "tau", "--scores", AP, "--scores", str(other))
    assert code == 1 and "same run columns" in err
    with pytest.raises(SystemExit):
        run(capsys, "poolbias", *SEED_ARGS, "--participant", "nope=team")


def test_discrim_randomization_says_what_holm_cannot_find(capsys, tmp_path: Path) -> None:
    """The fixture README's warning: B permutations floor p at 1/(B+1), so Holm over many
    pairs can find nothing; the command says so rather than only printing 0."""
    scores = pd.read_csv(AP).iloc[:, :12]
    path = tmp_path / "twelve.csv"
    scores.to_csv(path, index=False)
    args = ["discrim", "--scores", str(path), "--test", "randomization", "--permutations", "99"]
    code, out, _ = run(capsys, *args, "--correction", "holm")
    assert code == 0 and "0 of 66 pairs significant" in out
    assert "no randomization p can pass Holm over 66 pairs" in out
    code, out, _ = run(capsys, *args, "--correction", "none")
    assert "no randomization p can pass" not in out
