"""rrl.trec: every way a run or qrels is held in Python gives the same TREC text."""

from __future__ import annotations

import gzip
import subprocess
import sys

import ir_measures
import pandas as pd
import pytest

from rrl.trec import qrels_text, run_gzip, run_text, write_run
from tests import ROOT

# ties at 0.5 (d2 and d10: byte order puts d2 first when descending), -0.0 ties 0.0
RUN = {"q2": {"d1": 3.0}, "q1": {"d10": 0.5, "d2": 0.5, "d3": 2, "z": 0.0, "a": -0.0}}
EXPECTED = (
    "q1 Q0 d3 1 2.0 bm25\n"
    "q1 Q0 d2 2 0.5 bm25\n"
    "q1 Q0 d10 3 0.5 bm25\n"
    "q1 Q0 z 4 0.0 bm25\n"
    "q1 Q0 a 5 -0.0 bm25\n"
    "q2 Q0 d1 1 3.0 bm25\n"
)


def triples(run=RUN):
    return [(q, d, s) for q, docs in run.items() for d, s in docs.items()]


def test_a_dict_is_written_in_trec_eval_order_with_ranks_and_the_tag():
    assert run_text(RUN, tag="bm25") == EXPECTED
    assert run_text({"q": {"d": 1}}) == "q Q0 d 1 1.0 run\n"  # the default tag


def test_scores_are_written_so_they_read_back_exactly():
    score = 0.1 + 0.2
    line = run_text({"q": {"d": score}})
    assert float(line.split()[4]) == score


@pytest.mark.parametrize(
    "columns",
    [
        ("query_id", "doc_id", "score"),  # ir_measures
        ("qid", "docno", "score"),  # PyTerrier
        ("q_id", "doc_id", "score"),  # ranx's to_dataframe()
        ("need_id", "doc_id", "score"),  # the engine's own
    ],
)
def test_dataframes_named_as_each_library_names_them(columns):
    frame = pd.DataFrame(triples(), columns=list(columns))
    assert run_text(frame, tag="bm25") == EXPECTED


def test_a_pyterrier_frame_its_rank_ignored_and_its_tag_column_used():
    frame = pd.DataFrame(triples(), columns=["qid", "docno", "score"])
    frame["rank"] = 99  # wrong on purpose: the scores decide
    frame["docid"] = range(len(frame))  # PyTerrier's internal ids: not the doc column
    frame["name"] = "bm25"
    assert run_text(frame) == EXPECTED


def test_a_ranx_run_and_scored_docs():
    ranx = pytest.importorskip("ranx")
    assert run_text(ranx.Run(RUN, name="bm25")) == EXPECTED
    scored = [ir_measures.ScoredDoc(q, d, s) for q, d, s in triples()]
    assert run_text(scored, tag="bm25") == EXPECTED
    assert run_text(iter(triples()), tag="bm25") == EXPECTED  # plain 3-tuples, a generator


def test_a_file_is_kept_as_it_is_and_gzipped_once(tmp_path):
    plain = tmp_path / "run.txt"
    plain.write_text("q1 Q0 d1 7 1.5 mine\n")
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert run_text(plain) == run_text(str(packed)) == "q1 Q0 d1 7 1.5 mine\n"
    assert gzip.decompress(run_gzip(plain)) == plain.read_bytes()
    assert run_gzip(packed) == packed.read_bytes()
    with pytest.raises(ValueError, match="keeps its own tags"):
        run_gzip(plain, tag="other")
    with pytest.raises(FileNotFoundError, match="no such file: .*missing.txt"):
        run_text(tmp_path / "missing.txt")


