"""The engine reads every way a run or qrels is held in Python, and scores it exactly as
it scores the file: each input type, every measure (``all_trec``), equal to the last bit."""

from __future__ import annotations

import gzip
from pathlib import Path

import ir_measures
import pandas as pd
import pytest

import evaluation
from evaluation.measures import evaluate
from evaluation.trec import TrecFormatError, read_qrels, read_run
from evaluation.trec.inputs import as_qrels, as_run
from tests import FIXTURES

SEED = FIXTURES / "seed-library"
MEASURES = ["all_trec"]

# the seed's system A with ties added (at 0.5, and -0.0 against 0.0), lines out of
# trec_eval's order and ranks that disagree with the scores: what the file's reading
# must order exactly as the in-memory inputs are ordered
TIES = (
    "cs-foundations Q0 tie-b 1 0.5 tied\n"
    "cs-foundations Q0 tie-a 2 0.5 tied\n"
    "cs-foundations Q0 cs-foundations-rel-13 3 0.5 tied\n"
    "cs-foundations Q0 zero 4 -0.0 tied\n"
    "cs-foundations Q0 cs-foundations-rel-14 5 0.0 tied\n"
    "cs-foundations Q0 thirds 6 0.30000000000000004 tied\n"
)


@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "run.txt"
    path.write_text((SEED / "run-A.txt").read_text() + TIES)
    return path


@pytest.fixture(scope="module")
def expected(run_file):
    qrels = read_qrels(SEED / "qrels.txt")
    return evaluate(qrels, read_run(run_file), MEASURES, complete=True)


def held_in_python(run_file: Path):
    frame = read_run(run_file).frame
    rows = list(zip(frame.need_id.astype(str), frame.doc_id, frame.score, strict=True))
    nested: dict[str, dict[str, float]] = {}
    for need, doc, score in rows:
        nested.setdefault(need, {})[doc] = score
    return rows, nested


def same_scores(result, expected) -> None:
    pd.testing.assert_frame_equal(result.per_need, expected.per_need, check_exact=True)
    assert result.summary == expected.summary


def run_inputs(run_file: Path, tmp_path: Path) -> dict[str, object]:
    rows, nested = held_in_python(run_file)
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(run_file.read_bytes()))
    inputs = {
        "path": str(run_file),
        "gzip path": packed,
        "DataFrame (ir_measures)": pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]),
        "DataFrame (PyTerrier)": pd.DataFrame(rows, columns=["qid", "docno", "score"]).assign(
            rank=1, name="A"
        ),
        "dict": nested,
        "ScoredDoc": [ir_measures.ScoredDoc(*row) for row in rows],
    }
    ranx = pytest.importorskip("ranx")
    inputs["ranx Run"] = ranx.Run(nested, name="A")
    return inputs


def test_each_run_input_scores_as_the_file(run_file, expected, tmp_path):
    qrels = read_qrels(SEED / "qrels.txt")
    for name, run in run_inputs(run_file, tmp_path).items():
        result = evaluate(qrels, run, MEASURES, complete=True)
        try:
            same_scores(result, expected)
            if not name.endswith("path"):  # written in trec_eval's order, ranks 1..n
                assert result.warnings == [], result.warnings
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error


def test_each_qrels_input_scores_as_the_file(run_file, expected):
    frame = read_qrels(SEED / "qrels.txt")
    rows = list(zip(frame.need_id, frame.doc_id, frame.relevance, strict=True))
    nested: dict[str, dict[str, int]] = {}
    for need, doc, relevance in rows:
        nested.setdefault(need, {})[doc] = relevance
    inputs = {
        "path": SEED / "qrels.txt",
        "DataFrame": pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]),
        "dict": nested,
        "Qrel": [ir_measures.Qrel(*row) for row in rows],
    }
    run = read_run(run_file)
    for name, qrels in inputs.items():
        try:
            same_scores(evaluate(qrels, run, MEASURES, complete=True), expected)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error


def test_the_package_evaluates_too(run_file, expected):
    _, nested = held_in_python(run_file)
    same_scores(evaluation.evaluate(SEED / "qrels.txt", nested, MEASURES, complete=True), expected)


def test_a_run_held_in_python_carries_its_tag():
    assert as_run({"q": {"d": 1.0}}, tag="bm25").tag == "bm25"
    assert as_run({"q": {"d": 1.0}}).tag == "run"
    frame = pd.DataFrame({"qid": ["q"], "docno": ["d"], "score": [1.0], "run": ["mine"]})
    assert as_run(frame).tag == "mine"
    assert evaluate({"q": {"d": 1}}, frame, ["map"]).run_id == "mine"


def test_the_engines_own_frames_pass_as_they_are():
    qrels = read_qrels(b"q 0 d 1\n")
    assert as_qrels(qrels) is qrels
    run = read_run(b"q Q0 d 1 1 x\n")
    assert as_run(run) is run


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="no score column"):
        as_run(pd.DataFrame({"qid": ["q"], "docno": ["d"]}))
    with pytest.raises(TypeError, match="cannot read a run from a float"):
        as_run(1.5)
    with pytest.raises(TypeError, match="cannot read qrels from a int"):
        as_qrels(3)
    with pytest.raises(TrecFormatError, match="run.txt:1:"):
        as_run(b"q Q0 d 1 high x\n", name="run.txt")
