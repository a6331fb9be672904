"""``python -m evaluation``: trec_eval's flags and output, machine formats, bad files."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from evaluation.__main__ import main
from tests import FIXTURES

SUITE = FIXTURES / "trec_eval-suite"
SEED = FIXTURES / "seed-library"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_default_is_official_measures(capsys):
    code, out, err = run(capsys, str(SUITE / "qrels.test"), str(SUITE / "results.test"))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "runid                 \tall\tSTANDARD"
    assert lines[1] == "num_q                 \tall\t3"
    assert [line.split("\t")[0].strip() for line in lines][-9:] == [
        "P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000",
    ]  # fmt: skip


def test_first_parameters_win_and_glued_options(capsys):
    code, out, _ = run(capsys, "-mP.5", "-m", "P.10", "-M3", "-l1", "-m", "num_ret",
                       str(SUITE / "qrels.test"), str(SUITE / "results.test"))  # fmt: skip
    assert code == 0
    assert out.splitlines() == [
        "num_ret               \tall\t9",
        "P_5                   \tall\t0.1333",  # trec_eval 10.0-rc3 prints the same
    ]


def test_nosummary_and_trec_eval_s_long_option_names(capsys):
    files = [str(SUITE / "qrels.test"), str(SUITE / "results.test")]
    code, out, _ = run(capsys, "-q", "-n", "-m", "map", "-m", "runid", *files)
    # trec_eval 10.0 -q -n -m map -m runid prints these three lines, no runid
    assert (code, out.splitlines()) == (
        0,
        ["map                   \t301\t0.0324", "map                   \t302\t0.4175",
         "map                   \t303\t0.0858"],
    )  # fmt: skip
    assert run(capsys, "-n", "-m", "map", *files)[:2] == (0, "")
    short = run(capsys, "-q", "-c", "-l", "2", "-M", "5", "-m", "P.5", *files)
    long = run(capsys, "--query_eval_wanted", "--complete_rel_info_wanted", "--level_for_rel",
               "2", "--Max_retrieved_per_topic", "5", "--measure", "P.5", *files)  # fmt: skip
    assert short == long and short[0] == 0


def test_trec_eval_s_options_this_command_lacks_are_refused_by_name(capsys):
    files = [str(SUITE / "qrels.test"), str(SUITE / "results.test")]
    for option, said in [
        (["-o"], "-o (trec_eval's obsolete output format) is not supported"),
        (["-N", "1000"], "-N (trec_eval's collection size) is not supported"),
        (["--Zscore", "z.txt"], "--Zscore (trec_eval's z-scores) is not supported"),
    ]:
        with pytest.raises(SystemExit) as stopped:
            main([*option, *files])
        out, err = capsys.readouterr()
        assert (stopped.value.code, out) == (2, "")
        assert err.splitlines()[-1] == f"python -m evaluation: error: {said}"


def test_judged_docs_only(capsys, tmp_path):
    """-J: d3 (judged -1), d9 and d8 (not in the qrels) go, the rest ranked anew after -M
    (d2 before d1: tied, doc id descending); b keeps only unjudged lines, c has none (-c)."""
    qrels = tmp_path / "qrels"
    qrels.write_text("a 0 d1 1\na 0 d2 0\na 0 d3 -1\na 0 d4 2\na 0 d5 1\n"
                     "b 0 d1 1\nb 0 d2 0\nc 0 d9 1\n")  # fmt: skip
    run_file = tmp_path / "run"
    run_file.write_text("a Q0 d9 1 5.0 t\na Q0 d3 2 4.0 t\na Q0 d2 3 3.0 t\na Q0 d1 4 3.0 t\n"
                        "a Q0 d8 5 2.5 t\na Q0 d4 6 2.0 t\na Q0 d5 7 1.0 t\n"
                        "b Q0 d7 1 2.0 t\nb Q0 d6 2 1.0 t\n")  # fmt: skip
    flags = ["-c", "-q", "-M", "6", "-m", "num_ret", "-m", "map", "-m", "P.1,3",
             "-m", "relstring.6"]  # fmt: skip
    code, out, err = run(capsys, "-J", *flags, str(qrels), str(run_file))
    assert (code, err) == (0, "")
    # trec_eval 10.0: trec_eval -J -c -q -M 6 -m num_ret -m map -m P.1,3 -m relstring.6
    assert out.splitlines() == [
        "num_ret               \ta\t3",
        "map                   \ta\t0.3889",
        "P_1                   \ta\t0.0000",
        "P_3                   \ta\t0.6667",
        "relstring_6           \ta\t'012'",
        "num_ret               \tb\t0",
        "map                   \tb\t0.0000",
        "P_1                   \tb\t0.0000",
        "P_3                   \tb\t0.0000",
        "relstring_6           \tb\t''",
        "num_ret               \tc\t0",
        "map                   \tc\t0.0000",
        "P_1                   \tc\t0.0000",
        "P_3                   \tc\t0.0000",
        "relstring_6           \tc\t''",
        "num_ret               \tall\t3",
        "map                   \tall\t0.1296",
        "P_1                   \tall\t0.0000",
        "P_3                   \tall\t0.2222",
    ]
    assert run(capsys, "--Judged_docs_only", *flags, str(qrels), str(run_file))[1] == out


def test_json_and_csv(capsys):
    args = ["-q", "-c", "-m", "map", "-m", "P.10", str(SEED / "qrels.txt"), str(SEED / "run-A.txt")]
    code, out, _ = run(capsys, "--format", "json", *args)
    assert code == 0
    data = json.loads(out)
    assert data["run_id"] == "system-A"
    assert round(data["summary"]["map"], 4) == 0.4733
    assert round(data["per_need"]["atwood"]["map"], 4) == 0.8333
    code, out, _ = run(capsys, "--format", "csv", *args)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["need_id"] for r in rows] == [
        "atwood",
        "cs-foundations",
        "russian-novels",
        "stage-plays",
        "all",
    ]
    assert round(float(rows[-1]["map"]), 4) == 0.4733


def test_a_value_that_is_not_a_number_is_json_null(tmp_path, capsys):
    """trec_eval prints ``-nan`` (Rndcg at -l0 with nothing relevant): JSON has no NaN,
    so the value is ``null`` and the output parses everywhere (allow_nan=False)."""
    (tmp_path / "qrels").write_text("1 0 d1 0\n1 0 d2 0\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n")
    args = ["-q", "-l0", "-m", "Rndcg", str(tmp_path / "qrels"), str(tmp_path / "run")]
    code, out, _ = run(capsys, *args)
    assert (code, out.splitlines()[-1]) == (0, "Rndcg                 \tall\t  -nan")
    code, out, _ = run(capsys, "--format", "json", *args)
    assert code == 0 and "NaN" not in out
    data = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert data["summary"] == {"Rndcg": None} and data["per_need"] == {"1": {"Rndcg": None}}


def test_a_need_named_all_keeps_its_csv_row_beside_the_summary(tmp_path, capsys):
    (tmp_path / "qrels").write_text("all 0 d1 1\nb 0 d2 1\n")
    (tmp_path / "run").write_text("all Q0 d1 1 3 t\nb Q0 d9 1 2 t\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    code, out, _ = run(capsys, "-q", "-m", "map", "--format", "csv", *files)
    assert (code, out.splitlines()) == (0, ["need_id,map", "all,1.0", "b,0.0", "all,0.5"])
    code, out, _ = run(capsys, "-q", "-m", "map", "--format", "csv", *files, files[1])
    assert out.splitlines()[1:4] == [f"{files[1]},t,all,1.0", f"{files[1]},t,b,0.0",
                                     f"{files[1]},t,all,0.5"]  # fmt: skip


def test_bad_file_exits_nonzero_with_file_line_reason(tmp_path, capsys):
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 d1 1 1.0 t\n301 Q0 d2 2 oops t\n")
    code, out, err = run(capsys, str(SUITE / "qrels.test"), str(bad))
    assert code != 0
    assert out == ""
    assert err.strip() == f"{bad}:2: score 'oops' is not a number"


def test_missing_file(tmp_path, capsys):
    code, out, err = run(capsys, str(tmp_path / "nope"), str(SUITE / "results.test"))
    assert code != 0 and out == "" and "nope" in err


def test_illegal_measure(capsys):
    code, out, err = run(
        capsys, "-m", "bogus", str(SUITE / "qrels.test"), str(SUITE / "results.test")
    )
    assert code != 0 and out == "" and "illegal measure" in err


def test_warnings_go_to_stderr(tmp_path, capsys):
    run_file = tmp_path / "r.txt"
    run_file.write_text("301 Q0 d1 1 1.0 a\n999 Q0 d1 1 1.0 b\n")
    code, out, err = run(capsys, "-m", "num_q", str(SUITE / "qrels.test"), str(run_file))
    assert code == 0
    assert out == "num_q                 \tall\t1\n"
    assert "2 different tags" in err and "without judgments" in err


def test_module_entry_point_and_compare_delegation():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluation",
            "-m",
            "map",
            str(SUITE / "qrels.test"),
            str(SUITE / "results.test"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "map                   \tall\t0.1785\n"
    helped = subprocess.run(
        [sys.executable, "-m", "evaluation", "compare", "--help"], capture_output=True, text=True
    )
    assert helped.returncode == 0 and "usage" in helped.stdout.lower()


def test_the_command_leaves_with_all_its_output_and_its_status(capsys, tmp_path):
    """``python -m evaluation`` skips the interpreter's teardown once its output is
    flushed: a long -q output arrives whole, the status is the command's, and the output
    is what main() prints in process."""
    args = ["-q", "-m", "all_trec", str(SUITE / "qrels.test"), str(SUITE / "results.test")]
    done = subprocess.run(
        [sys.executable, "-m", "evaluation", *args], capture_output=True, text=True, check=True
    )
    code, out, _ = run(capsys, *args)
    assert code == done.returncode == 0 and done.stdout == out and len(out) > 10_000
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 abc t\n")
    done = subprocess.run(
        [sys.executable, "-m", "evaluation", str(SUITE / "qrels.test"), str(bad)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr == f"{bad}:1: score 'abc' is not a number\n"