def test_gzip_bytes_are_reproducible_and_written_to_a_file(tmp_path):
    data = run_gzip(RUN, tag="bm25")
    assert data == run_gzip(RUN, tag="bm25")  # no timestamp in the header
    assert gzip.decompress(data).decode() == EXPECTED
    path = write_run(RUN, tmp_path / "out.gz", tag="bm25")
    assert path.read_bytes() == data


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (
            pd.DataFrame({"qid": ["q"], "doc": ["d"], "score": [1.0]}),
            "no document column: expected one of doc_id, docno \\(its columns: qid, doc, score\\)",
        ),
        (pd.DataFrame({"qid": ["q"], "docno": ["d"], "rank": [1]}), "no score column"),
        (
            pd.DataFrame({"docno": ["d"], "score": [1.0]}),
            "no query column: expected one of query_id, qid, need_id, q_id",
        ),
        (
            pd.DataFrame({"qid": ["q", "q"], "docno": ["d", "d"], "score": [1, 2]}),
            "DataFrame row 1: document 'd' twice for query 'q'",
        ),
        (
            pd.DataFrame(
                {"qid": ["q", "q"], "docno": ["a", "b"], "score": [1, 2], "run": ["x", "y"]}
            ),
            "'run' column holds 2 runs \\('x', 'y'\\)",
        ),
        ({"q": {"d": float("nan")}}, r"run\['q'\]\['d'\]: the score nan is not finite"),
        ({"q": {"d": "high"}}, "the score 'high' is not a number"),
        ({"q": {"a doc": 1}}, "the document id 'a doc' holds whitespace"),
        ({"": {"d": 1}}, "the query id '' is empty"),
        ({"#q": {"d": 1}}, "starts with '#'"),
        ({"q": [("d", 1)]}, r"run\['q'\] is a list: expected a \{doc_id: score\} mapping"),
        ({}, "the run \\(dict\\) is empty"),
        ([("q", "d")], "run item 1 is a tuple: expected an object with query_id, doc_id, score"),
    ],
)
def test_bad_runs_are_refused_naming_the_row(run, message):
    with pytest.raises((ValueError, TypeError), match=message):
        run_text(run)


def test_what_is_no_run_at_all_is_named():
    with pytest.raises(TypeError, match="cannot read a run from a int"):
        run_text(42)
    with pytest.raises(ValueError, match="the tag 'my run' holds whitespace"):
        run_text(RUN, tag="my run")
    ranx = pytest.importorskip("ranx")
    with pytest.raises(TypeError, match="a ranx Qrels is not a run"):
        run_text(ranx.Qrels({"q": {"d": 1}}))


def test_qrels_from_each_input():
    expected = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n"
    qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1}}
    rows = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    assert qrels_text(qrels) == expected
    for names in (["query_id", "doc_id", "relevance"], ["qid", "docno", "label"]):
        assert qrels_text(pd.DataFrame(rows, columns=names)) == expected
    assert qrels_text(pd.DataFrame(rows, columns=["q_id", "doc_id", "score"])) == expected
    assert qrels_text([ir_measures.Qrel(q, d, r) for q, d, r in rows]) == expected
    assert qrels_text([ir_measures.Qrel("q", "d", 1, "Q0")]) == "q Q0 d 1\n"  # its iteration
    ranx = pytest.importorskip("ranx")
    assert qrels_text(ranx.Qrels(qrels)) == expected


def test_bad_qrels_are_refused():
    with pytest.raises(
        ValueError, match=r"qrels\['q'\]\['d'\]: the relevance 0.5 is not an integer"
    ):
        qrels_text({"q": {"d": 0.5}})
    with pytest.raises(
        ValueError, match="no relevance column: expected one of relevance, label, score"
    ):
        qrels_text(pd.DataFrame({"qid": ["q"], "docno": ["d"]}))
    with pytest.raises(ValueError, match="judged twice"):
        qrels_text([("q", "d", 1), ("q", "d", 0)])
    with pytest.raises(ValueError, match="the qrels are empty"):
        qrels_text({})
    assert qrels_text({"q": {"d": 1.0}}) == "q 0 d 1\n"  # an integral float is an integer


def test_importing_the_client_imports_no_pandas_numpy_or_django():
    code = (
        "import sys, rrl\n"
        "rrl.run_text({'q': {'d': 1}})\n"
        "heavy = {'pandas', 'numpy', 'django', 'evaluation', 'ranx', 'pyarrow'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
