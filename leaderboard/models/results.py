"""Scores and tests: a run's ``Result`` per judgments version, the per-need vectors
significance tests read, and the stored ``Comparison`` of each pair of runs.

A submission is scored against a judgments version; its ``Result`` for that version
holds the summary of every measure and, as compact arrays, the per-need values and the
ranks of the relevant documents retrieved (enough to redraw every precision-recall
curve without the run file).
"""

from __future__ import annotations

import io
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from django.db import models
from django.db.models import F, Q

from leaderboard.models.submissions import Submission

if TYPE_CHECKING:
    from leaderboard.models.benchmarks import Benchmark


class ResultQuerySet(models.QuerySet):
    def on_leaderboard(
        self, benchmark: Benchmark, user, judgments_id: int | None
    ) -> ResultQuerySet:
        """Results on one judgments row (the reader's lens: a version or one of its parts)
        for runs the user may see, with their runs."""
        runs = Submission.objects.for_benchmark(benchmark).live().scores_visible_to(user)
        return (
            self.filter(judgments_id=judgments_id, submission__in=runs)
            .select_related("submission", "submission__participant")
            .defer("per_need", "ranks")
        )


def _pack(arrays: dict[str, np.ndarray]) -> bytes:
    """``arrays`` as ``np.savez_compressed`` writes them (a zip of ``.npy`` files, which
    ``np.load`` reads), at zlib's fastest level: a 7,000-need matrix of every measure
    deflates in about half the time of numpy's default level, for a tenth more bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    return buffer.getvalue()


def _unpack(blob: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


class Result(models.Model):
    """Scores of one submission against one judgments version.

    ``per_need`` is a compressed float64 matrix (needs x measures) with its need ids and
    measure names; one blob per run keeps a 7,000-need, 1,000-run benchmark at a thousand
    rows instead of millions, and a comparison reads just two rows. ``ranks`` holds the
    ranks of the relevant documents retrieved per need, for the precision-recall plots.
    """

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="results")
    judgments = models.ForeignKey(
        "leaderboard.Judgments", on_delete=models.CASCADE, related_name="results"
    )
    summary = models.JSONField(default=dict)
    num_needs = models.PositiveIntegerField(default=0)
    per_need = models.BinaryField()
    ranks = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    objects = ResultQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "judgments"], name="unique_result")
        ]
        # A run's results on a row, and when each was stored, read from the index (boards,
        # the pages' validators): SQLite keeps the columns after the blobs past them in
        # the row, and reading them walked every result's matrix (~100 ms a page at 1,000 runs).
        indexes = [
            models.Index(fields=["submission", "judgments", "created"], name="result_newest")
        ]

    def __str__(self) -> str:
        return f"{self.submission} on {self.judgments}"

    @staticmethod
    def pack_per_need(frame: pd.DataFrame) -> bytes:
        return _pack(
            {
                "needs": np.asarray(frame.index.astype(str), dtype=str),
                "measures": np.asarray(frame.columns.astype(str), dtype=str),
                "values": frame.to_numpy(dtype=np.float64),
            }
        )

    @staticmethod
    def pack_ranks(ranks: pd.DataFrame, num_rel: pd.Series) -> bytes:
        """``ranks``: need_id, rank of each relevant retrieved document; ``num_rel``: R per need."""
        return _pack(
            {
                "needs": np.asarray(num_rel.index.astype(str), dtype=str),
                "num_rel": num_rel.to_numpy(dtype=np.int64),
                "rank_needs": np.asarray(ranks["need_id"].astype(str), dtype=str),
                "ranks": ranks["rank"].to_numpy(dtype=np.int64),
            }
        )

    def per_need_frame(self) -> pd.DataFrame:
        data = _unpack(self.per_need)
        return pd.DataFrame(
            data["values"], index=pd.Index(data["needs"], name="need_id"), columns=data["measures"]
        )

    def relevant_ranks(self) -> tuple[dict[str, np.ndarray], dict[str, int]]:
        """Per need: the ranks of relevant retrieved documents, and R."""
        data = _unpack(self.ranks)
        num_rel = dict(zip(data["needs"].tolist(), data["num_rel"].tolist(), strict=True))
        ranks = {need: np.empty(0, dtype=np.int64) for need in num_rel}
        if len(data["ranks"]):
            frame = pd.DataFrame({"need": data["rank_needs"], "rank": data["ranks"]})
            for need, group in frame.groupby("need", sort=False):
                ranks[str(need)] = np.sort(group["rank"].to_numpy())
        return ranks, num_rel

    def num_relevant(self) -> dict[str, int]:
        """R per need of the judgments, without the ranks."""
        data = _unpack(self.ranks)
        return dict(zip(data["needs"].tolist(), data["num_rel"].tolist(), strict=True))

    def need_ranks(self, need: str) -> tuple[np.ndarray, int] | None:
        """``relevant_ranks`` of one need (None if the judgments do not have it), without
        grouping all of them (700 ms at 7,000 needs; one need: 8 ms): the pages draw one
        need's figure."""
        data = _unpack(self.ranks)
        where = np.flatnonzero(data["needs"] == need)
        if not len(where):
            return None
        return np.sort(data["ranks"][data["rank_needs"] == need]), int(data["num_rel"][where[0]])


