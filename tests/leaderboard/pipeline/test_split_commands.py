"""load_benchmark's campaign options: the private needs listed (ids or a file) or drawn
with a seed, what the final board ranks by, the reveal and pseudonyms."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.models import Benchmark
from leaderboard.models.splits import draw_private
from tests import DEMO

LOAD = [
    "load_benchmark",
    "lib",
    "--needs",
    str(DEMO / "needs.tsv"),
    "--qrels",
    str(DEMO / "qrels.txt"),
]


def test_listed_private_needs_the_reveal_and_pseudonyms(db, tmp_path):
    ids = tmp_path / "private.txt"
    ids.write_text("# hidden until the reveal\natwood\nstage-plays\n")
    out = io.StringIO()
    call_command(
        *LOAD, "--private-needs", str(ids), "--final-needs", "all",
        "--reveal-at", "2027-01-15T12:00", "--anonymous", stdout=out,
    )  # fmt: skip
    benchmark = Benchmark.objects.get(slug="lib")
    assert benchmark.private_needs == ["atwood", "stage-plays"]
    assert benchmark.final_needs == "all" and benchmark.anonymous
    assert benchmark.reveal_at == dt.datetime(2027, 1, 15, 12, tzinfo=dt.UTC)
    assert "2 private needs" in out.getvalue()
    assert benchmark.latest_judgments.parts.count() == 2
    call_command("load_benchmark", "lib", "--private-needs", "atwood", "--no-anonymous", stdout=out)
    benchmark.refresh_from_db()
    assert benchmark.private_needs == ["atwood"] and not benchmark.anonymous
    call_command("load_benchmark", "lib", "--private-needs", "", "--reveal-at", "", stdout=out)
    benchmark.refresh_from_db()
    assert not benchmark.has_split and benchmark.reveal_at is None
    assert benchmark.latest_judgments.parts.count() == 0


def test_a_drawn_split_keeps_its_seed(db):
    out = io.StringIO()
    call_command(*LOAD, "--private-fraction", "0.5", "--split-seed", "7", stdout=out)
    benchmark = Benchmark.objects.get(slug="lib")
    needs = ["atwood", "cs-foundations", "russian-novels", "stage-plays"]
    assert benchmark.private_needs == draw_private(needs, 0.5, 7)
    assert benchmark.split_seed == 7 and "drawn with seed 7" in out.getvalue()


def test_bad_split_options_are_refused_and_nothing_is_stored(db):
    with pytest.raises(CommandError, match="Not needs of the latest judgments: nosuch"):
        call_command(*LOAD, "--private-needs", "atwood,nosuch", stdout=io.StringIO())
    assert not Benchmark.objects.filter(slug="lib").exists()  # all or nothing
    with pytest.raises(CommandError, match="not both"):
        call_command(
            *LOAD, "--private-needs", "atwood", "--private-fraction", "0.5", stdout=io.StringIO()
        )
    with pytest.raises(CommandError, match="not an ISO 8601"):
        call_command(*LOAD, "--reveal-at", "next tuesday", stdout=io.StringIO())
    with pytest.raises(CommandError, match="one public and one private"):
        call_command(*LOAD, "--private-fraction", "0.99", stdout=io.StringIO())
