"""Participants own their runs: the owner edits the description and links,
hides and shows a run, withdraws it; nobody else can; warnings from scoring are shown.

Runs go through the real upload form and the engine (tasks in-process), so comparisons
are the pipeline's own.
"""

from __future__ import annotations

import datetime as dt
import io
import json

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from leaderboard.models import Comparison, Phase, Submission
from leaderboard.pipeline.loading import load_judgments
from leaderboard.pipeline.scoring import run_scoring, score
from leaderboard.reading.boards import build_leaderboard
from tests import DEMO

RUN_A = (DEMO / "run-A.txt").read_bytes()
RUN_B = (DEMO / "run-B.txt").read_bytes()
# system-A's documents in another order: a third run, different from both
RUN_C = b"".join(
    line.replace(b"system-A", b"system-C").replace(b"-non-A0", b"-non-C0")
    for line in RUN_A.splitlines(True)
)
UNJUDGED = b"no-such-need Q0 d1 1 1.0 system-W\n"
WARNED = "1 run need(s) without judgments, ignored: no-such-need"


@pytest.fixture
def upload(client, library, django_capture_on_commit_callbacks):
    """Upload a run as ``user`` through the form; scored and compared in-process."""

    def post(user, content: bytes, run_name: str) -> Submission:
        client.force_login(user)
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/benchmarks/library/submit/",
                {"file": SimpleUploadedFile(f"{run_name}.txt", content), "run_name": run_name},
            )
        assert response.status_code == 302, response.content[:500]
        client.logout()
        return Submission.objects.get(run_name=run_name)

    return post


@pytest.fixture
def runs(upload, participant, other_participant):
    """alice's system-A and system-C, bob's system-B: all scored and compared."""
    a = upload(participant, RUN_A, "system-A")
    b = upload(other_participant, RUN_B, "system-B")
    c = upload(participant, RUN_C, "system-C")
    assert {r.status for r in (a, b, c)} == {"scored"}
    return a, b, c


def urls(run: Submission) -> dict[str, str]:
    return {
        "edit": reverse("run_edit", args=[run.pk]),
        "hide": reverse("run_hide", args=[run.pk]),
        "unhide": reverse("run_unhide", args=[run.pk]),
        "withdraw": reverse("run_withdraw", args=[run.pk]),
    }


def board_names(client, slug: str = "library") -> list[str]:
    data = json.loads(client.get(f"/benchmarks/{slug}/leaderboard.json").content)
    return [row["run"] for row in data["runs"]]


# --- Editing ---------------------------------------------------------------------------


def test_the_owner_edits_the_description_and_links(client, runs, participant):
    a = runs[0]
    client.force_login(participant)
    page = client.get(urls(a)["edit"])
    assert page.status_code == 200
    assert 'name="paper_url"' in page.content.decode()
    response = client.post(
        urls(a)["edit"],
        {
            "description": "BM25 with RM3\nk1=0.9",
            "paper_url": "https://arxiv.org/abs/2101.00001",
            "code_url": "github.com/alice/system-a",  # no scheme: https is assumed
        },
    )
    assert response.status_code == 302 and response["Location"] == a.get_absolute_url()
    a.refresh_from_db()
    assert a.description == "BM25 with RM3\nk1=0.9"
    assert a.paper_url == "https://arxiv.org/abs/2101.00001"
    assert a.code_url == "https://github.com/alice/system-a"
    client.logout()
    run_page = client.get(a.get_absolute_url()).content.decode()
    assert "<p>BM25 with RM3\nk1=0.9</p>" in run_page  # Markdown: one paragraph
    assert '<a href="https://arxiv.org/abs/2101.00001" rel="nofollow ugc noopener">Paper</a>' in (
        run_page
    )
    board = client.get("/benchmarks/library/").content.decode()
    assert (
        '<span class="run-links"><a href="https://arxiv.org/abs/2101.00001" rel="nofollow ugc '
        'noopener">paper</a> <a href="https://github.com/alice/system-a" rel="nofollow ugc '
        'noopener">code</a></span>'
    ) in board


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("paper_url", "javascript:alert(1)", "Enter a valid URL."),
        ("code_url", "ftp://example.org/code.tgz", "Enter a valid URL."),
        ("paper_url", "not a url at all", "Enter a valid URL."),
        ("description", "x" * 2001, "at most 2000 characters"),
    ],
)
def test_bad_details_are_refused_with_a_message(client, runs, participant, field, value, message):
    a = runs[0]
    client.force_login(participant)
    fields = {"description": "kept", "paper_url": "", "code_url": "", field: value}
    response = client.post(urls(a)["edit"], fields)
    assert response.status_code == 400
    assert message in response.content.decode()
    a.refresh_from_db()
    assert (a.description, a.paper_url, a.code_url) == ("", "", "")


