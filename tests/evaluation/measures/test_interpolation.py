"""Interpolated precision where trec_eval's loop (m_iprec_at_recall.c, m_11pt_avg.c)
reads the ranking its own way: a negative ``-l`` and ``-M 0``.

Every expected value is trec_eval 10.0's printed output, from the command in the
comment above it (files as written by the test), taken from /tmp/te/trec_eval.
"""

from __future__ import annotations

from evaluation.__main__ import main

# three relevant documents (d1, d3, d5), one judged non-relevant (d2), one judged
# negative (d4); the run retrieves d9, d8 and d7, outside the qrels, around them
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n1 0 d4 -1\n1 0 d5 1\n"
RUN = (
    "1 Q0 d9 1 9 t\n1 Q0 d1 2 8 t\n1 Q0 d4 3 7 t\n1 Q0 d2 4 6 t\n"
    "1 Q0 d8 5 5 t\n1 Q0 d3 6 4 t\n1 Q0 d7 7 3 t\n"
)
LEVELS = ["0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00"]


def printed(tmp_path, capsys, *flags: str) -> list[tuple[str, str, str]]:
    """The printed (measure, need, value) lines, in trec_eval-10 mode."""
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    args = ["--interpolation", "trec_eval-10", *flags, str(tmp_path / "q"), str(tmp_path / "r")]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    return [tuple(field.strip() for field in line.split("\t")) for line in lines]


def test_a_negative_level_counts_hits_down_from_the_judged_ones(tmp_path, capsys):
    # /tmp/te/trec_eval -l -1 -m iprec_at_recall -m 11pt_avg q r, and the same with -l -2:
    # the hits are d9 d1 d4 d2 d8 d3 d7 (every document), num_rel_ret 3 (d1, d2, d3)
    expected = [("iprec_at_recall_" + level, "all", "0.4286") for level in LEVELS[:9]]
    expected += [("iprec_at_recall_0.90", "all", "0.0000")]
    expected += [("iprec_at_recall_1.00", "all", "0.0000"), ("11pt_avg", "all", "0.3506")]
    for level in ("-1", "-2"):
        lines = printed(tmp_path, capsys, "-l", level, "-m", "iprec_at_recall", "-m", "11pt_avg")
        assert lines == expected


def test_a_non_pool_document_above_the_only_relevant_one(tmp_path, capsys):
    # qrels "1 0 d1 1 / 1 0 d2 0", run d9 d1 d2:
    # /tmp/te/trec_eval -l -1 -m iprec_at_recall.1 q r -> 0.6667
    (tmp_path / "q").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "r").write_text("1 Q0 d9 1 3 t\n1 Q0 d1 2 2 t\n1 Q0 d2 3 1 t\n")
    flags = ["--interpolation", "trec_eval-10", "-l", "-1", "-m", "iprec_at_recall.1"]
    assert main([*flags, str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.split() == ["iprec_at_recall_1.00", "all", "0.6667"]


def test_nothing_retrieved_gives_nan_where_no_relevant_document_is_needed(tmp_path, capsys):
    # /tmp/te/trec_eval -q -M 0 -m iprec_at_recall -m 11pt_avg q r: precision 0 / 0 at
    # the levels lround(level * 3) puts at 0 relevant documents (0.0, 0.1), and so 11pt_avg
    lines = printed(tmp_path, capsys, "-q", "-M", "0", "-m", "iprec_at_recall", "-m", "11pt_avg")
    expected = []
    for need in ("1", "all"):
        expected += [("iprec_at_recall_0.00", need, "-nan"), ("iprec_at_recall_0.10", need, "-nan")]
        expected += [("iprec_at_recall_" + level, need, "0.0000") for level in LEVELS[2:]]
        expected += [("11pt_avg", need, "-nan")]
    assert lines == expected
