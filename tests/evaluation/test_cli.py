"""``python -m evaluation``: trec_eval's flags and output, machine formats, bad files."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.__main__ import main

SUITE = Path(__file__).resolve().parent.parent / "fixtures" / "trec_eval-suite"
SEED = Path(__file__).resolve().parent.parent / "fixtures" / "seed-library"


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


@pytest.mark.parametrize("large", [True, False])
def test_huge_pages_off_while_scoring_large_files_and_restored_after(
    monkeypatch, capsys, tmp_path, large
):
    """Large inputs are scored without numpy's huge-page madvise (compaction stalls);
    small plain files keep it (fewer page faults); a gzipped run counts as large."""
    import gzip

    import numpy._core.multiarray as multiarray

    import evaluation.cli.scorer as scorer
    import evaluation.measures.small as columns
    import evaluation.trec.plain as plain
    import evaluation.trec.small as small

    seen = []

    def spying(real):
        def spy(*args, **kwargs):
            seen.append(multiarray._get_madvise_hugepage())
            return real(*args, **kwargs)

        return spy

    monkeypatch.setattr(plain, "PLAIN_BYTES", -1)  # numpy's paths (the numpy-free one has none)
    monkeypatch.setattr(scorer, "evaluate", spying(scorer.evaluate))  # the small path's
    monkeypatch.setattr(columns, "score_columns", spying(columns.score_columns))  # a large file's
    if large:
        monkeypatch.setattr(small, "SMALL_BYTES", 10)
    gzipped = tmp_path / "results.test.gz"
    gzipped.write_bytes(gzip.compress((SUITE / "results.test").read_bytes()))
    before = multiarray._set_madvise_hugepage(True)
    try:
        qrels, results = str(SUITE / "qrels.test"), str(SUITE / "results.test")
        code, out, _ = run(capsys, "-m", "map", qrels, results)
        assert multiarray._get_madvise_hugepage() is True
        code_gz, out_gz, _ = run(capsys, "-m", "map", qrels, str(gzipped))
        assert multiarray._get_madvise_hugepage() is True
    finally:
        multiarray._set_madvise_hugepage(before)
    assert code == code_gz == 0 and out == out_gz == "map                   \tall\t0.1785\n"
    assert seen == [not large, False]


def _mmapped_bytes() -> int:
    """glibc's count of bytes it serves with mmap (mallinfo2().hblkhd)."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
            ).split()
        ]

    mallinfo2 = ctypes.CDLL(None).mallinfo2
    mallinfo2.restype = MallInfo2
    return mallinfo2().hblkhd


def test_freed_memory_reused_while_scoring_and_mmap_restored_after(monkeypatch, capsys):
    """While the command scores, a large array comes from glibc's heap (no fresh
    mmap, so freed pages are reused without new page faults); afterwards glibc
    maps large arrays again."""
    import numpy as np

    import evaluation.cli.scorer as cli
    import evaluation.trec.plain as plain

    seen = []
    real_evaluate = cli.evaluate

    def spy(*args, **kwargs):
        before = _mmapped_bytes()
        block = np.ones(8 << 20)  # 64 MB
        seen.append(_mmapped_bytes() - before)
        del block
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(cli, "evaluate", spy)
    monkeypatch.setattr(plain, "PLAIN_BYTES", -1)  # the numpy paths (the numpy-free one has none)
    code, out, _ = run(capsys, "-m", "map", str(SUITE / "qrels.test"), str(SUITE / "results.test"))
    assert code == 0 and out == "map                   \tall\t0.1785\n"
    assert seen == [0]
    before = _mmapped_bytes()
    block = np.ones(16 << 20)  # 128 MB: more than the heap kept free
    assert _mmapped_bytes() - before >= 128 << 20
    del block


def _arenas_after(code: str) -> int:
    """How many malloc arenas glibc lists (malloc_stats) after ``code`` runs in a fresh
    process, where no thread has allocated before."""
    script = f"import ctypes, sys\n{code}\nsys.stdout.flush()\nctypes.CDLL(None).malloc_stats()\n"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def test_arrows_threads_allocate_from_the_main_arena_while_the_command_scores():
    """Arrow's parsing threads take arenas of their own (whose freed memory the main
    thread cannot reuse) when a run is read outside the command; while the command
    scores, every thread allocates from the one arena."""
    qrels, results = str(SUITE / "qrels.test"), str(SUITE / "results.test")
    outside = (
        "from evaluation.trec import read_qrels, read_run\n"
        f"read_qrels({qrels!r})\nread_run({results!r})"
    )
    assert _arenas_after(outside) > 1  # the control: the threads do take arenas
    command = (
        "import evaluation.trec.small as small\n"
        "small.SMALL_BYTES = 10  # the general path: Arrow reads both files\n"
        "from evaluation.__main__ import main\n"
        f"assert main(['-m', 'map', {qrels!r}, {results!r}]) == 0"
    )
    assert _arenas_after(command) == 1


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
