"""The lens: which judgments row each reader sees, for every role, before and after the
reveal, at any version, and the refusals (400 malformed, 404 unknown version, 403 not
revealed)."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from leaderboard.models import Judgments
from leaderboard.reading.lenses import Lens, resolve_lens
from leaderboard.reading.visibility import Problem
from tests.leaderboard.pages_data import make_benchmark
from tests.leaderboard.split_data import NEEDS, REVEAL, new_version, score, split, user

__all__ = ["split"]

BEFORE = REVEAL - timezone.timedelta(days=1)
AFTER = REVEAL + timezone.timedelta(minutes=1)


def refused(benchmark, who, **asked) -> Problem:
    with pytest.raises(Problem) as caught:
        resolve_lens(benchmark, who, asked.get("version"), asked.get("needs"), asked.get("now"))
    return caught.value


@pytest.mark.parametrize("who", ["anonymous", "alice", "bob", "reader"])
def test_before_the_reveal_a_non_organizer_sees_the_public_part_only(split, who):
    person = AnonymousUser() if who == "anonymous" else user(who)
    lens = resolve_lens(split, person, now=BEFORE)
    assert (lens.needs, lens.judgments.part, lens.version) == ("public", "public", 1)
    assert lens.judgments.need_ids == ["n1", "n2"]
    assert lens.allowed == ("public",)
    for needs in ("private", "all"):
        problem = refused(split, person, needs=needs, now=BEFORE)
        assert problem.status == 403
        assert problem.message == (
            "Scores on the private needs are shown from the reveal at 2030-06-01 12:00 UTC."
        )
    assert resolve_lens(split, person, needs="public", now=BEFORE).asked == {"needs": "public"}


def test_without_a_reveal_time_the_refusal_says_it_is_not_set(split):
    split.reveal_at = None
    problem = refused(split, AnonymousUser(), needs="private")
    assert (problem.status, problem.message) == (
        403,
        "Scores on the private needs are shown once the organizers set a reveal time.",
    )


def test_the_organizer_sees_public_by_default_and_private_or_all_on_asking(split):
    olga = user("olga")
    assert resolve_lens(split, olga, now=BEFORE).judgments.part == "public"
    assert resolve_lens(split, olga, needs="private", now=BEFORE).judgments.part == "private"
    everything = resolve_lens(split, olga, needs="all", now=BEFORE)
    assert everything.judgments == split.current_judgments
    assert everything.allowed == ("public", "private", "all")


def test_after_the_reveal_the_final_needs_by_default_and_any_on_asking(split):
    reader = AnonymousUser()
    assert resolve_lens(split, reader, now=AFTER).judgments.part == "private"
    assert resolve_lens(split, reader, needs="public", now=AFTER).judgments.part == "public"
    assert resolve_lens(split, reader, needs="all", now=AFTER).judgments.part == ""
    split.final_needs = "all"
    assert resolve_lens(split, reader, now=AFTER).judgments == split.current_judgments


def test_the_reveal_follows_the_clock(split):
    with time_machine.travel(BEFORE, tick=False):
        assert resolve_lens(split, AnonymousUser()).needs == "public"
    with time_machine.travel(AFTER, tick=False):
        assert resolve_lens(split, AnonymousUser()).needs == "private"


def test_a_part_not_derived_yet_is_being_prepared_never_the_whole_version(split):
    Judgments.objects.filter(part="public").delete()
    lens = resolve_lens(split, AnonymousUser(), now=BEFORE)
    assert lens.judgments is None and lens.preparing
    assert lens.line() == "Judgments v1, public needs: being prepared, no scores yet."


def test_an_older_version_is_read_by_number(split):
    v1 = split.current_judgments
    v2 = new_version(split, 2)
    split.current_judgments = v2
    split.save(update_fields=["current_judgments"])
    olga = user("olga")
    old = resolve_lens(split, olga, version="1", needs="all", now=BEFORE)
    assert (old.judgments, old.is_current, old.asked) == (
        v1,
        False,
        {"judgments": "1", "needs": "all"},
    )
    assert old.line().startswith("Judgments v1 (not the current v2), all needs (4), scored ")
    current = resolve_lens(split, olga, needs="all", now=BEFORE)
    assert (current.judgments, current.is_current) == (v2, True)
    # v2's parts are not derived yet: the public reader sees an empty board, not v2.
    assert resolve_lens(split, AnonymousUser(), now=BEFORE).preparing


def test_unknown_and_malformed_versions(split):
    problem = refused(split, AnonymousUser(), version="7")
    assert (problem.status, problem.message) == (
        404,
        "Split has no judgments version 7; versions: v1.",
    )
    assert refused(split, AnonymousUser(), version="v1").status == 400
    assert refused(split, AnonymousUser(), needs="secret").status == 400


def test_no_split_is_the_whole_version_and_refuses_parts(db):
    plain = make_benchmark("plain", NEEDS, title="Plain")
    lens = resolve_lens(plain, AnonymousUser())
    assert (lens.needs, lens.judgments, lens.allowed) == ("all", plain.current_judgments, ("all",))
    assert resolve_lens(plain, AnonymousUser(), needs="all").judgments == plain.current_judgments
    for needs in ("public", "private"):
        problem = refused(plain, AnonymousUser(), needs=needs)
        assert problem.status == 400
        assert "has no split into public and private needs" in problem.message
    assert lens.line() == "Judgments v1, not scored yet"


def test_the_line_names_version_part_counts_and_scoring_time(split):
    moment = dt.datetime(2026, 12, 4, 14, 2, tzinfo=dt.UTC)
    public = split.current_judgments.parts.get(part="public")
    public.results.update(created=moment)
    lens = resolve_lens(split, AnonymousUser(), now=BEFORE)
    assert lens.line() == "Judgments v1, public needs (2 of 4), scored 2026-12-04 14:02 UTC"
    assert lens.payload() == {"judgments_version": 1, "needs": "public"}


def test_the_scoring_time_is_of_the_scores_the_reader_may_see(split):
    """A run hidden from the reader (its owner hid it) scored later moves the line's
    time for the organizers only: anyone else is not told that something was scored."""
    moment = dt.datetime(2026, 12, 4, 14, 2, tzinfo=dt.UTC)
    public = split.current_judgments.parts.get(part="public")
    public.results.update(created=moment)
    later = public.results.order_by("pk").last()
    public.results.filter(pk=later.pk).update(created=moment + dt.timedelta(hours=3))
    later.submission.__class__.objects.filter(pk=later.submission_id).update(is_hidden=True)
    anyone = resolve_lens(split, AnonymousUser(), now=BEFORE)
    assert anyone.line().endswith("scored 2026-12-04 14:02 UTC")
    seen = resolve_lens(split, split.organizers.get(username="olga"), needs="public", now=BEFORE)
    assert seen.line().endswith("scored 2026-12-04 17:02 UTC")


def test_choices_offer_the_versions_and_only_the_needs_the_reader_may_see(split):
    new_version(split, 2)
    anonymous = resolve_lens(split, AnonymousUser(), now=BEFORE)
    labels = [c["label"] for c in anonymous.choices()]
    assert labels == ["v1 (current)", "v2"]
    organizer = resolve_lens(split, user("olga"), now=BEFORE)
    choices = {c["label"]: c for c in organizer.choices()}
    assert choices["private needs"]["query"] == {"needs": "private"}
    assert choices["v2"]["query"] == {"judgments": "2"}
    assert choices["public needs"]["chosen"]


def test_the_shown_result_of_a_run_is_on_the_lens_row(split):
    alpha = split.submissions.get(run_name="alpha")
    public = resolve_lens(split, AnonymousUser(), now=BEFORE)
    assert public.result(alpha).judgments.part == "public"
    organizer = resolve_lens(split, user("olga"), needs="private", now=BEFORE)
    assert organizer.result(alpha).judgments.part == "private"


def test_while_rescoring_the_run_shows_its_older_result_on_the_same_needs(split):
    alpha = split.submissions.get(run_name="alpha")
    v2 = new_version(split, 2)
    public_v2 = Judgments.objects.create(
        benchmark=split, version=2, part="public", parent=v2, file=v2.file.name,
        sha256=v2.sha256, num_needs=2, need_ids=["n1", "n2"],
    )  # fmt: skip
    split.current_judgments = v2
    split.save(update_fields=["current_judgments"])
    lens = resolve_lens(split, AnonymousUser(), now=BEFORE)
    shown = lens.result(alpha)
    assert (shown.judgments.version, shown.judgments.part) == (1, "public")
    score(alpha, public_v2, "alpha")
    assert lens.result(alpha).judgments == public_v2
    # At an asked version there is no stand-in: the run is not scored there yet.
    asked = resolve_lens(split, AnonymousUser(), version="2", now=BEFORE)
    assert asked.result(split.submissions.get(run_name="beta")) is None


@pytest.mark.parametrize(
    "asked", [{}, {"judgments": "1", "needs": "private"}], ids=["default", "chosen"]
)
def test_the_links_of_many_rows_equal_one_link_each(asked):
    """``Lens.links`` encodes the query once for a page's thousands of rows: each row's
    link is the one ``Lens.link`` gives, whatever the value."""
    lens = Lens(None, None, None, "all", True, ("all",), asked=asked)
    values = ["401", "a b", "x&y=z", "slot", "need=slot", "ü/?#", ""]
    for path, params in (("", {}), ("/benchmarks/b/compare/1/2/", {"measure": "P_10"})):
        link = lens.links(path, "need", **params)
        assert [link(v) for v in values] == [lens.link(path, **params, need=v) for v in values]
