"""The numpy-free path (``evaluation.trec.plain``, ``evaluation.measures.plain``) against
the numpy paths, byte for byte: it answers the regular files it takes with the same
output, leaves the others (and the measures and flags it does not compute) to them, and
imports no numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evaluation.cli.score as score
import evaluation.measures.plain as plain_measures
import evaluation.trec.plain as plain
import evaluation.trec.small as small
from evaluation.__main__ import main
from evaluation.measures import catalog, definitions
from evaluation.measures.plain import OFFICIAL, PLAIN_MEASURES, plain_requests
from evaluation.trec.plain import read_plain_qrels, read_plain_run
from tests.evaluation.texts import ids, numbers, written

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "fixtures" / "trec_eval-suite"

# flags the numpy-free path answers
FLAGS = [
    [],
    ["-q"],
    ["-q", "-m", "official", "-m", "recall"],
    ["-q", "-M", "3", "-m", "official"],
    ["-q", "-l", "2"],
    ["-q", "-m", "P.1,3,20", "-m", "iprec_at_recall..25,.5,1", "-m", "recall.2"],
    ["-m", "map", "-m", "gm_map", "-m", "bpref", "-m", "P", "-m", "P.7"],
]


def outputs(capsys, monkeypatch, args: list[str]) -> dict[str, tuple[int, str, str]]:
    """The command's (status, stdout, stderr) by each path: the numpy-free one, the
    numpy small-file one, the general one (pandas)."""
    done = {}
    with monkeypatch.context() as patch:
        for path in ("plain", "small", "general"):
            if path == "small":
                patch.setattr(plain, "PLAIN_BYTES", -1)
            if path == "general":
                patch.setattr(small, "SMALL_BYTES", -1)
            code = main(args)
            out, err = capsys.readouterr()
            done[path] = (code, out, err)
    return done


def took_plain(args: list[str]) -> bool:
    """Whether the numpy-free path answers these arguments."""
    parsed = score._parser().parse_args(args)
    return score._plain_result(parsed, score.expand_runs(parsed.run)) is not None


# ---------------------------------------------------------------- generated inputs


@st.composite
def collections(draw):
    """Regular qrels and run text: needs out of order, in several blocks and unjudged,
    scores falling (with ties) or not, ranks counting or not, negative and graded
    judgments, two tags, tabs, doubled blanks, an unterminated last line."""
    needs = draw(st.lists(ids, min_size=1, max_size=5, unique=True))
    docs = draw(st.lists(ids, min_size=1, max_size=25, unique=True))
    qrels, run = [], []
    for need in needs:
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        if need == needs[0] and not judged:
            judged = [docs[0]]  # one need at least is judged and run
        for doc in judged:
            qrels.append(f"{need} 0 {doc} {draw(st.sampled_from(['-1', '0', '1', '2', '3']))}")
        if draw(st.booleans()) or need == needs[0]:
            chosen = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
            run += [(need, doc) for doc in chosen or [docs[0]]]
    for need in draw(st.lists(ids, max_size=2)):  # needs without judgments
        run.append((need, draw(st.sampled_from(docs))))
    run = list(dict.fromkeys(run))
    if draw(st.booleans()):
        run = draw(st.permutations(run))
    falling = draw(st.booleans())  # scores down the file, with ties, ranks 1, 2, 3 ...
    ties = draw(st.integers(1, 4))
    sep = draw(st.sampled_from([" ", "\t", "  ", " \t"]))
    tags = draw(st.sampled_from([["t"], ["t", "u"]]))
    lines, seen = [], {}
    for i, (need, doc) in enumerate(run):
        seen[need] = seen.get(need, 0) + 1
        if falling:
            rank, value = str(seen[need]), str(-(i // ties))
        else:
            rank, value = draw(numbers), draw(numbers)
        fields = [need, "Q0", doc, rank, value, draw(st.sampled_from(tags))]
        lines.append(sep.join(fields))
    end = draw(st.sampled_from(["\n", ""]))
    return "\n".join(qrels) + "\n", "\n".join(lines) + end


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(collections(), st.sampled_from(FLAGS))
def test_plain_path_prints_what_the_numpy_paths_print(
    capsys, monkeypatch, tmp_path_factory, collection, flags
):
    qrels, run = written(tmp_path_factory, collection, "plain")
    args = [*flags, str(qrels), str(run)]
    assert took_plain(args)  # regular files, measures it computes: it answers
    done = outputs(capsys, monkeypatch, args)
    assert done["plain"] == done["small"] == done["general"]


@pytest.mark.parametrize("flags", FLAGS)
def test_trec_eval_suite_by_the_plain_path(capsys, monkeypatch, flags):
    args = [*flags, str(SUITE / "qrels.test"), str(SUITE / "results.test")]
    assert took_plain(args)  # its padded scores ('\t  2.129133') included
    done = outputs(capsys, monkeypatch, args)
    assert done["plain"] == done["small"] == done["general"]
    assert done["plain"][0] == 0 and "\tall\t" in done["plain"][1]


def test_rank_column_disagreeing_and_ties_as_the_numpy_paths_have_them(
    capsys, monkeypatch, tmp_path
):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 c 1\nq2 0 x 1\n")
    cases = {
        "ties": "q1 Q0 a 1 2 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 2 t\nq1 Q0 d 4 1 t\n",
        "rising scores": "q1 Q0 a 1 1 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 3 t\n",
        "ranks against the scores": "q1 Q0 a 2 3 t\nq1 Q0 b 1 2 t\nq1 Q0 c 3 1 t\n",
        "a need in two blocks": "q1 Q0 a 1 3 t\nq2 Q0 x 1 9 t\nq1 Q0 c 2 2 t\nzz Q0 a 1 1 u\n",
    }
    warnings = {}
    for name, text in cases.items():
        run = tmp_path / f"{name}.txt"
        run.write_text(text)
        args = ["-q", "-m", "official", str(qrels), str(run)]
        assert took_plain(args), name
        done = outputs(capsys, monkeypatch, args)
        assert done["plain"] == done["small"] == done["general"], name
        warnings[name] = done["plain"][2]
    # the warnings are there to agree on
    assert "rank column disagrees" in warnings["ranks against the scores"]
    assert "rank column" not in warnings["ties"] + warnings["a need in two blocks"]
    assert "2 different tags" in warnings["a need in two blocks"]
    assert "without judgments, ignored: zz" in warnings["a need in two blocks"]


@pytest.mark.parametrize(
    "text",
    [
        "qid Q0 docno rank score tag\nq1 Q0 d1 1 2.5 t\n",  # a header
        "# comment\nq1 Q0 d1 1 2.5 t\n",
        "q1 Q0 d1 1 2.5 t\r\n",  # CR
        "q1 Q0 dé 1 2.5 t\n",  # UTF-8 doc id
        "q1 Q0 d1 1 +2.5 t\n",  # the general reader reads no leading '+'
        "q1 Q0 d1 1 nan t\n",
        "q1 Q0 d1 1 inf t\n",
        "q1 Q0 d1 1 1e999 t\n",  # not finite
        "q1 Q0 d1 1 1_0 t\n",  # Python's float reads it, the general reader does not
        "q1 Q0 d1 1_0 1 t\n",
        "q1 Q0 d1 1 2.5 t\n\nq1 Q0 d2 2 1.5 t\n",  # a blank line
        " q1 Q0 d1 1 2.5 t\n",  # a blank before the first field
        "q1 Q0 d1 1 2.5 t \n",  # after the last
        "q1 Q0 d1 1 2.5 t extra\n",  # a seventh field
        "q1 Q0 d1 1 2.5\n",  # five fields
        "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t x\nq1 Q0 d3 3\n",  # 7 + 5 fields
        "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.5 t\n",  # a doc twice
        "q1 Q0 d1 1 2.5.1 t\n",
        "q1 Q0 d1 x 2.5 t\n",  # a rank that is no number
        f"q1 Q0 d{'9' * 9_000} 1 2.5 t\n",  # a line near the general reader's limit
        f"q1 Q0 d1 1 1.{'5' * 50} t\n",  # a long score
    ],
)
def test_irregular_runs_go_to_the_numpy_paths(capsys, monkeypatch, tmp_path, text):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_bytes(text.encode())
    assert read_plain_run(text.encode(), "run.txt") is None
    done = outputs(capsys, monkeypatch, ["-q", str(qrels), str(run)])
    assert done["plain"] == done["general"]


@pytest.mark.parametrize(
    "text",
    ["q1 0 d1 1\nq1 0 d1 2\n", "q1 0 d1 x\n", "q1 0 d1 1-2\n", "q1 0 d1\n", "q1  0 d1 1 1\n",
     "q1 0 d1 1234567890123456789\n", "q1 0 d1 1\n\n"],
)  # fmt: skip
def test_irregular_qrels_go_to_the_numpy_paths(capsys, monkeypatch, tmp_path, text):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(text)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.5 t\n")
    assert read_plain_qrels(text.encode()) is None
    done = outputs(capsys, monkeypatch, ["-q", str(qrels), str(run)])
    assert done["plain"] == done["general"]


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "ndcg_cut.10"],  # a measure it does not compute
        ["-m", "all_trec"],
        ["-m", "nDCG@10"],  # a catalog name
        ["-m", "P.0"],  # refused, with the catalog's message
        ["-m", "P.5,5"],
        ["-m", "P.+5"],
        ["-m", "P."],
        ["-m", "iprec_at_recall.0.1,.10"],
        ["-m", "official.5"],
        ["-c"],
        ["-l", "0"],
        ["-M", "0"],
        ["--interpolation", "trec_eval-10"],
        ["--format", "csv"],
    ],
)
def test_what_it_does_not_answer_the_numpy_paths_do(capsys, monkeypatch, args):
    args = [*args, str(SUITE / "qrels.test"), str(SUITE / "results.test")]
    assert not took_plain(args)
    done = outputs(capsys, monkeypatch, args)
    assert done["plain"] == done["general"]


def test_its_measures_are_the_catalogs_in_the_catalogs_order():
    names = [m.name for m in catalog.MEASURES if m.name in PLAIN_MEASURES]
    assert names == list(PLAIN_MEASURES)
    for m in catalog.MEASURES:
        if m.name in PLAIN_MEASURES:
            assert PLAIN_MEASURES[m.name] == (m.kind, m.defaults), m.name
    assert OFFICIAL == catalog.OFFICIAL
    assert plain_measures.MIN_GEO_MEAN == definitions.MIN_GEO_MEAN  # gm_map's floor


def test_requests_read_as_the_catalogs_parser_reads_them():
    got = plain_requests(["P.10,5", "P.7", "map", "official", "iprec_at_recall..5,.25"])
    names = [name for name, _ in got]
    assert names == list(OFFICIAL)
    assert dict(got)["P"] == [5, 10]  # the first parameters given win, sorted
    assert dict(got)["iprec_at_recall"] == [(".25", 0.25), (".5", 0.5)]
    assert plain_requests(None) == plain_requests(["official"])
    assert plain_requests(["recall"]) == [("recall", [5, 10, 15, 20, 30, 100, 200, 500, 1000])]


def test_a_small_run_imports_no_numpy_and_a_measure_it_lacks_does():
    qrels, results = str(SUITE / "qrels.test"), str(SUITE / "results.test")
    code = (
        "import sys\n"
        "from evaluation.__main__ import main\n"
        "status = main(sys.argv[1:])\n"
        "print(status, 'numpy' in sys.modules, file=sys.stderr)\n"
    )
    for measure, numpy in (("official", "False"), ("ndcg_cut.10", "True")):
        done = subprocess.run(
            [sys.executable, "-c", code, "-q", "-m", measure, qrels, results],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        assert done.stderr.split() == ["0", numpy]
        assert done.stdout.count("\tall\t") >= 1 and done.stdout.count("\t303\t") >= 1
