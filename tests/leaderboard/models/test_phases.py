"""Campaign phases: runs taken only while a phase is open (server clock, a grace for uploads
that began before the close), the phase's limits per participant and per team, and the
phase shown on the board, the submit form, the API and its quota."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory

from leaderboard.models import ApiToken, Phase, Profile, Submission
from leaderboard.uploads.receiving import receive_run
from tests import DEMO

RUN_B = (DEMO / "run-B.txt").read_bytes()
OPENS = dt.datetime(2026, 6, 1, 0, 0, tzinfo=dt.UTC)
CLOSES = dt.datetime(2026, 6, 30, 23, 59, tzinfo=dt.UTC)
TEST_OPENS = dt.datetime(2026, 7, 10, 0, 0, tzinfo=dt.UTC)
TEST_CLOSES = dt.datetime(2026, 7, 20, 12, 0, tzinfo=dt.UTC)


def run(n: int) -> bytes:
    """Run B under another tag: other bytes and another run name."""
    return RUN_B.replace(b"system-B", f"system-B{n}".encode())


@pytest.fixture
def campaign(library):
    library.daily_limit = 10
    library.save()
    Phase.objects.create(benchmark=library, name="Development", opens=OPENS, closes=CLOSES)
    Phase.objects.create(
        benchmark=library, name="Test", opens=TEST_OPENS, closes=TEST_CLOSES, total_limit=3
    )
    return library


def post_form(client, content: bytes):
    return client.post("/benchmarks/library/submit/", {"file": SimpleUploadedFile("r", content)})


def post_api(client, user, content: bytes):
    _, raw = ApiToken.issue(user, "t")
    return client.post(
        "/api/benchmarks/library/submissions/",
        {"file": SimpleUploadedFile("r", content)},
        headers={"Authorization": f"Bearer {raw}"},
    )


def test_a_benchmark_without_phases_takes_runs_while_open(library):
    assert library.window().open and library.window().phase is None
    library.is_open = False
    assert library.window().refusal == "This benchmark is closed for submissions."


@pytest.mark.parametrize(
    ("started", "now", "expected"),
    [
        (OPENS - dt.timedelta(minutes=1), OPENS - dt.timedelta(minutes=1), "opens at 2026-06-01"),
        (OPENS, OPENS, "Development"),
        (CLOSES - dt.timedelta(seconds=1), CLOSES + dt.timedelta(minutes=4), "Development"),
        (CLOSES - dt.timedelta(seconds=1), CLOSES + dt.timedelta(minutes=5), "closed at"),
        (CLOSES, CLOSES, "closed at 2026-06-30 23:59 UTC"),
        (TEST_CLOSES + dt.timedelta(days=1), TEST_CLOSES + dt.timedelta(days=1), "closed at"),
    ],
)
def test_the_window_follows_the_server_clock_with_a_grace(campaign, started, now, expected):
    with time_machine.travel(now, tick=False):
        window = campaign.window(started)
    if window.open:
        assert window.phase.name == expected
    else:
        assert window.phase is None and expected in window.refusal


def test_between_phases_the_refusal_names_the_last_and_the_next(campaign):
    with time_machine.travel(CLOSES + dt.timedelta(days=2), tick=False):
        refusal = campaign.window().refusal
    assert refusal == (
        "Submissions are not open now. The phase Development closed at 2026-06-30 23:59 UTC. "
        "The phase Test opens at 2026-07-10 00:00 UTC."
    )


def test_a_late_upload_is_told_why_and_one_begun_between_phases_enters_the_next(campaign):
    """An upload that began in a phase and outlasted its grace is told so (not that an
    open phase closed), with the phase open now; one that began between phases and
    arrives once the next has opened is taken into it."""
    test = Phase.objects.get(name="Test")
    test.opens = CLOSES  # Test opens the moment Development closes
    test.save()
    with time_machine.travel(CLOSES + dt.timedelta(minutes=6), tick=False):
        window = campaign.window(CLOSES - dt.timedelta(seconds=2))
    assert window.phase is None and window.refusal == (
        "Your upload began in the phase Development, which closed at 2026-06-30 23:59 UTC; "
        "it arrived at 2026-07-01 00:05 UTC, after the grace of 5 minutes. "
        "The phase Test is open: submit the run again to enter it there."
    )
    test.opens = TEST_OPENS
    test.save()
    with time_machine.travel(TEST_OPENS + dt.timedelta(seconds=30), tick=False):
        window = campaign.window(TEST_OPENS - dt.timedelta(seconds=1))
    assert window.open and window.phase.name == "Test"
    with time_machine.travel(TEST_CLOSES + dt.timedelta(minutes=6), tick=False):
        window = campaign.window(TEST_CLOSES - dt.timedelta(seconds=2))
    assert window.refusal == (
        "Your upload began in the phase Test, which closed at 2026-07-20 12:00 UTC; "
        "it arrived at 2026-07-20 12:06 UTC, after the grace of 5 minutes."
    )


def test_phases_may_not_overlap_or_close_before_they_open(campaign):
    overlapping = Phase(benchmark=campaign, name="Late", opens=CLOSES, closes=TEST_OPENS)
    overlapping.full_clean()  # touching is fine
    overlapping.opens = CLOSES - dt.timedelta(hours=1)
    with pytest.raises(ValidationError, match="overlaps the phase Development"):
        overlapping.full_clean()
    backwards = Phase(benchmark=campaign, name="Back", opens=TEST_CLOSES, closes=TEST_OPENS)
    with pytest.raises(ValidationError, match="close after it opens"):
        backwards.full_clean()


def test_uploads_outside_a_phase_are_refused_by_form_and_api(client, campaign, participant):
    client.force_login(participant)
    with time_machine.travel(CLOSES + dt.timedelta(minutes=6), tick=False):
        form = post_form(client, run(1))
        api = post_api(client, participant, run(2))
    assert form.status_code == 403
    assert "closed at 2026-06-30 23:59 UTC" in form.content.decode()
    assert api.status_code == 403
    assert "closed at 2026-06-30 23:59 UTC" in api.json()["error"]
    assert not Submission.objects.exists()


def test_a_run_is_stored_with_its_phase_and_team(client, campaign, participant):
    team = Profile.of(participant).create_team("Lab")
    client.force_login(participant)
    with time_machine.travel(OPENS + dt.timedelta(days=1), tick=False):
        assert post_form(client, run(1)).status_code == 302
        assert post_api(client, participant, run(2)).status_code == 201
    phases = set(Submission.objects.values_list("phase__name", "team__name"))
    assert phases == {("Development", "Lab")}
    assert team.submissions.count() == 2


def test_an_upload_begun_before_the_close_is_taken_within_the_grace(campaign, participant):
    """The request's start (stamped by the first middleware) decides, not its end: a
    file that took four minutes to arrive after a 23:58 start is taken at 00:03."""
    factory = RequestFactory()

    def arriving(started: dt.datetime, now: dt.datetime) -> int:
        request = factory.post(
            "/benchmarks/library/submit/",
            {"file": SimpleUploadedFile("r", run(now.minute))},
        )
        request.started_at = started
        with time_machine.travel(now, tick=False):
            return receive_run(request, campaign, participant).status

    late_start = CLOSES - dt.timedelta(minutes=1)
    assert arriving(late_start, CLOSES + dt.timedelta(minutes=4)) == 201
    assert arriving(late_start, CLOSES + dt.timedelta(minutes=6)) == 403
    assert arriving(CLOSES + dt.timedelta(seconds=1), CLOSES + dt.timedelta(minutes=1)) == 403
    assert Submission.objects.get().phase.name == "Development"


def test_the_grace_is_a_setting(campaign, participant, settings):
    settings.UPLOAD_GRACE_SECONDS = 0
    with time_machine.travel(CLOSES + dt.timedelta(seconds=1), tick=False):
        assert not campaign.window(CLOSES - dt.timedelta(minutes=1)).open


def test_a_phase_bounds_runs_per_participant_and_team(client, campaign, participant, organizer):
    phase = Phase.objects.get(name="Test")
    phase.team_total_limit = 2
    phase.save()
    team = Profile.of(participant).create_team("Lab")
    Profile.of(organizer).join_team(team.join_code)
    client.force_login(participant)
    with time_machine.travel(TEST_OPENS + dt.timedelta(hours=1), tick=False):
        assert post_form(client, run(1)).status_code == 302
        failed = Submission.objects.get()
        failed.status = Submission.Status.FAILED  # failed runs do not count
        failed.save()
        assert post_form(client, run(2)).status_code == 302
        assert post_api(client, organizer, run(3)).status_code == 201
        refused = post_api(client, organizer, run(4))
    assert refused.status_code == 429
    assert "Retry-After" not in refused  # a limit on the whole phase does not reset
    assert refused.json()["details"]["limit"] == 2
    assert refused.json()["error"] == "Your team has used all 2 submissions of the phase Test."


def test_a_phase_day_limit_says_when_it_resets(client, campaign, participant):
    """At 23:59 UTC the refusal says the count resets in a minute, in UTC."""
    phase = Phase.objects.get(name="Test")
    phase.daily_limit = 1
    phase.save()
    client.force_login(participant)
    with time_machine.travel(TEST_OPENS + dt.timedelta(hours=23, minutes=58), tick=False):
        assert post_form(client, run(1)).status_code == 302
        refused = post_api(client, participant, run(2))
    assert refused.status_code == 429
    assert refused.json()["error"] == (
        "You have used all 1 submissions today of the phase Test; "
        "the count resets at 2026-07-11 00:00 UTC."
    )


def test_the_board_and_submit_form_show_the_phase_and_its_close(client, campaign, participant):
    client.force_login(participant)
    with time_machine.travel(CLOSES - dt.timedelta(days=2, hours=3), tick=False):
        board = client.get("/benchmarks/library/").content.decode()
        form = client.get("/benchmarks/library/submit/").content.decode()
    assert "Phase <strong>Development</strong> is open until" in board
    assert 'datetime="2026-06-30T23:59:00+00:00" data-local>2026-06-30 23:59 UTC' in board
    assert "2\xa0days, 3\xa0hours left" in board
    assert "Submit a run" in board
    assert "Then <strong>Test</strong> opens at" in board
    assert "in the phase Development" in form
    assert "submissions today" in form
    with time_machine.travel(TEST_CLOSES + dt.timedelta(days=1), tick=False):
        closed = client.get("/benchmarks/library/").content.decode()
        closed_form = client.get("/benchmarks/library/submit/").content.decode()
    assert "Submissions are closed: the last phase, <strong>Test</strong>" in closed
    assert "Submit a run" not in closed
    # no day's count that promises runs left while none is taken
    assert "Submissions are closed" in closed_form and "submissions today" not in closed_form


def test_the_api_lists_the_phases_and_the_quota_names_the_open_one(client, campaign, participant):
    _, raw = ApiToken.issue(participant, "t")
    headers = {"Authorization": f"Bearer {raw}"}
    with time_machine.travel(OPENS + dt.timedelta(days=3), tick=False):
        benchmark = client.get("/api/benchmarks/library/", headers=headers).json()
        quota = client.get("/api/benchmarks/library/quota/", headers=headers).json()
    assert [p["name"] for p in benchmark["phases"]] == ["Development", "Test"]
    assert benchmark["phases"][1]["total_limit"] == 3
    assert benchmark["current_phase"] == "Development"
    assert quota["open"] and quota["phase"] == "Development"
    assert quota["phase_closes"] == "2026-06-30T23:59:00Z"
    with time_machine.travel(TEST_CLOSES + dt.timedelta(days=1), tick=False):
        quota = client.get("/api/benchmarks/library/quota/", headers=headers).json()
    assert not quota["open"] and "closed at 2026-07-20 12:00 UTC" in quota["refusal"]


def test_rrl_says_the_phase_from_the_apis_answer(client, campaign):
    """``rrl board`` and ``rrl submit`` print ``rrl.output.phase_line`` of the benchmark
    as the API gives it: the open phase and its close, the next, or the last."""
    from rrl.output import phase_line

    def line(now: dt.datetime) -> str:
        with time_machine.travel(now, tick=False):
            answer = client.get("/api/benchmarks/library/").json()
        return phase_line(answer, now)

    assert line(OPENS + dt.timedelta(days=1)) == (
        "Phase Development is open until 2026-06-30 23:59 UTC."
    )
    assert line(CLOSES + dt.timedelta(days=1)) == (
        "Submissions are closed; phase Test opens at 2026-07-10 00:00 UTC."
    )
    assert line(TEST_CLOSES + dt.timedelta(days=1)) == (
        "Submissions are closed: phase Test closed at 2026-07-20 12:00 UTC."
    )
    assert phase_line({"phases": [], "current_phase": None}) == ""
