"""A result's stored arrays: what is packed is what is read back, bit for bit."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd

from leaderboard.models import Result


def test_the_per_need_matrix_reads_back_bit_for_bit():
    values = np.array([[0.1 + 0.2, -0.0, np.nan], [5e-324, 1.7976931348623157e308, 1 / 3]])
    frame = pd.DataFrame(values, index=["q1", "Équipe-7"], columns=["map", "P_10", "ndcg"])
    blob = Result.pack_per_need(frame)
    read = Result(per_need=blob).per_need_frame()
    assert list(read.index) == ["q1", "Équipe-7"]
    assert list(read.columns) == ["map", "P_10", "ndcg"]
    assert read.to_numpy().tobytes() == values.tobytes()  # -0.0 and the NaN's bits too


def test_the_stored_arrays_are_a_deflated_archive_numpy_loads():
    blob = Result.pack_ranks(
        pd.DataFrame({"need_id": ["q1", "q1", "q2"], "rank": [1, 4, 2]}),
        pd.Series([2, 1, 0], index=["q1", "q2", "q3"]),
    )
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        assert {member.compress_type for member in archive.infolist()} == {zipfile.ZIP_DEFLATED}
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        assert data["ranks"].tolist() == [1, 4, 2]
        assert data["rank_needs"].tolist() == ["q1", "q1", "q2"]
    ranks, num_rel = Result(ranks=blob).relevant_ranks()
    assert num_rel == {"q1": 2, "q2": 1, "q3": 0}
    assert ranks["q1"].tolist() == [1, 4] and ranks["q3"].tolist() == []