# --- Who may -----------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["edit", "hide", "unhide", "withdraw"])
def test_only_the_owner_may_change_a_run(
    client, runs, other_participant, organizer, library, action
):
    a = runs[0]
    library.organizers.add(organizer)
    post = {"confirm": "on", "description": "mine now", "paper_url": "", "code_url": ""}
    # anonymous: sent to log in, nothing changes
    for method in (client.get, client.post):
        response = method(urls(a)[action], post)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    # another participant, and for editing and withdrawing an organizer (who has the
    # admin): 403. Organizers may hide and show runs (tested below).
    refused = [other_participant] + ([] if action in ("hide", "unhide") else [organizer])
    for user in refused:
        client.force_login(user)
        assert client.get(urls(a)[action]).status_code == 403
        assert client.post(urls(a)[action], post).status_code == 403
    a.refresh_from_db()
    assert (a.status, a.is_hidden, a.description) == ("scored", False, "")
    # a run the user may not even see is a 404, not a 403
    Submission.objects.filter(pk=a.pk).update(is_hidden=True)
    client.force_login(other_participant)
    assert client.post(urls(a)[action], post).status_code == 404
    assert client.post(f"/submissions/999999/{action}/", post).status_code == 404


def test_the_models_operations_check_the_owner(runs, other_participant):
    a = runs[0]
    with pytest.raises(PermissionDenied):
        a.withdraw(by=other_participant)
    with pytest.raises(PermissionDenied):
        a.hide(other_participant)
    with pytest.raises(PermissionDenied):
        a.unhide(other_participant)
    with pytest.raises(PermissionDenied):
        a.edit(other_participant, description="no")
    a.refresh_from_db()
    assert (a.status, a.is_hidden, a.description) == ("scored", False, "")


def test_the_run_page_offers_the_actions_to_the_owner_only(client, runs, participant):
    a = runs[0]
    assert urls(a)["withdraw"] not in client.get(a.get_absolute_url()).content.decode()
    client.force_login(participant)
    page = client.get(a.get_absolute_url()).content.decode()
    for action in ("edit", "hide", "withdraw"):
        assert f'href="{urls(a)[action]}"' in page
    my_runs = client.get("/accounts/runs/").content.decode()
    for action in ("edit", "hide", "withdraw"):
        assert f'href="{urls(a)[action]}"' in my_runs


# --- Confirmation ----------------------------------------------------------------------


@pytest.mark.parametrize("action", ["hide", "withdraw"])
def test_nothing_changes_without_the_confirmation(client, runs, participant, action):
    a = runs[0]
    client.force_login(participant)
    page = client.get(urls(a)[action])
    assert page.status_code == 200
    html = page.content.decode()
    assert 'type="checkbox" name="confirm"' in html and "required" in html
    response = client.post(urls(a)[action], {})
    assert response.status_code == 400
    assert "Tick the box to confirm." in response.content.decode()
    a.refresh_from_db()
    assert (a.status, a.is_hidden) == ("scored", False)


def test_the_withdraw_page_says_it_is_final_and_keeps_the_day_slot(client, runs, participant):
    client.force_login(participant)
    html = client.get(urls(runs[0])["withdraw"]).content.decode()
    assert "Withdrawing is final." in html
    assert "still counts against the day's limit of 3 (you have used 2 today, UTC)" in html


def test_the_withdraw_page_counts_the_day_as_the_open_phase_does(
    client, library, upload, participant
):
    """In a campaign the day's limit and count are the open phase's, as on the submit
    form, and a run of a closed phase is in no count of today."""
    now = timezone.now()
    old = Phase.objects.create(
        benchmark=library, name="Dev", opens=now - dt.timedelta(days=2), closes=now
    )
    Phase.objects.create(
        benchmark=library,
        name="Test",
        opens=now,
        closes=now + dt.timedelta(days=1),
        daily_limit=2,
    )
    a = upload(participant, RUN_A, "system-A")
    c = upload(participant, RUN_C, "system-C")
    Submission.objects.filter(pk=c.pk).update(phase=old)
    client.force_login(participant)
    html = client.get(urls(a)["withdraw"]).content.decode()
    assert (
        "still counts against the day's limit of 2 in the phase Test (you have used 1 today, UTC)"
        in html
    )
    html = client.get(urls(c)["withdraw"]).content.decode()
    assert "Neither hiding nor withdrawing gives back a submission." in html
    assert "still counts against" not in html


