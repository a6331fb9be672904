"""The command line's many runs in one call (files, directories, globs, ``-j``), the
reader's large files parsed in pieces, and what the command sets for itself."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.__main__ import main
from evaluation.trec.columnar import read_run
from tests import ROOT

SUITE = ROOT / "tests" / "fixtures" / "trec_eval-suite"


def cli(capsys, args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ many runs at once


@pytest.fixture()
def runs(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n")
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.txt").write_text("q1 Q0 d1 1 3 alpha\nq1 Q0 d9 2 2 alpha\nq2 Q0 d3 1 1 alpha\n")
    (folder / "b.txt").write_text("q1 Q0 d9 1 3 beta\nq1 Q0 d2 2 2 beta\nq2 Q0 d8 1 1 beta\n")
    return qrels, folder


def test_many_runs_print_one_block_each_with_its_runid(capsys, runs):
    qrels, folder = runs
    a, b = folder / "a.txt", folder / "b.txt"
    code, out, err = cli(capsys, ["-m", "map", str(qrels), str(a), str(b)])
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "runid                 \tall\talpha",
        "map                   \tall\t0.7500",
        "runid                 \tall\tbeta",
        "map                   \tall\t0.1250",
    ]
    # each block is what the run alone prints, after its runid line
    alone = [cli(capsys, ["-m", "map", str(qrels), str(r)])[1] for r in (a, b)]
    assert out == f"{'runid':<22}\tall\talpha\n{alone[0]}{'runid':<22}\tall\tbeta\n{alone[1]}"
    # a runid the measures ask for is not printed twice
    code, out, _ = cli(capsys, ["-m", "runid", "-m", "map", str(qrels), str(a), str(b)])
    assert out.count("runid") == 2


def test_a_directory_and_a_glob_are_their_files_in_name_order(capsys, runs):
    qrels, folder = runs
    by_files = cli(capsys, ["-q", str(qrels), str(folder / "a.txt"), str(folder / "b.txt")])
    assert cli(capsys, ["-q", str(qrels), str(folder)]) == by_files
    assert cli(capsys, ["-q", str(qrels), str(folder / "*.txt")]) == by_files
    assert by_files[1].count("runid                 \tall\t") == 2


def test_many_runs_as_one_csv_table_and_a_json_list(capsys, runs):
    qrels, folder = runs
    code, out, _ = cli(capsys, ["--format", "csv", "-m", "map", str(qrels), str(folder)])
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(Path(r["run"]).name, r["runid"], r["need_id"]) for r in rows] == [
        ("a.txt", "alpha", "q1"), ("a.txt", "alpha", "q2"), ("a.txt", "alpha", "all"),
        ("b.txt", "beta", "q1"), ("b.txt", "beta", "q2"), ("b.txt", "beta", "all"),
    ]  # fmt: skip
    assert [float(r["map"]) for r in rows] == [0.5, 1.0, 0.75, 0.25, 0.0, 0.125]
    code, out, _ = cli(capsys, ["--format", "json", "-m", "map", str(qrels), str(folder)])
    objects = json.loads(out)
    assert [(Path(o["run"]).name, o["run_id"], o["summary"]["map"]) for o in objects] == [
        ("a.txt", "alpha", 0.75),
        ("b.txt", "beta", 0.125),
    ]


def test_a_bad_run_among_many_is_reported_and_skipped(capsys, runs):
    qrels, folder = runs
    (folder / "c.txt").write_text("q1 Q0 d1 1 abc beta\n")
    code, out, err = cli(capsys, ["-m", "map", str(qrels), str(folder)])
    assert code == 2
    assert out.count("runid") == 2 and "map                   \tall\t0.7500" in out
    assert err == f"{folder / 'c.txt'}:1: score 'abc' is not a number\n"
    code, out, err = cli(capsys, ["-m", "nDCG10", str(qrels), str(folder)])
    assert (code, out) == (1, "") and err.startswith("evaluation: illegal measure 'nDCG10'")


def _command(*args: str) -> tuple[int, str, str]:
    """``python -m evaluation ARGS`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-m", "evaluation", *args], capture_output=True, text=True, cwd=ROOT
    )
    return done.returncode, done.stdout, done.stderr


def test_runs_scored_at_once_print_what_one_after_another_prints(runs):
    qrels, folder = runs
    (folder / "c.txt").write_text("q1 Q0 d1 1 abc beta\n")  # a bad run among them
    (folder / "d.txt").write_text("q1 Q0 d2 1 3 x\nq2 Q0 d3 1 1 y\n")  # two tags: a warning
    for i in range(12):  # more runs than workers, each its own runid
        (folder / f"e{i:02d}.txt").write_text(f"q1 Q0 d{i % 3 + 1} 1 3 r{i}\nq2 Q0 d3 1 1 r{i}\n")
    (folder / "f.txt").write_text("q1 Q0 d1 1 3 f\nq1 Q0 d2 2 4 f\n")  # ranks against scores
    for flags in (["-m", "map", "-m", "P.5"], ["-q"], ["-c", "-m", "ndcg"]):
        one = _command("-j", "1", *flags, str(qrels), str(folder))
        two = _command("-j", "3", *flags, str(qrels), str(folder))
        assert one == two
        code, out, err = two
        assert code == 2 and out.count("runid                 \tall\t") == 16
        assert err.splitlines()[0] == f"{folder / 'c.txt'}:1: score 'abc' is not a number"
        # among many runs a warning names its run
        said = "2 different tags in the run; its runid is the last line's, 'y'"
        assert f"warning: {folder / 'd.txt'}: {said}" in err.splitlines()
        disagrees = "the rank column disagrees with the score order; ranks come from the scores"
        assert f"warning: {folder / 'f.txt'}: {disagrees}" in err.splitlines()
    one = _command("-j", "1", "-m", "nDCG10", str(qrels), str(folder))
    two = _command("-j", "2", "-m", "nDCG10", str(qrels), str(folder))
    assert one == two and two[:2] == (1, "") and "illegal measure 'nDCG10'" in two[2]


def _piped(stdin: bytes, *args: str) -> tuple[int, str, str]:
    """``python -m evaluation ARGS`` in a fresh process, ``stdin`` piped to it."""
    done = subprocess.run(
        [sys.executable, "-m", "evaluation", *args], input=stdin, capture_output=True, cwd=ROOT
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_a_run_from_standard_input_a_pipe_or_a_fifo_scores_as_its_file(runs, tmp_path):
    """``-`` reads the run from standard input (trec_eval's results file ``-``); a path
    that cannot be sought (a FIFO, /dev/stdin, a shell's ``<(zcat run.gz)``) is read as
    it comes, gzip or not."""
    qrels, folder = runs
    text = (folder / "a.txt").read_bytes()
    want = _command("-q", "-m", "map", str(qrels), str(folder / "a.txt"))
    assert want[0] == 0 and "map                   \tall\t0.7500" in want[1]
    assert _piped(text, "-q", "-m", "map", str(qrels), "-") == want
    assert _piped(gzip.compress(text), "-q", "-m", "map", str(qrels), "/dev/stdin") == want
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(gzip.compress(text)))
    writer.start()
    try:
        assert _command("-q", "-m", "map", str(qrels), str(fifo)) == want
    finally:
        writer.join(timeout=30)
    # a bad line read from standard input is named as standard input's
    code, out, err = _piped(text + b"q2 Q0 d9 2 abc alpha\n", "-m", "map", str(qrels), "-")
    assert (code, out, err) == (2, "", "<stdin>:4: score 'abc' is not a number\n")


def test_a_file_that_cannot_be_read_is_named_or_explained(capsys, runs, tmp_path):
    qrels, _ = runs
    code, out, err = cli(capsys, ["-m", "map", str(qrels), str(tmp_path / "none.txt")])
    assert (code, out) == (
        2,
        "",
    ) and err == f"{tmp_path / 'none.txt'}:0: No such file or directory\n"
    import evaluation.cli.score as score

    assert score._unreadable(OSError("the device went away")) == "evaluation: the device went away"


def test_never_more_workers_than_runs(monkeypatch):
    import evaluation.cli.score as score

    assert score._jobs(8, 3) == 3 and score._jobs(0, 5) == 1 and score._jobs(None, 1) == 1
    monkeypatch.setattr(score.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert score._jobs(None, 100) == 2


# ------------------------------------------------------- a large file parsed in pieces


def _run_lines(count: int, rank=lambda i: str(i + 1)) -> str:
    return "".join(
        f"q{i // 40} Q0 msmarco_passage_{i % 7:02d}_{i:09d} {rank(i)} {1000 - i % 40}.25 tag\n"
        for i in range(count)
    )


@pytest.mark.parametrize("piece", [997, 4096, 1 << 20])  # ~20 lines a piece, and more
@pytest.mark.parametrize(
    "text",
    [
        _run_lines(25_000),  # over 1 MB: load() maps it, pieces are let go
        "qid Q0 docno rank score tag\n" + _run_lines(25_000),  # a header, then pieces
        _run_lines(25_000, rank=lambda i: "r" if i == 24_000 else str(i)),  # a text rank late
    ],
)
def test_pieces_read_as_one(monkeypatch, tmp_path, piece, text):
    import evaluation.trec.parsing as parsing
    from evaluation.trec.readers import read_run

    path = tmp_path / "run.txt"
    path.write_text(text)
    assert path.stat().st_size > 1 << 20
    whole = read_run(path)
    monkeypatch.setattr(parsing, "PARSE_PIECE", piece)
    pieces = read_run(path)
    assert pieces.tag == whole.tag and pieces.warnings == whole.warnings
    for column in ("need_id", "doc_id", "score", "rank"):
        assert pieces.frame[column].astype(str).tolist() == whole.frame[column].astype(str).tolist()


def test_a_bad_line_in_a_later_piece_is_named(monkeypatch, tmp_path):
    import evaluation.trec.parsing as parsing
    from evaluation.trec.readers import read_run
    from evaluation.trec.sources import TrecFormatError

    monkeypatch.setattr(parsing, "PARSE_PIECE", 100)
    for bad, reason in [
        ("q9 Q0 d1 1 x t", "score 'x' is not a number"),
        ("q9 Q0 d1 1", "expected 6 columns (need_id Q0 doc_id rank score tag), got 4"),
        ("q9  Q0 d1 1 2 t\nq9 Q0 d1 2 1 t", "doc_id 'd1' twice for need 'q9' (first on line 301)"),
        ("q9 Q0 d\x00 1 2 t", "binary file (NUL byte)"),
    ]:
        path = tmp_path / "run.txt"
        path.write_text(_run_lines(300) + bad + "\n")
        line = 302 if "twice" in reason else 301
        with pytest.raises(TrecFormatError) as err:
            read_run(path)
        assert (err.value.line, err.value.reason) == (line, reason)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.from_regex(r"-?[0-9]{1,15}(\.[0-9]{0,6})?", fullmatch=True),
            st.from_regex(r"-?[0-9]{0,9}\.[0-9]{1,8}", fullmatch=True),
            st.floats(-1e9, 1e9, allow_nan=False).map(lambda x: f"{x:.6f}"),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_decimals_are_the_nearest_doubles(tokens):
    text = "".join(f"q1 Q0 d{i} {i + 1} {token} t\n" for i, token in enumerate(tokens))
    run = read_run(text.encode(), "run.txt")
    expected = [float(token) for token in tokens]  # Python's float: the nearest double
    assert [(v, str(v)) for v in run.score.tolist()] == [(v, str(v)) for v in expected]


def test_compare_takes_a_directory_and_a_glob(capsys, runs):
    qrels, folder = runs
    (folder / "c.txt").write_text("q1 Q0 d2 1 3 gamma\nq1 Q0 d1 2 2 gamma\nq2 Q0 d3 1 1 gamma\n")
    files = [str(folder / name) for name in ("a.txt", "b.txt", "c.txt")]
    base = ["compare", "--permutations", "200", "--format", "json", str(qrels)]
    by_files = cli(capsys, [*base, *files])
    assert by_files[0] == 0 and len(json.loads(by_files[1])["pairs"]) == 3
    assert cli(capsys, [*base, str(folder)]) == by_files
    assert cli(capsys, [*base, str(folder / "*.txt")]) == by_files


def test_the_command_sets_one_blas_thread_and_arrows_system_allocator():
    code = (
        "import os, sys\n"
        "from evaluation.__main__ import main\n"
        f"main(['-m', 'map', {str(SUITE / 'qrels.test')!r}, 'bad-path.txt'])\n"
        "import pyarrow\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'], pyarrow.default_memory_pool().backend_name)\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "ARROW_DEFAULT_MEMORY_POOL")
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    assert done.stdout.split() == ["1", "system"]


def test_scoring_files_imports_no_pandas_and_csv_does(tmp_path):
    # the frames are built only for the formats that print them: a text score starts
    # without pandas' import (most of a small run's time)
    code = (
        "import sys\n"
        "from evaluation.__main__ import main\n"
        f"qrels, run = {str(SUITE / 'qrels.test')!r}, {str(SUITE / 'results.test')!r}\n"
        "main(['-q', '-m', 'all_trec', qrels, run, run])\n"
        "print('pandas' in sys.modules, file=sys.stderr)\n"
        "main(['--format', 'csv', '-m', 'map', qrels, run])\n"
        "print('pandas' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stderr.split()[-2:] == ["False", "True"]
    assert "\nmap" in done.stdout


@pytest.mark.parametrize(
    ("tags", "distinct"),
    [
        (["run1", "run1", "run1"], 1),
        (["run1", "run2", "run1"], 2),
        (["ab", "abc", "ab"], 2),
        (["xa", "ya", "za"], 3),
    ],  # fmt: skip
)
def test_tags_counted(tags, distinct):
    text = "".join(f"q1 Q0 d{i} {i + 1} {9 - i} {tag}\n" for i, tag in enumerate(tags))
    run = read_run(text.encode(), "r.txt")
    assert run.tag == tags[-1] and len(run.warnings) == (distinct > 1)
    if distinct > 1:
        assert run.warnings[0].startswith(f"r.txt: {distinct} different tags")
