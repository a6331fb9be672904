"""A benchmark's public/private split: listed or drawn, checked, and each version's parts."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError

from leaderboard.models import Judgments
from leaderboard.models.splits import draw_private
from leaderboard.pipeline.loading import load_judgments
from tests import DEMO

NEEDS = ["atwood", "cs-foundations", "russian-novels", "stage-plays"]


def test_listed_split_makes_both_parts_with_their_counts(library):
    assert library.set_split(["stage-plays", "atwood"]) is True
    library.refresh_from_db()
    assert library.private_needs == ["atwood", "stage-plays"]
    assert library.has_split and library.split_seed is None and library.split_fraction is None
    version = library.latest_judgments
    parts = {part.part: part for part in version.parts.all()}
    assert parts["public"].need_ids == ["cs-foundations", "russian-novels"]
    assert parts["private"].need_ids == ["atwood", "stage-plays"]
    assert parts["private"].version == version.version and parts["private"].file == version.file
    # the demo's qrels: 18 + 28 judged lines for atwood and stage-plays
    assert parts["private"].num_judged == 46 and parts["public"].num_judged == 50
    assert parts["private"].num_needs == 2
    assert parts["public"].num_relevant + parts["private"].num_relevant == version.num_relevant
    assert Judgments.objects.versions().filter(benchmark=library).count() == 1


def test_unknown_needs_are_named_and_nothing_is_stored(library):
    with pytest.raises(ValidationError, match="nosuch, other"):
        library.set_split(["atwood", "other", "nosuch"])
    with pytest.raises(ValidationError, match="at least one public"):
        library.set_split(NEEDS)
    library.refresh_from_db()
    assert library.private_needs == [] and not Judgments.objects.filter(part__gt="").exists()


def test_drawn_split_is_reproducible_and_stored_with_its_seed(library):
    library.set_split(fraction=0.5, seed=7)
    library.refresh_from_db()
    assert library.split_seed == 7 and library.split_fraction == 0.5
    assert len(library.private_needs) == 2
    assert library.private_needs == draw_private(list(reversed(NEEDS)), 0.5, 7)
    library.set_split(fraction=0.25)  # a seed drawn and kept
    library.refresh_from_db()
    assert library.split_seed is not None
    assert library.private_needs == draw_private(NEEDS, 0.25, library.split_seed)
    with pytest.raises(ValidationError, match="at least one public and one private"):
        library.set_split(fraction=0.01, seed=1)


def test_changing_the_split_replaces_parts_and_clearing_removes_them(library):
    library.set_split(["atwood"])
    private = library.latest_judgments.parts.get(part="private")
    public = library.latest_judgments.parts.get(part="public")
    assert library.set_split(["atwood", "stage-plays"]) is True
    assert not Judgments.objects.filter(pk=private.pk).exists()
    assert not Judgments.objects.filter(pk=public.pk).exists()
    assert library.set_split(["atwood", "stage-plays"]) is False  # unchanged: kept
    assert library.latest_judgments.parts.count() == 2
    library.set_split([])
    library.refresh_from_db()
    assert not library.has_split and library.latest_judgments.parts.count() == 0


def test_a_new_version_of_a_split_benchmark_gets_its_parts(library):
    library.set_split(["atwood"])
    text = (DEMO / "qrels.txt").read_bytes() + b"atwood 0 extra-doc 1\n"
    version = load_judgments(library, io.BytesIO(text), "qrels-2.txt")
    assert version.version == 2 and version.part == ""
    assert version.parts.get(part="private").num_judged == 19
    assert library.latest_judgments == version