# --- Hiding ------------------------------------------------------------------------------


def test_a_hidden_run_is_gone_for_the_public_and_there_for_its_owner(
    client, runs, participant, other_participant
):
    a, b, c = runs
    client.force_login(participant)
    response = client.post(urls(a)["hide"], {"confirm": "on"})
    assert response.status_code == 302
    a.refresh_from_db()
    assert a.is_hidden
    assert sorted(board_names(client)) == ["system-A", "system-B", "system-C"]
    board = client.get("/benchmarks/library/").content.decode()
    assert '<span class="badge hidden">hidden</span>' in board
    client.force_login(other_participant)
    assert sorted(board_names(client)) == ["system-B", "system-C"]
    assert client.get(a.get_absolute_url()).status_code == 404
    client.logout()
    assert sorted(board_names(client)) == ["system-B", "system-C"]
    assert "system-A" not in client.get("/benchmarks/library/leaderboard.csv").content.decode()
    assert "system-A" not in client.get("/benchmarks/library/significance/").content.decode()
    assert client.get(reverse("compare", args=["library", a.pk, b.pk])).status_code == 404
    assert client.get(a.get_absolute_url()).status_code == 404
    # the public family against #1 has the two runs the public sees
    assert build_leaderboard(a.benchmark, _anonymous()).family_size == 1


def _anonymous() -> AnonymousUser:
    return AnonymousUser()


def test_showing_a_run_again_tests_the_pairs_missed_while_hidden(
    client, upload, participant, other_participant, django_capture_on_commit_callbacks
):
    a = upload(participant, RUN_A, "system-A")
    client.force_login(participant)
    client.post(urls(a)["hide"], {"confirm": "on"})
    b = upload(other_participant, RUN_B, "system-B")  # not tested against hidden A
    assert not Comparison.objects.between(a, b).exists()
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(urls(a)["unhide"], {"confirm": "on"})
    assert response.status_code == 302
    a.refresh_from_db()
    assert not a.is_hidden
    assert Comparison.objects.between(a, b).filter(measure="map").exists()
    client.logout()
    assert sorted(board_names(client)) == ["system-A", "system-B"]


# --- Withdrawing -------------------------------------------------------------------------


def test_a_withdrawn_run_leaves_every_board_export_and_family(
    client, runs, participant, other_participant
):
    a, b, c = runs
    stored = (
        Comparison.objects.filter(submission_a=a).count()
        + Comparison.objects.filter(submission_b=a).count()
    )
    assert stored > 0
    client.force_login(participant)
    response = client.post(urls(a)["withdraw"], {"confirm": "on"})
    assert response.status_code == 302
    a.refresh_from_db()
    assert a.status == "withdrawn" and a.withdrawn_at is not None
    # the record is kept: the owner's run page, the stored comparisons
    page = client.get(a.get_absolute_url())
    assert page.status_code == 200 and "kept for the record" in page.content.decode()
    assert (
        Comparison.objects.filter(submission_a=a).count()
        + Comparison.objects.filter(submission_b=a).count()
        == stored
    )
    # off the board, for its owner too, and out of the family against #1
    for user in (participant, other_participant, None):
        if user is None:
            client.logout()
        else:
            client.force_login(user)
        assert sorted(board_names(client)) == ["system-B", "system-C"]
        assert "system-A" not in client.get("/benchmarks/library/").content.decode()
        assert "system-A" not in client.get("/benchmarks/library/leaderboard.csv").content.decode()
        matrix = client.get("/benchmarks/library/significance/").content.decode()
        assert "system-A" not in matrix and "over the 1 pair." in matrix
    client.logout()
    assert build_leaderboard(a.benchmark, _anonymous()).family_size == 1
    assert client.get(reverse("compare", args=["library", a.pk, b.pk])).status_code == 404
    assert client.get(reverse("compare_json", args=["library", b.pk, a.pk])).status_code == 404
    assert client.get(reverse("submission_csv", args=[a.pk])).status_code == 404
    assert client.get(a.get_absolute_url()).status_code == 404


