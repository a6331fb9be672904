"""Final runs: a team marks and orders at most N runs until its phase closes; a team that
marks none has its latest N scored runs counted."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError

from leaderboard.models import (
    ApiToken,
    Phase,
    Profile,
    Result,
    Submission,
    final_runs,
    set_final_runs,
)
from leaderboard.models.finals import PhaseClosed

OPENS = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
CLOSES = dt.datetime(2026, 7, 20, 12, 0, tzinfo=dt.UTC)
DURING = OPENS + dt.timedelta(days=5)


@pytest.fixture
def phase(library):
    return Phase.objects.create(benchmark=library, name="Test", opens=OPENS, closes=CLOSES)


def make_run(benchmark, user, name, phase, day, status=Submission.Status.SCORED):
    """A run row as the pipeline leaves it (the file is not read here)."""
    return Submission.objects.create(
        benchmark=benchmark,
        participant=user,
        run_name=name,
        phase=phase,
        team=Profile.find(user).team,
        status=status,
        file=f"runs/{name}.txt",
        created=OPENS + dt.timedelta(days=day),
    )


def names(finals, team_name=None):
    return [(f.team_name, f.submission.run_name, f.priority, f.chosen) for f in finals]


def test_a_team_that_marks_none_has_its_latest_scored_runs(library, phase, participant):
    phase.final_runs = 2
    phase.save()
    for day, name in enumerate(["a", "b", "c"]):
        make_run(library, participant, name, phase, day)
    make_run(library, participant, "failed", phase, 4, Submission.Status.FAILED)
    make_run(library, participant, "gone", phase, 5, Submission.Status.WITHDRAWN)
    make_run(library, participant, "other-phase", None, 6)
    assert names(final_runs(library, phase)) == [("alice", "c", 1, False), ("alice", "b", 2, False)]
    # outside any phase: the benchmark's limit (3), its own runs
    assert names(final_runs(library, None)) == [("alice", "other-phase", 1, False)]


def test_a_team_marks_and_orders_its_final_runs(library, phase, participant, other_participant):
    team = Profile.of(participant).create_team("Lab")
    Profile.of(other_participant).join_team(team.join_code)
    a = make_run(library, participant, "a", phase, 0)
    b = make_run(library, other_participant, "b", phase, 1)
    c = make_run(library, participant, "c", phase, 2)
    loner = get_loner()
    make_run(library, loner, "solo", phase, 1)
    with time_machine.travel(DURING, tick=False):
        # any member sets the team's marks, runs of either member
        set_final_runs(library, other_participant, [c.pk, a.pk], DURING)
    assert names(final_runs(library, phase)) == [
        ("carol", "solo", 1, False),
        ("Lab", "c", 1, True),
        ("Lab", "a", 2, True),
    ]
    assert Submission.objects.get(pk=b.pk).final_priority is None
    set_final_runs(library, participant, [b.pk], DURING)  # replaces the marks
    assert [f.submission.pk for f in final_runs(library, phase) if f.team_name == "Lab"] == [b.pk]
    set_final_runs(library, participant, [], DURING)  # cleared: the latest count again
    lab = [f.submission.run_name for f in final_runs(library, phase) if f.team_name == "Lab"]
    assert lab == ["c", "b", "a"]


def get_loner():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("carol", password="pw-carol-123")


def test_marks_are_refused_whole(library, phase, participant, other_participant):
    runs = [make_run(library, participant, n, phase, i) for i, n in enumerate("abcd")]
    theirs = make_run(library, other_participant, "theirs", phase, 1)
    # scored (a result): anyone sees it, so it is named as another team's
    Result.objects.create(
        submission=theirs, judgments=library.latest_judgments, summary={}, num_needs=0,
        per_need=b"", ranks=b"",
    )  # fmt: skip
    failed = make_run(library, participant, "bad", phase, 1, Submission.Status.FAILED)
    set_final_runs(library, participant, [runs[0].pk], DURING)
    cases = [
        ([r.pk for r in runs], ValidationError, "At most 3 final runs per team"),
        ([runs[1].pk, runs[1].pk], ValidationError, "listed twice"),
        ([runs[1].pk, theirs.pk], PermissionDenied, "not your team's"),
        ([failed.pk], ValidationError, "is failed"),
        ([999_999], ValidationError, "has no run 999999"),
    ]
    for ids, error, message in cases:
        with pytest.raises(error, match=message):
            set_final_runs(library, participant, ids, DURING)
        # nothing half-done: the earlier mark stands
        assert list(Submission.objects.exclude(final_priority=None).values_list("run_name")) == [
            ("a",)
        ]


def test_marks_stop_when_the_phase_closes(library, phase, participant):
    run = make_run(library, participant, "a", phase, 0)
    with pytest.raises(PhaseClosed, match="The phase Test closed at 2026-07-20 12:00 UTC"):
        set_final_runs(library, participant, [run.pk], CLOSES)
    assert Submission.objects.get().final_priority is None


def test_the_api_sets_and_reads_the_final_runs(client, library, phase, participant):
    a = make_run(library, participant, "a", phase, 0)
    b = make_run(library, participant, "b", phase, 1)
    _, raw = ApiToken.issue(participant, "t")
    auth = {"Authorization": f"Bearer {raw}"}
    url = "/api/benchmarks/library/final-runs/"
    with time_machine.travel(DURING, tick=False):
        got = client.get(url, headers=auth).json()
        assert got["phase"] == "Test" and got["open"] and got["limit"] == 3
        assert [(r["run_name"], r["chosen"]) for r in got["runs"]] == [("b", False), ("a", False)]
        put = client.put(url, {"runs": [a.pk]}, content_type="application/json", headers=auth)
        assert put.status_code == 200, put.content
        assert [(r["id"], r["priority"], r["chosen"]) for r in put.json()["runs"]] == [
            (a.pk, 1, True)
        ]
        bad = client.put(url, {"runs": ["x"]}, content_type="application/json", headers=auth)
        assert bad.status_code == 400
    with time_machine.travel(CLOSES + dt.timedelta(minutes=1), tick=False):
        late = client.put(url, {"runs": [b.pk]}, content_type="application/json", headers=auth)
        assert late.status_code == 409
        assert "closed at 2026-07-20 12:00 UTC" in late.json()["error"]
        assert not client.get(url, headers=auth).json()["open"]
    assert Submission.objects.get(pk=a.pk).final_priority == 1
    assert Submission.objects.get(pk=b.pk).final_priority is None


def test_the_page_form_sets_the_final_runs(client, library, phase, participant):
    a = make_run(library, participant, "a", phase, 0)
    b = make_run(library, participant, "b", phase, 1)
    client.force_login(participant)
    url = "/benchmarks/library/final-runs/"
    with time_machine.travel(DURING, tick=False):
        page = client.get(url)
        assert page.status_code == 200
        assert b"2026-07-20 12:00 UTC" in page.content
        saved = client.post(url, {f"priority-{a.pk}": "1", f"priority-{b.pk}": "2"})
        assert saved.status_code == 302
        same = client.post(url, {f"priority-{a.pk}": "1", f"priority-{b.pk}": "1"})
        assert same.status_code == 400 and b"same priority" in same.content
    assert [f.submission.pk for f in final_runs(library, phase)] == [a.pk, b.pk]
    with time_machine.travel(CLOSES, tick=False):
        late = client.post(url, {f"priority-{b.pk}": "1"})
        assert late.status_code == 400 and b"closed at 2026-07-20 12:00 UTC" in late.content
        closed = client.get(url).content.decode()
    assert "can change until" not in closed and "closed at <time" in closed
    assert [f.submission.pk for f in final_runs(library, phase)] == [a.pk, b.pk]
    assert client.get("/benchmarks/library/final-runs/?phase=Nope").status_code == 404


def test_a_priority_that_is_no_whole_number_is_refused_on_the_page(
    client, library, phase, participant
):
    run = make_run(library, participant, "a", phase, 0)
    client.force_login(participant)
    with time_machine.travel(DURING, tick=False):
        for text in ("²", "-1", "1.5", "one"):  # "²" is a digit to Python, but no int
            refused = client.post("/benchmarks/library/final-runs/", {f"priority-{run.pk}": text})
            assert refused.status_code == 400, text
            assert "A priority is a whole number from 1" in refused.content.decode(), text
    assert Submission.objects.get(pk=run.pk).final_priority is None


def test_the_priorities_at_fault_are_marked_and_described_by_the_error(
    client, library, phase, participant
):
    """A refused form marks the inputs at fault aria-invalid, each described by the
    alert that says why (WCAG 3.3.1), and shows them as typed; the others are left be."""
    phase.final_runs = 2
    phase.save()
    a, b, c = (make_run(library, participant, name, phase, day) for day, name in enumerate("abc"))
    client.force_login(participant)

    def refused(priorities: dict) -> tuple[dict[int, str], str]:
        with time_machine.travel(DURING, tick=False):
            page = client.post(
                "/benchmarks/library/final-runs/",
                {f"priority-{run.pk}": text for run, text in priorities.items()},
            )
        assert page.status_code == 400
        html = page.content.decode()
        alert = re.search(r'<p [^>]*role="alert"[^>]*>', html).group(0)
        alert_id = re.search(r'id="([^"]+)"', alert)
        assert alert_id, f"nothing can point at the alert: {alert}"
        inputs = {
            run.pk: re.search(rf'<input id="priority-{run.pk}"[^>]*>', html).group(0)
            for run in (a, b, c)
        }
        return inputs, alert_id.group(1)

    def at_fault(inputs: dict[int, str], alert_id: str) -> set[int]:
        marked = set()
        for pk, tag in inputs.items():
            if 'aria-invalid="true"' in tag:
                assert f'aria-describedby="{alert_id}"' in tag, tag
                marked.add(pk)
            else:
                assert "aria-describedby" not in tag, tag
        return marked

    inputs, alert_id = refused({a: "1.5", b: "1", c: ""})
    assert at_fault(inputs, alert_id) == {a.pk}
    assert 'value="1.5"' in inputs[a.pk] and 'value="1"' in inputs[b.pk]
    inputs, alert_id = refused({a: "2", b: "2", c: "1"})  # the same priority twice
    assert at_fault(inputs, alert_id) == {a.pk, b.pk}
    inputs, alert_id = refused({a: "1", b: "2", c: "3"})  # one too many: the model says
    assert at_fault(inputs, alert_id) == {a.pk, b.pk, c.pk}
    assert not Submission.objects.filter(final_priority__isnull=False).exists()


def test_runs_from_before_a_team_stay_their_participants_to_mark(
    client, library, phase, participant, other_participant
):
    """A participant who makes or joins a team mid-phase still marks the runs submitted
    alone (a team of one, which they still are), priorities counting within each team;
    the new team-mate does not."""
    phase.final_runs = 1
    phase.save()
    alone = make_run(library, participant, "alone", phase, 0)
    team = Profile.of(participant).create_team("Lab")
    Profile.of(other_participant).join_team(team.join_code)
    together = make_run(library, participant, "together", phase, 1)
    client.force_login(participant)
    url = "/benchmarks/library/final-runs/"
    with time_machine.travel(DURING, tick=False):
        page = client.get(url).content.decode()
        assert f'name="priority-{alone.pk}"' in page and f'name="priority-{together.pk}"' in page
        assert "team of one" in page
        saved = client.post(url, {f"priority-{alone.pk}": "1", f"priority-{together.pk}": "1"})
        assert saved.status_code == 302
        assert client.get(url).status_code == 200
        with pytest.raises(ValidationError, match="has no run"):  # not theirs to see
            set_final_runs(library, other_participant, [alone.pk], DURING)
    assert names(final_runs(library, phase)) == [
        ("alice", "alone", 1, True),
        ("Lab", "together", 1, True),
    ]


def test_a_run_the_caller_cannot_see_is_not_named(client, library, participant, other_participant):
    """Another team's run in a hidden phase before the reveal (404 everywhere to this
    participant), and one its owner hid: marking either as final answers as for a run
    that does not exist, never with its name, whichever phase is asked for."""
    test = Phase.objects.create(
        benchmark=library, name="Test", opens=OPENS, closes=CLOSES, board="hidden"
    )
    secret = make_run(library, other_participant, "secret-run-name", test, 1)
    hidden = make_run(library, other_participant, "hidden-by-owner", None, 1)
    Submission.objects.filter(pk=hidden.pk).update(is_hidden=True)
    for run in (secret, hidden):  # scored: hidden by the phase and by its owner only
        Result.objects.create(
            submission=run, judgments=library.latest_judgments, summary={}, num_needs=0,
            per_need=b"", ranks=b"",
        )  # fmt: skip
    _, raw = ApiToken.issue(participant, "t")
    auth = {"Authorization": f"Bearer {raw}"}
    with time_machine.travel(DURING, tick=False):
        for run in (secret, hidden):
            assert client.get(f"/api/submissions/{run.pk}/", headers=auth).status_code == 404
            put = client.put(
                "/api/benchmarks/library/final-runs/",
                {"runs": [run.pk], "phase": "Test"},
                content_type="application/json",
                headers=auth,
            )
            assert put.status_code == 400, put.content
            assert put.json()["error"] == f"{library.title} has no run {run.pk}."
            with pytest.raises(ValidationError, match=f"has no run {run.pk}"):
                set_final_runs(library, participant, [run.pk], DURING, "Test")


def test_a_bad_item_of_the_list_is_named_by_its_place(client, library, phase, participant):
    """A list's bad item is said as runs[0]: its message, not Python's repr of DRF's."""
    _, raw = ApiToken.issue(participant, "t")
    with time_machine.travel(DURING, tick=False):
        put = client.put(
            "/api/benchmarks/library/final-runs/",
            {"runs": [-1, 5, "x"]},
            content_type="application/json",
            headers={"Authorization": f"Bearer {raw}"},
        )
    assert put.status_code == 400
    assert put.json() == {
        "error": "runs[0]: Ensure this value is greater than or equal to 1.",
        "details": {
            "runs[0]": ["Ensure this value is greater than or equal to 1."],
            "runs[2]": ["A valid integer is required."],
        },
    }
