"""Work split over two threads (``threads.on_two_threads``: doc-id hashes, judged-candidate
lookups; the layout check of the next piece while Arrow parses this one) prints what one
thread prints, and an error on the second thread is raised on the caller's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evaluation.measures.ranking as ranking
import evaluation.trec.parsing as parsing
import evaluation.trec.threads as threads
from evaluation.__main__ import main
from tests import FIXTURES
from tests.evaluation.texts import collections

SUITE = FIXTURES / "trec_eval-suite"

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


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(collections(), st.sampled_from(FLAGS), st.integers(1, 7))
def test_work_on_two_threads_prints_what_one_thread_prints(
    capsys, monkeypatch, tmp_path_factory, collection, flags, slice_lines
):
    """Generated files scored once as they come and once
    cut into pieces of a few lines (each piece a chunk of every column, the next piece's
    check on a thread) with every split taken from one row up on two CPUs (the measures
    computed two at a time included)."""
    qrels_text, run_text = collection
    folder = tmp_path_factory.mktemp("threads")
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    args = [*flags, str(qrels), str(run)]
    with monkeypatch.context() as patch:
        patch.setattr(threads, "THREAD_ROWS", 1 << 60)  # nothing split
        alone = cli(capsys, args)
        patch.setattr(threads, "THREAD_ROWS", 1)
        patch.setattr(threads, "_cpus", lambda: 2)
        patch.setattr(parsing, "PARSE_PIECE", 40 * slice_lines)
        patch.setattr(ranking, "RANK_CHECK_SLICE", slice_lines)
        split = cli(capsys, args)
    assert split == alone


def test_an_error_on_the_second_thread_is_raised_on_the_callers(monkeypatch):
    monkeypatch.setattr(threads, "_cpus", lambda: 2)
    done = []

    def work(items: list[int]) -> None:
        if 3 in items:
            raise RuntimeError("second half")
        done.extend(items)

    with pytest.raises(RuntimeError, match="second half"):
        threads.on_two_threads(work, [0, 1, 2, 3], [threads.THREAD_ROWS] * 4)
    assert done == [0, 1]  # the caller's half ran, and the second was waited for
    failing = threads.in_background(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing()
    assert threads.in_background(lambda: 42)() == 42


def test_a_bad_measure_fails_the_same_when_measures_go_two_at_a_time(capsys, monkeypatch):
    """A refused parameter (``P.0``) raised on a measure thread stops the command with
    the message it gives alone, and the other measures' thread is waited for."""
    args = [
        "-m",
        "map",
        "-m",
        "P.0",
        "-m",
        "bpref",
        str(SUITE / "qrels.test"),
        str(SUITE / "results.test"),
    ]
    with monkeypatch.context() as patch:
        patch.setattr(threads, "THREAD_ROWS", 1 << 60)
        alone = cli(capsys, args)
        patch.setattr(threads, "THREAD_ROWS", 1)
        patch.setattr(threads, "_cpus", lambda: 2)
        split = cli(capsys, args)
    assert split == alone
    assert alone[0] == 1 and "cutoffs must be positive" in alone[2] and alone[1] == ""
