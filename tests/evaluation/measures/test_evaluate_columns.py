"""``evaluate`` given a :class:`~evaluation.trec.Run` (as the command line and the
scoring worker read it) against ``evaluate`` given the run's frame: the same evaluation,
value for value, on generated inputs, and the same errors."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evaluation.measures.evaluation import NeedWithoutRun, evaluate, relevant_ranks
from evaluation.trec.columnar import needs_present
from evaluation.trec.readers import read_qrels, read_run
from tests.evaluation.texts import collections

# evaluate's keyword arguments, as the command line's flags set them
OPTIONS = [
    {},
    {"complete": True},
    {"measures": ["all_trec"]},
    {"measures": ["all_trec"], "complete": True, "relevance_level": 2},
    {"measures": ["all_trec"], "max_depth": 3},
    {"measures": ["all_trec"], "complete": True, "interpolation": "trec_eval-9"},
    {"measures": ["all_trec"], "interpolation": "trec_eval-10"},
    {"measures": ["nDCG@10", "RR@10", "Judged@5", "relstring"], "complete": True},
]


def _outcome(qrels, reader, path, options):
    """(the evaluation's parts, None) or (None, the error's type and message), the run
    read by ``reader``."""
    try:
        result = evaluate(qrels, reader(path), **options)
    except (NeedWithoutRun, ValueError) as error:  # TrecFormatError is a ValueError
        return None, (type(error), str(error))
    parts = {
        "summary": result.summary,
        "run_id": result.run_id,
        "warnings": result.warnings,
        "text": result.to_trec_eval(per_need=True),
        "ranks": relevant_ranks(result.ranking),
    }
    return (result.per_need, parts), None


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(collections(), st.sampled_from(OPTIONS))
def test_a_run_evaluates_as_its_frame_does(tmp_path_factory, collection, options):
    folder = tmp_path_factory.mktemp("columns")
    (folder / "qrels.txt").write_text(collection[0])
    (folder / "run.txt").write_text(collection[1])
    assume(collection[0].strip())  # no judgments at all: read_qrels refuses the file
    qrels = read_qrels(folder / "qrels.txt")
    run = read_run(folder / "run.txt")
    by_run, run_error = _outcome(qrels, lambda path: read_run(path), folder / "run.txt", options)
    by_frame, frame_error = _outcome(
        qrels, lambda path: run.frame.assign(tag=run.tag), folder / "run.txt", options
    )
    assert run_error == frame_error
    if frame_error is not None:
        return
    pd.testing.assert_frame_equal(by_run[0], by_frame[0], check_exact=True)
    ranks_run, ranks_frame = by_run[1].pop("ranks"), by_frame[1].pop("ranks")
    pd.testing.assert_frame_equal(ranks_run, ranks_frame, check_exact=True)
    # the reader's warnings (a header, several tags) come with the run, not its frame
    assert by_run[1].pop("warnings") == run.warnings + by_frame[1].pop("warnings")
    assert by_run[1] == by_frame[1]


def test_the_needs_present_are_those_with_lines(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("b Q0 d1 1 2 t\na Q0 d1 1 2 t\nb Q0 d2 2 1 t\n")
    columns = read_run(run)
    assert sorted(needs_present(columns)) == ["a", "b"]
    columns.need = columns.need[columns.need == columns.needs.index("b")]
    assert needs_present(columns) == ["b"]


def test_a_run_with_no_judged_need_is_refused_as_the_frame_is(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q9 Q0 d1 1 2 t\n")
    qrels = read_qrels(tmp_path / "qrels.txt")
    with pytest.raises(ValueError, match="no need has both run lines and judgments"):
        evaluate(qrels, read_run(tmp_path / "run.txt"))