class MeasureVector(models.Model):
    """One measure's per-need values of one result, float64 in ``judgments.need_ids`` order.

    Kept beside the full ``Result.per_need`` blob for the measures significance tests use
    (the benchmark's tested measures: its primary one and map by default): comparing a new
    run with 300 others then reads 300 small vectors (56 KB at 7,000 needs) instead of 300
    full matrices (~1.5 MB each, compressed, with every catalog measure).
    """

    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="vectors")
    measure = models.CharField(max_length=40)
    values = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["result", "measure"], name="unique_measure_vector")
        ]

    def array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.values), dtype=np.float64)


class ComparisonQuerySet(models.QuerySet):
    def between(self, a: Submission, b: Submission) -> ComparisonQuerySet:
        low, high = sorted([a.pk, b.pk])
        return self.filter(submission_a_id=low, submission_b_id=high)


class Comparison(models.Model):
    """Raw per-pair test results (engine's ``compare_pair``); corrections are applied when
    a page asks a family of questions, because the family grows with every new run.

    Stored with ``submission_a.pk < submission_b.pk``; differences are a - b.
    """

    submission_a = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    submission_b = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    judgments = models.ForeignKey(
        "leaderboard.Judgments", on_delete=models.CASCADE, related_name="comparisons"
    )
    measure = models.CharField(max_length=40)
    n = models.PositiveIntegerField()
    mean_diff = models.FloatField()
    ci_low = models.FloatField(null=True)
    ci_high = models.FloatField(null=True)
    effect_size = models.FloatField(null=True)
    wins = models.PositiveIntegerField()
    ties = models.PositiveIntegerField()
    losses = models.PositiveIntegerField()
    t_statistic = models.FloatField(null=True)
    t_p = models.FloatField()
    wilcoxon_statistic = models.FloatField(null=True)
    wilcoxon_p = models.FloatField()
    randomization_p = models.FloatField()
    permutations = models.PositiveIntegerField(default=10_000)
    created = models.DateTimeField(auto_now_add=True)

    objects = ComparisonQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["submission_a", "submission_b", "measure", "judgments"],
                name="unique_comparison",
            ),
            models.CheckConstraint(
                condition=Q(submission_a__lt=F("submission_b")), name="comparison_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.submission_a} vs {self.submission_b} ({self.measure})"

    @staticmethod
    def turned(result: dict[str, Any]) -> dict[str, Any]:
        """The same comparison seen from the other run: differences a - b become b - a.

        Signs of the mean difference, effect size and t statistic flip, the confidence
        interval is mirrored, wins and losses swap; p-values and the Wilcoxon statistic
        (the smaller rank sum) do not change. ``result``: the engine's ``compare_pair``
        keys, as stored here or computed on a page.
        """
        out = dict(result)
        out["mean_diff"] = -result["mean_diff"]
        out["ci_low"], out["ci_high"] = _negated(result["ci_high"]), _negated(result["ci_low"])
        out["wins"], out["losses"] = result["losses"], result["wins"]
        for key in ("effect_size", "t_statistic"):
            out[key] = _negated(result[key])
        return out


def _negated(value: Any) -> Any:
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return None
    return -value
