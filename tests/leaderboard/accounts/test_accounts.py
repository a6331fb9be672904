"""Display names, teams and the account page; sign-up keeping ``next`` (and refusing to
send anyone to another site)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.models import Profile, Team
from leaderboard.models.people import MAX_MEMBERS, check_name_free, clean_name

PASSWORD = "a-long-pass-phrase-9"


# --- Models ----------------------------------------------------------------------------


def test_clean_name_collapses_spaces_and_refuses_control_and_format_characters():
    assert clean_name("  Ada   Lovelace \n") == "Ada Lovelace"
    with pytest.raises(ValidationError, match="printable"):
        clean_name("Ada\u202eecalevol")  # right-to-left override: reorders what readers see
    with pytest.raises(ValidationError, match="printable"):
        clean_name("Ada\x00")
    with pytest.raises(ValidationError, match="at most 60"):
        clean_name("x" * 61)


def test_a_profile_is_made_once_and_falls_back_to_the_username(participant):
    assert Profile.find(participant).pk is None  # nothing written by a reader
    assert Profile.find(participant).public_name == "alice"
    profile = Profile.of(participant)
    assert profile.pk and Profile.of(participant).pk == profile.pk
    profile.display_name = "Alice A."
    profile.save()
    assert Profile.find(participant).public_name == "Alice A."


def test_a_name_taken_by_another_participant_is_refused_case_ignored(
    participant, other_participant
):
    Profile.objects.create(user=other_participant, display_name="Bob the Builder")
    for taken in ("BOB", "bob the builder"):  # another's username, another's display name
        with pytest.raises(ValidationError, match="looks like, another participant"):
            check_name_free(taken, user=participant)
    check_name_free("alice", user=participant)  # one's own username
    check_name_free("Bob the Builder", user=other_participant)  # one's own name


def test_make_join_and_leave_a_team(participant, other_participant):
    alice, bob = Profile.of(participant), Profile.of(other_participant)
    team = alice.create_team("  Red   Team ")
    assert team.name == "Red Team" and len(team.join_code) >= 12
    with pytest.raises(ValidationError, match="another participant's or team's"):
        bob.create_team("red team")
    with pytest.raises(ValidationError, match="No team has that join code"):
        bob.join_team("not-the-code")
    with pytest.raises(ValidationError, match="No team has that join code"):
        bob.join_team("   ")
    assert bob.join_team(f" {team.join_code} ") == team
    assert [u.username for u in team.members()] == ["alice", "bob"]
    alice.leave_team()
    assert Team.objects.filter(pk=team.pk).exists()  # bob is still in it
    bob.leave_team()
    assert not Team.objects.filter(pk=team.pk).exists()  # the last one out deletes it


def test_making_a_second_team_leaves_the_first_and_a_full_team_is_refused(db, participant):
    alice = Profile.of(participant)
    first = alice.create_team("First")
    second = alice.create_team("Second")
    assert alice.team == second and not Team.objects.filter(pk=first.pk).exists()
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"m{i}") for i in range(MAX_MEMBERS - 1)
    )
    Profile.objects.bulk_create(Profile(user=u, team=second) for u in users)
    late = Profile.of(get_user_model().objects.create_user("late"))
    with pytest.raises(ValidationError, match=f"has {MAX_MEMBERS} members"):
        late.join_team(second.join_code)


# --- The account page -------------------------------------------------------------------


def test_the_account_page_needs_a_log_in_and_is_linked_from_the_header(client, participant):
    answer = client.get("/accounts/profile/")
    assert answer.status_code == 302
    assert answer["Location"] == "/accounts/login/?next=/accounts/profile/"
    client.force_login(participant)
    page = client.get("/").content.decode()
    assert '<a href="/accounts/profile/">Account</a>' in page
    account = client.get("/accounts/profile/").content.decode()
    assert '<a href="/accounts/password_change/">Change your password</a>' in account
    assert 'href="/accounts/password_reset/"' in account
    assert 'href="/accounts/tokens/"' in account


def test_saving_display_name_email_and_mail_choice(client, participant):
    client.force_login(participant)
    answer = client.post(
        "/accounts/profile/",
        {"action": "profile", "display_name": " Alice  A. ", "email": "alice@example.org"},
    )
    assert answer.status_code == 302 and answer["Location"] == "/accounts/profile/"
    participant.refresh_from_db()
    profile = Profile.find(participant)
    assert participant.email == "alice@example.org"
    assert profile.display_name == "Alice A." and profile.notify_runs is False  # unticked
    page = client.get("/accounts/profile/").content.decode()
    assert "Your account is saved." in page
    assert '<strong class="public-name">Alice A.</strong>' in page


def test_bad_account_input_is_a_form_error_not_a_500(client, participant, other_participant):
    client.force_login(participant)
    taken = client.post("/accounts/profile/", {"action": "profile", "display_name": "Bob"})
    assert taken.status_code == 400
    assert (
        "That name is, or looks like, another participant&#x27;s or team&#x27;s; choose another."
        in taken.content.decode()
    )
    bad_mail = client.post("/accounts/profile/", {"action": "profile", "email": "not-an-address"})
    assert (
        bad_mail.status_code == 400 and "Enter a valid email address." in bad_mail.content.decode()
    )
    nothing = client.post("/accounts/profile/", {"action": "explode"})
    assert nothing.status_code == 400 and "Nothing to do" in nothing.content.decode()
    no_team = client.post("/accounts/profile/", {"action": "leave_team"})
    assert no_team.status_code == 400
    code = client.post("/accounts/profile/", {"action": "join_team", "join_code": "x" * 20})
    assert code.status_code == 400 and "No team has that join code" in code.content.decode()
    assert Profile.find(participant).display_name == ""


def test_teams_through_the_account_page(client, participant, other_participant):
    client.force_login(participant)
    made = client.post("/accounts/profile/", {"action": "create_team", "team_name": "Red"})
    assert made.status_code == 302
    team = Team.objects.get(name="Red")
    page = client.get("/accounts/profile/").content.decode()
    assert f'<code class="join-code" id="join-code">{team.join_code}</code>' in page
    assert "Leave Red" in page

    client.force_login(other_participant)
    assert team.join_code not in client.get("/accounts/profile/").content.decode()
    clash = client.post("/accounts/profile/", {"action": "create_team", "team_name": "RED"})
    assert clash.status_code == 400 and "or team&#x27;s" in clash.content.decode()
    joined = client.post("/accounts/profile/", {"action": "join_team", "join_code": team.join_code})
    assert joined.status_code == 302
    assert "You joined Red." in client.get("/accounts/profile/").content.decode()
    assert Profile.find(other_participant).team == team

    left = client.post("/accounts/profile/", {"action": "leave_team"})
    assert left.status_code == 302 and Profile.find(other_participant).team is None


# --- Sign-up and next= ---------------------------------------------------------------------


def signup_data(**extra) -> dict:
    return {
        "username": "newbie",
        "password1": PASSWORD,
        "password2": PASSWORD,
        **extra,
    }


def test_sign_up_with_a_display_name(client, db):
    answer = client.post("/accounts/signup/", signup_data(display_name="New Bee"))
    assert answer.status_code == 302 and answer["Location"] == "/"
    user = get_user_model().objects.get(username="newbie")
    assert Profile.find(user).display_name == "New Bee"


def test_sign_up_refuses_another_participants_name(client, participant):
    answer = client.post("/accounts/signup/", signup_data(display_name="ALICE"))
    assert answer.status_code == 400
    assert "another participant" in answer.content.decode()
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_next_survives_login_then_sign_up(client, library):
    # A login-required page sends the visitor to log in, with next=.
    target = f"/benchmarks/{library.slug}/submit/"
    answer = client.get(target)
    assert answer["Location"] == f"/accounts/login/?next={target}"
    login_page = client.get(answer["Location"]).content.decode()
    signup_link = f'<a href="/accounts/signup/?next={target}">Sign up</a>'
    assert signup_link in login_page
    form = client.get(f"/accounts/signup/?next={target}").content.decode()
    assert f'<input type="hidden" name="next" value="{target}">' in form
    done = client.post("/accounts/signup/", signup_data(next=target))
    assert done.status_code == 302 and done["Location"] == target
    assert client.get(target).status_code == 200  # logged in, on the page they wanted


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/steal",
        "//evil.example/steal",
        "http:/\\evil.example",
        "javascript:alert(1)",
        "/\\evil.example",
        "/accounts/login/",  # back to a log-in form, now logged in
    ],
)
def test_sign_up_never_redirects_off_site(client, db, target):
    form = client.get("/accounts/signup/", {"next": target}).content.decode()
    assert 'name="next"' not in form
    done = client.post("/accounts/signup/", signup_data(next=target))
    assert done.status_code == 302 and done["Location"] == "/"


def test_a_logged_in_visitor_on_sign_up_goes_to_a_safe_next(client, participant):
    client.force_login(participant)
    assert client.get("/accounts/signup/?next=/accounts/tokens/")["Location"] == "/accounts/tokens/"
    assert (
        client.get("/accounts/signup/?next=https://evil.example/")["Location"] == "/accounts/runs/"
    )


def test_names_and_teams_are_moderated_by_superusers_only(
    client, participant, organizer, django_user_model
):
    team = Profile.of(participant).create_team("Rude Name")
    client.force_login(organizer)  # staff, organizer of benchmarks: no one's account
    assert client.get("/admin/leaderboard/team/").status_code == 403
    assert client.get("/admin/leaderboard/profile/").status_code == 403
    assert "/admin/leaderboard/team/" not in client.get("/admin/").content.decode()
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    assert "Rude Name" in client.get("/admin/leaderboard/team/").content.decode()
    renamed = client.post(
        f"/admin/leaderboard/team/{team.pk}/change/", {"name": "Fine Name", "join_code": "c" * 12}
    )
    assert renamed.status_code == 302
    team.refresh_from_db()
    assert (team.name, team.join_code) == ("Fine Name", "c" * 12)


def test_the_profiles_list_costs_the_same_queries_for_twelve_members_as_for_three(
    client, django_user_model
):
    """Each listed profile's team used to be read with a query of its own (a team may be
    empty, so Django's own select_related of the list left it out)."""

    def members(start: int, count: int) -> None:
        for i in range(start, start + count):
            user = django_user_model.objects.create_user(f"member-{i}")
            team = Team.objects.get_or_create(name=f"Crew {i}")[0]
            Profile.objects.create(user=user, display_name=f"Member {i}", team=team)

    client.force_login(django_user_model.objects.create_superuser("root", password="pw-root-123"))
    members(0, 3)
    with CaptureQueriesContext(connection) as few:
        assert client.get("/admin/leaderboard/profile/").status_code == 200
    members(3, 9)
    with CaptureQueriesContext(connection) as many:
        page = client.get("/admin/leaderboard/profile/").content.decode()
    assert len(many) == len(few)
    assert "Crew 11" in page and "member-11" in page and "Crew 0" in page