def test_withdrawing_is_final(client, runs, participant):
    a = runs[0]
    client.force_login(participant)
    client.post(urls(a)["withdraw"], {"confirm": "on"})
    for action in ("edit", "hide"):
        response = client.post(urls(a)[action], {"confirm": "on", "description": "x"})
        assert response.status_code == 400
        assert "is withdrawn: it is kept as it was" in response.content.decode()
    again = client.post(urls(a)["withdraw"], {"confirm": "on"}, follow=True)
    assert again.status_code == 200 and "was already withdrawn" in again.content.decode()
    a.refresh_from_db()
    assert (a.status, a.is_hidden, a.description) == ("withdrawn", False, "")
    assert urls(a)["edit"] not in client.get(a.get_absolute_url()).content.decode()


def test_withdrawing_does_not_give_back_a_submission_of_the_day(
    client, runs, participant, django_capture_on_commit_callbacks
):
    """library's limit is 3 a day; alice has used 2 (system-A, system-C)."""
    client.force_login(participant)
    client.post(urls(runs[0])["withdraw"], {"confirm": "on"})
    client.post(urls(runs[2])["hide"], {"confirm": "on"})
    with django_capture_on_commit_callbacks(execute=True):
        third = client.post(
            "/benchmarks/library/submit/",
            {
                "file": SimpleUploadedFile("d.txt", RUN_B.replace(b"system-B", b"d")),
                "run_name": "d",
            },
        )
    assert third.status_code == 302
    fourth = client.post(
        "/benchmarks/library/submit/",
        {"file": SimpleUploadedFile("e.txt", RUN_B.replace(b"system-B", b"e")), "run_name": "e"},
    )
    assert fourth.status_code == 429
    assert "You have used all 3 submissions for today" in fourth.content.decode()


def test_a_run_withdrawn_while_scored_keeps_nothing(library, participant):
    from django.core.files.base import ContentFile

    run = Submission.objects.create(
        benchmark=library,
        participant=participant,
        run_name="late",
        file=ContentFile(RUN_A, name="late.txt"),
        status=Submission.Status.RUNNING,
        task_id="t1",
    )
    assert run.withdraw(by=participant)
    assert score(run, library.latest_judgments) is None
    run.refresh_from_db()
    assert run.status == "withdrawn" and not run.results.exists()
    assert not run.withdraw(by=participant)  # once is enough


def test_withdrawing_the_last_run_not_rescored_lets_new_judgments_in(
    runs, participant, library, django_capture_on_commit_callbacks
):
    a, b, c = runs
    current = library.current_judgments_id
    qrels = (DEMO / "qrels.txt").read_bytes() + b"atwood 0 extra-doc 1\n"
    with django_capture_on_commit_callbacks(execute=False):  # rescoring queued, not run
        v2 = load_judgments(library, io.BytesIO(qrels), "qrels-v2.txt")
    for run in (b, c):
        assert run_scoring(run.pk, f"rescore-{run.pk}").status == "scored"
    library.refresh_from_db()
    assert library.current_judgments_id == current  # system-A still holds it back
    a.refresh_from_db()
    a.withdraw(by=participant)
    library.refresh_from_db()
    assert library.current_judgments_id == v2.pk


# --- Warnings from scoring --------------------------------------------------------------


def test_warnings_are_counted_in_my_runs_and_listed_on_the_run_page(client, upload, participant):
    run = upload(participant, RUN_A + UNJUDGED.replace(b"system-W", b"system-A"), "warned")
    assert run.status == "scored" and WARNED in run.warnings
    client.force_login(participant)
    my_runs = client.get("/accounts/runs/").content.decode()
    count = len(run.warnings)
    label = f"{count} warning{'s' if count > 1 else ''}"
    assert f'href="{run.get_absolute_url()}#warnings"' in my_runs
    assert f">{label}</a>" in my_runs
    page = client.get(run.get_absolute_url()).content.decode()
    assert 'id="warnings"' in page and "They are not errors." in page
    assert f"<li>{WARNED}</li>" in page
    assert f'<span class="badge warn-count">{count}</span>' in page


