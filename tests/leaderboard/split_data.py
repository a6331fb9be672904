"""A benchmark with a public/private split, for the tests of what each reader sees.

Four needs, ``n3`` and ``n4`` private; two runs, ``alpha`` (alice's) and ``beta``
(bob's), scored on the whole version and on its two parts, with every pair compared on
each row. Every per-need value is a distinct four-decimal number, so a test can look for
the private ones (and the whole version's means, which include them) in a response body
(``PRIVATE_TEXTS``) and find them nowhere a reader may not see them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import warnings

import pandas as pd
import pytest
from django.contrib.auth import get_user_model

from evaluation.significance import PAIR_KEYS, FewNeedsWarning, compare_pair
from leaderboard.models import Benchmark, Comparison, Judgments, Result, Submission
from tests.leaderboard.pages_data import make_benchmark, summarize

NEEDS = {"n1": "first need", "n2": "second need", "n3": "third need", "n4": "fourth need"}
PRIVATE = ["n3", "n4"]
PUBLIC = ["n1", "n2"]
# map per need; P_10 the same values (a second measure to rank by).
VALUES = {
    "alpha": {"n1": 0.6113, "n2": 0.6557, "n3": 0.9137, "n4": 0.8261},
    "beta": {"n1": 0.3421, "n2": 0.3469, "n3": 0.7913, "n4": 0.7851},
}
REVEAL = dt.datetime(2030, 6, 1, 12, 0, tzinfo=dt.UTC)


def frame_of(run: str, needs: list[str]) -> pd.DataFrame:
    values = [VALUES[run][n] for n in needs]
    frame = pd.DataFrame({"map": values, "P_10": values, "num_rel": 1.0}, index=needs)
    frame.index.name = "need_id"
    return frame


def mean_text(run: str, needs: list[str]) -> str:
    return f"{float(frame_of(run, needs)['map'].mean()):.4f}"


def private_texts() -> list[str]:
    """Numbers a reader who may not see the private needs must never be shown: the
    private per-need values, and the means over the private needs and over all needs."""
    texts = [f"{VALUES[run][n]:.4f}" for run in VALUES for n in PRIVATE]
    texts += [mean_text(run, PRIVATE) for run in VALUES]
    texts += [mean_text(run, list(NEEDS)) for run in VALUES]
    return texts


def public_texts() -> list[str]:
    return [mean_text(run, PUBLIC) for run in VALUES]


def part_of(whole: Judgments, part: str, needs: list[str]) -> Judgments:
    return Judgments.objects.create(
        benchmark=whole.benchmark,
        version=whole.version,
        part=part,
        parent=whole,
        file=whole.file.name,
        sha256=whole.sha256,
        num_needs=len(needs),
        need_ids=needs,
    )


def new_version(benchmark: Benchmark, version: int) -> Judgments:
    return Judgments.objects.create(
        benchmark=benchmark,
        version=version,
        file=f"judgments/{benchmark.slug}/v{version}-qrels.txt",
        sha256=hashlib.sha256(f"{benchmark.slug}{version}".encode()).hexdigest(),
        num_needs=len(NEEDS),
        need_ids=list(NEEDS),
    )


def score(run: Submission, judgments: Judgments, name: str, shift: float = 0.0) -> Result:
    """``run``'s result on ``judgments`` (its needs only), values moved by ``shift``."""
    frame = frame_of(name, list(judgments.need_ids))
    frame[["map", "P_10"]] += shift
    return Result.objects.create(
        submission=run,
        judgments=judgments,
        summary=summarize(frame),
        num_needs=len(frame),
        per_need=Result.pack_per_need(frame),
        ranks=Result.pack_ranks(
            pd.DataFrame({"need_id": pd.Series(dtype=str), "rank": pd.Series(dtype=int)}),
            frame["num_rel"].astype("int64"),
        ),
    )


def compare_all(judgments: Judgments) -> None:
    results = sorted(Result.objects.filter(judgments=judgments), key=lambda r: r.submission_id)
    for r1, r2 in itertools.combinations(results, 2):
        for measure in ("map",):
            a, b = r1.per_need_frame()[measure], r2.per_need_frame()[measure]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FewNeedsWarning)
                stats = compare_pair(a.to_numpy(), b.to_numpy(), permutations=200)
            Comparison.objects.create(
                submission_a_id=r1.submission_id,
                submission_b_id=r2.submission_id,
                judgments=judgments,
                measure=measure,
                permutations=200,
                **{key: stats[key] for key in PAIR_KEYS},
            )


@pytest.fixture
def split(db) -> Benchmark:
    """The split benchmark, revealed at ``REVEAL``, organised by ``olga``."""
    users = get_user_model().objects
    alice = users.create_user("alice", password="pw-alice-123")
    bob = users.create_user("bob", password="pw-bob-123")
    olga = users.create_user("olga", password="pw-olga-123")
    users.create_user("reader", password="pw-reader-123")
    benchmark = make_benchmark(
        "split", NEEDS, title="Split", private_needs=PRIVATE, reveal_at=REVEAL
    )
    benchmark.organizers.add(olga)
    whole = benchmark.current_judgments
    public, private = part_of(whole, "public", PUBLIC), part_of(whole, "private", PRIVATE)
    for name, user in (("alpha", alice), ("beta", bob)):
        run = Submission.objects.create(
            benchmark=benchmark,
            participant=user,
            run_name=name,
            file=f"runs/split/{name}.txt",
            status=Submission.Status.SCORED,
        )
        for judgments in (whole, public, private):
            score(run, judgments, name)
    for judgments in (whole, public, private):
        compare_all(judgments)
    return benchmark


def user(name: str):
    return get_user_model().objects.get(username=name)
