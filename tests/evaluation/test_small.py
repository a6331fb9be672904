"""The small-file path (``evaluation.trec.small``, ``evaluation.measures.small``) against
the general path, byte for byte, and the command line's many runs in one call."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evaluation.trec.plain as plain
import evaluation.trec.small as small
from evaluation.__main__ import main
from evaluation.cli.scorer import Scorer
from evaluation.trec.small import read_small_qrels, read_small_run
from tests.evaluation.texts import ids, numbers, written

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "fixtures" / "trec_eval-suite"

FLAGS = [
    [],
    ["-q"],
    ["-q", "-c"],
    ["-q", "-m", "all_trec"],
    ["-q", "-c", "-m", "all_trec", "-l", "2"],
    ["-q", "-M", "3", "-m", "all_trec"],
    ["-q", "-c", "-M", "0", "-m", "official"],
    ["-q", "-m", "all_trec", "--interpolation", "trec_eval-9", "-c"],
    ["-q", "-m", "all_trec", "--interpolation", "trec_eval-10"],
    ["-q", "-m", "nDCG@10", "-m", "RR@10", "-m", "Judged@5", "-m", "relstring"],
]


def cli(capsys, args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def both_paths(capsys, monkeypatch, args: list[str]):
    """The command's (status, stdout, stderr) by the small path and by the general one,
    once the large-file path (the general readers' columns, no pandas) is seen to print
    what the general path prints. The numpy-free path is off (tests/evaluation/test_plain.py
    compares it with these)."""
    with monkeypatch.context() as patch:
        patch.setattr(plain, "PLAIN_BYTES", -1)
        fast = cli(capsys, args)
        patch.setattr(small, "SMALL_BYTES", -1)  # every file takes the general readers
        columnar = cli(capsys, args)
        patch.setattr(Scorer, "score_columns", lambda self, path: None)  # evaluate() only
        general = cli(capsys, args)
    assert columnar == general
    return fast, general


# ---------------------------------------------------------------- generated inputs

blanks = st.sampled_from([" ", "\t", "  ", " \t "])


@st.composite
def collections(draw):
    """Qrels and run text: needs out of order and unjudged, ties, negative and graded
    judgments, two tags, irregular blanks, an unterminated last line."""
    needs = draw(st.lists(ids, min_size=1, max_size=5, unique=True))
    docs = draw(st.lists(ids, min_size=1, max_size=25, unique=True))
    qrels, run = [], []
    for need in needs:
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        for doc in judged:
            qrels.append(f"{need} 0 {doc} {draw(st.sampled_from(['-1', '0', '1', '2', '3']))}")
        if draw(st.booleans()) or need == needs[0]:
            for doc in draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs))):
                run.append((need, doc))
    for need in draw(st.lists(ids, max_size=2)):  # needs without judgments
        run.append((need, draw(st.sampled_from(docs))))
    run = list(dict.fromkeys(run)) or [(needs[0], docs[0])]
    if draw(st.booleans()):
        run = draw(st.permutations(run))
    sep = draw(blanks) if draw(st.booleans()) else " "
    tags = draw(st.sampled_from([["t"], ["t", "u"]]))
    lines = [
        sep.join([need, "Q0", doc, draw(numbers), draw(numbers), draw(st.sampled_from(tags))])
        for need, doc in run
    ]
    end = draw(st.sampled_from(["\n", ""]))
    return "\n".join(qrels) + "\n", "\n".join(lines) + end


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(collections(), st.sampled_from(FLAGS))
def test_small_path_prints_what_the_general_path_prints(
    capsys, monkeypatch, tmp_path_factory, collection, flags
):
    qrels, run = written(tmp_path_factory, collection, "small")
    fast, general = both_paths(capsys, monkeypatch, [*flags, str(qrels), str(run)])
    assert fast == general


@pytest.mark.parametrize("flags", FLAGS)
def test_trec_eval_suite_by_the_small_path(capsys, monkeypatch, flags):
    data = (SUITE / "results.test").read_bytes()
    assert read_small_run(data, "results.test") is not None  # this file takes the small path
    assert read_small_qrels((SUITE / "qrels.test").read_bytes()) is not None
    args = [*flags, str(SUITE / "qrels.test"), str(SUITE / "results.test")]
    fast, general = both_paths(capsys, monkeypatch, args)
    assert fast == general


@pytest.mark.parametrize(
    "text",
    [
        "qid Q0 docno rank score tag\nq1 Q0 d1 1 2.5 t\n",  # a header
        "# comment\nq1 Q0 d1 1 2.5 t\n",
        "q1 Q0 d1 1 2.5 t\r\n",  # CR
        "q1 Q0 dé 1 2.5 t\n",  # UTF-8 doc id
        "q1 Q0 d1 1 +2.5 t\n",  # Arrow reads no leading '+'
        "q1 Q0 d1 1 nan t\n",
        "q1 Q0 d1 1 1e999 t\n",  # not finite
        "q1 Q0 d1 1 1_0 t\n",  # Python's float reads it, the general reader does not
        "q1 Q0 d1 1 2.5 t\n\nq1 Q0 d2 2 1.5 t\n",  # a blank line
        "q1 Q0 d1 1 2.5 t extra\n",  # a seventh field
        "q1 Q0 d1 1 2.5\n",  # five fields
        "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.5 t\n",  # a doc twice
        "q1 Q0 d1 1 2.5.1 t\n",
        "q1 Q0 d1\x0b1 2.5 t\n",  # VT as a separator
        "q1 Q0 d1 1 2.5 t\rq1 Q0 d2 2 1.5 t\n",  # a lone CR
        "q1 Q0 d\x7f1 1 2.5 t\n",  # DEL
        "q1 Q0 d1 1 2.5 t\x0c",  # FF at the end
        "q1\x00Q0 d1 1 2.5 t\n",  # NUL
    ],
)
def test_irregular_runs_go_to_the_general_reader(capsys, monkeypatch, tmp_path, text):
    assert read_small_run(text.encode(), "run.txt") is None
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run.write_bytes(text.encode())
    fast, general = both_paths(capsys, monkeypatch, ["-q", str(qrels), str(run)])
    assert fast == general


def test_numbers_read_as_the_general_reader_reads_them():
    text = "".join(
        f"q1 Q0 d{i} {rank} {score} t\n"
        for i, (rank, score) in enumerate(
            [("1", "1."), ("2", ".5"), ("3", "-.5"), ("007", "1e+5"), ("5", "1E-5"),
             ("6", "-0"), ("7", "00.5"), ("8", "-1e-400"), ("9", "0.1"),
             ("10", "12345678901234567890.123456789")]
        )
    )  # fmt: skip
    got = read_small_run(text.encode(), "run.txt")
    assert got is not None
    assert got.score.tolist() == [
        1.0,
        0.5,
        -0.5,
        1e5,
        1e-5,
        -0.0,
        0.5,
        -0.0,
        0.1,
        1.2345678901234567e19,
    ]
    assert got.rank.tolist() == [1, 2, 3, 7, 5, 6, 7, 8, 9, 10]


def test_small_run_loads_neither_pandas_nor_pyarrow_nor_fractions():
    code = (
        "import sys\n"
        "from evaluation.__main__ import main\n"
        f"status = main(['-q', {str(SUITE / 'qrels.test')!r}, {str(SUITE / 'results.test')!r}])\n"
        "print(status, *(m in sys.modules for m in ('pandas', 'pyarrow', 'fractions')),"
        " file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    # nor fractions (with decimal, ~4 ms of a 0.15 s run): recall levels are read as
    # exact fractions by hand
    assert done.stderr.split() == ["0", "False", "False", "False"]


def test_large_run_loads_no_pandas_and_prints_what_the_general_path_prints(tmp_path):
    """A run past the small path's size (here: every file, the limit set to 0) is scored
    from the general readers' columns without importing pandas, printing what
    evaluate()'s frames print (the general path, pandas loaded)."""
    args = ["-q", "-m", "all_trec", str(SUITE / "qrels.test"), str(SUITE / "results.test")]
    code = (
        "import sys\n"
        "import evaluation.trec.small as small\n"
        "from evaluation.__main__ import main\n"
        "from evaluation.cli.scorer import Scorer\n"
        "small.SMALL_BYTES = 0\n"
        "if sys.argv[1] == 'general':\n"
        "    Scorer.score_columns = lambda self, path: None\n"
        f"status = main({args!r})\n"
        "print(status, *(m in sys.modules for m in ('pandas', 'pyarrow')), file=sys.stderr)\n"
    )
    done = {
        path: subprocess.run(
            [sys.executable, "-c", code, path], capture_output=True, text=True, cwd=ROOT, check=True
        )
        for path in ("columns", "general")
    }
    assert done["columns"].stderr.split() == ["0", "False", "True"]
    assert done["general"].stderr.split() == ["0", "True", "True"]
    assert done["columns"].stdout == done["general"].stdout
    assert "runid" in done["columns"].stdout and len(done["columns"].stdout.splitlines()) > 300


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
    """``python -m evaluation ARGS`` in a fresh process (no pyarrow loaded: it may fork)."""
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
    for flags in (["-m", "map", "-m", "P.5"], ["-q"], ["-c", "-m", "ndcg"]):
        one = _command("-j", "1", *flags, str(qrels), str(folder))
        two = _command("-j", "3", *flags, str(qrels), str(folder))
        assert one == two
        code, out, err = two
        assert code == 2 and out.count("runid                 \tall\t") == 15
        assert err.splitlines()[0] == f"{folder / 'c.txt'}:1: score 'abc' is not a number"
        assert "2 different tags in the run; its runid is the last line's, 'y'" in err
    one = _command("-j", "1", "-m", "nDCG10", str(qrels), str(folder))
    two = _command("-j", "2", "-m", "nDCG10", str(qrels), str(folder))
    assert one == two and two[:2] == (1, "") and "illegal measure 'nDCG10'" in two[2]


def test_workers_fork_only_without_arrow_and_never_more_than_runs(monkeypatch):
    import evaluation.cli.score as score

    assert score._jobs(8, 3) == 3 and score._jobs(0, 5) == 1 and score._jobs(None, 1) == 1
    monkeypatch.setattr(score.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert score._jobs(None, 100) == 2
    monkeypatch.setitem(sys.modules, "pyarrow", object())
    assert not score._can_fork()
    monkeypatch.delitem(sys.modules, "pyarrow")
    assert score._can_fork() == hasattr(os, "fork")


# ------------------------------------------------------- a large file parsed in pieces


def _run_lines(count: int, rank=lambda i: str(i + 1)) -> str:
    return "".join(
        f"q{i // 40} Q0 msmarco_passage_{i % 7:02d}_{i:09d} {rank(i)} {1000 - i % 40}.25 tag\n"
        for i in range(count)
    )


@pytest.mark.parametrize("piece", [97, 4096, 1 << 20])
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
    run = read_small_run(text.encode(), "run.txt")
    expected = [float(token) for token in tokens]  # Python's float: the nearest double
    assert run is not None
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


def test_gzip_small_on_disk_but_large_inside_takes_the_general_path(capsys, monkeypatch, tmp_path):
    import gzip

    text = _run_lines(2000)
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt.gz"
    qrels.write_text("q0 0 msmarco_passage_00_000000000 1\nq1 0 msmarco_passage_05_000000040 1\n")
    run.write_bytes(gzip.compress(text.encode()))
    seen = []
    real = small.read_small_run
    monkeypatch.setattr(small, "read_small_run", lambda *a: seen.append(1) or real(*a))
    monkeypatch.setattr(small, "SMALL_BYTES", len(text) - 1)  # the .gz is under, its text over
    assert run.stat().st_size < small.SMALL_BYTES
    code, out, _ = cli(capsys, ["-m", "map", str(qrels), str(run)])
    assert (code, seen) == (0, [])
    monkeypatch.setattr(small, "SMALL_BYTES", len(text) + 1)
    assert cli(capsys, ["-m", "map", str(qrels), str(run)])[1] == out
    assert seen == [1]


@pytest.mark.parametrize(
    ("tags", "distinct"),
    [
        (["run1", "run1", "run1"], 1),
        (["run1", "run2", "run1"], 2),
        (["ab", "abc", "ab"], 2),
        (["xa", "ya", "za"], 3),
    ],  # fmt: skip
)
def test_tags_counted_as_the_general_reader_counts_them(tags, distinct):
    from evaluation.trec import read_run

    text = "".join(f"q1 Q0 d{i} {i + 1} {9 - i} {tag}\n" for i, tag in enumerate(tags))
    small_run = read_small_run(text.encode(), "r.txt")
    assert small_run.warnings == read_run(text.encode(), "r.txt").warnings
    assert small_run.tag == tags[-1] and len(small_run.warnings) == (distinct > 1)
    if distinct > 1:
        assert small_run.warnings[0].startswith(f"r.txt: {distinct} different tags")


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(["a", "bb", "7", " ", "\n", "\t", "x y", "q1 Q0"]), max_size=24
    ),
    ncols=st.sampled_from([1, 2, 4, 6]),
)
def test_one_separator_files_split_as_the_general_field_finder_splits_them(pieces, ncols):
    """The usual file's fields (one separator byte between them) found from the separators'
    positions alone, as the finder for any gaps finds them (or both refuse the file)."""
    import numpy as np

    data = "".join(pieces).encode()
    raw = np.frombuffer(data, np.uint8)
    separator = raw <= 32
    if not data or separator[0] or np.any(separator[1:] & separator[:-1]):
        return  # not the one-separator shape
    fast = small._single_gap_fields(raw, separator, ncols)
    general = small._any_gap_fields(data, raw, separator, ncols)
    assert (fast is None) == (general is None)
    if fast is not None:
        assert fast.start.tolist() == general.start.tolist()
        assert fast.length.tolist() == general.length.tolist()