def test_each_warning_is_listed_once(client, upload, participant):
    """A run with two tags: the reader's warning is in both the run's and the
    evaluation's lists; it is stored, and shown, once."""
    lines = RUN_A.splitlines(True)
    lines[0] = lines[0].replace(b"system-A", b"other-tag")
    run = upload(participant, b"".join(lines), "two-tags")
    tagged = [w for w in run.warnings if "2 different tags" in w]
    assert len(tagged) == 1, run.warnings
    client.force_login(participant)
    page = client.get(run.get_absolute_url()).content.decode()
    assert page.count("2 different tags in the run") == 1


# --- Who hid a run -------------------------------------------------------------------------


def test_the_owner_cannot_show_a_run_the_organizers_hid(
    client, runs, participant, organizer, library, django_capture_on_commit_callbacks
):
    a = runs[0]
    library.organizers.add(organizer)
    client.force_login(organizer)
    organizer_page = client.get(a.get_absolute_url()).content.decode()
    assert f'href="{urls(a)["hide"]}"' in organizer_page
    assert client.post(urls(a)["hide"], {"confirm": "on"}).status_code == 302
    a.refresh_from_db()
    assert (a.is_hidden, a.hidden_by, a.hidden_by_organizer) == (True, organizer, True)
    organizer_page = client.get(a.get_absolute_url()).content.decode()
    assert "Hidden by the benchmark's organizers (olga)." in organizer_page

    client.force_login(participant)
    page = client.get(a.get_absolute_url()).content.decode()
    assert "Hidden by the benchmark's organizers; ask them to show it again." in page
    assert f'href="{urls(a)["unhide"]}"' not in page  # no button that cannot work
    assert f'href="{urls(a)["withdraw"]}"' in page  # withdrawing stays the owner's
    my_runs = client.get("/accounts/runs/").content.decode()
    assert "hidden by the organizers" in my_runs and f'href="{urls(a)["unhide"]}"' not in my_runs
    for method in (client.get, client.post):
        refused = method(urls(a)["unhide"], {"confirm": "on"})
        assert refused.status_code == 403
        assert "hidden by the benchmark&#x27;s organizers; ask them" in refused.content.decode()
    a.refresh_from_db()
    assert a.is_hidden and a.hidden_by_organizer
    # hiding it again as the owner does not turn the organizers' hide into theirs
    assert client.post(urls(a)["hide"], {"confirm": "on"}).status_code == 302
    a.refresh_from_db()
    assert a.hidden_by_organizer and a.hidden_by == organizer
    client.logout()
    assert "system-A" not in board_names(client)

    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(urls(a)["unhide"], {"confirm": "on"}).status_code == 302
    a.refresh_from_db()
    assert (a.is_hidden, a.hidden_by, a.hidden_by_organizer) == (False, None, False)
    client.logout()
    assert "system-A" in board_names(client)


def test_the_owner_shows_again_a_run_they_hid_and_organizers_any(
    client, runs, participant, organizer, library
):
    a, _, c = runs
    client.force_login(participant)
    client.post(urls(a)["hide"], {"confirm": "on"})
    a.refresh_from_db()
    assert (a.is_hidden, a.hidden_by, a.hidden_by_organizer) == (True, participant, False)
    page = client.get(a.get_absolute_url()).content.decode()
    assert "Hidden by you." in page and f'href="{urls(a)["unhide"]}"' in page
    assert f'href="{urls(a)["unhide"]}"' in client.get("/accounts/runs/").content.decode()
    assert client.post(urls(a)["unhide"], {"confirm": "on"}).status_code == 302
    a.refresh_from_db()
    assert not a.is_hidden

    # an organizer's hide takes over the owner's: then only the organizers undo it
    assert c.hide(participant)
    library.organizers.add(organizer)
    assert not c.hide(organizer)  # hidden already: nothing public changed
    c.refresh_from_db()
    assert (c.hidden_by, c.hidden_by_organizer) == (organizer, True)
    with pytest.raises(PermissionDenied, match="hidden by the benchmark's organizers"):
        c.unhide(participant)
    assert c.unhide(organizer) and not c.is_hidden


def test_the_admin_hides_as_the_organizers(client, runs, participant, organizer, library):
    a = runs[0]
    library.organizers.add(organizer)
    client.force_login(organizer)
    response = client.post(
        "/admin/leaderboard/submission/", {"action": "hide", "_selected_action": [a.pk]}
    )
    assert response.status_code == 302
    a.refresh_from_db()
    assert (a.is_hidden, a.hidden_by, a.hidden_by_organizer) == (True, organizer, True)
    assert "ask them" in a.why_not_unhide(participant)
