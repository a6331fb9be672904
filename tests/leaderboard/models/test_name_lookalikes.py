"""Names that look alike are refused (``name_key``, ``check_name_free``): a username, display
name or team name may not be, or look like, another account's username or display name or
another team's name, at sign-up, on the account page, when a team is made, and in the
admin. The key is TR39's skeleton of the NFKC case-folded name (ICU)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from leaderboard.models import Profile, Team
from leaderboard.models.people import NAME_TAKEN, check_name_free, name_key

CYRILLIC = "\u043erg1"  # о (CYRILLIC SMALL LETTER O) then "rg1"
PASSWORD = "a-long-enough-password-9"
TAKEN = "That name is, or looks like, another participant&#x27;s or team&#x27;s"


@pytest.mark.parametrize(
    "variant",
    [
        CYRILLIC,
        "ORG1",
        "Org1",
        "\uff4f\uff52\uff47\uff11",  # ｏｒｇ１, full width
        "\u041eRG1",  # Cyrillic capital О
        "orgl",  # 1 and l
        "0rg1",  # TR39 maps digit zero to o
    ],
)
def test_look_alikes_share_a_key(variant):
    assert variant != "org1"
    assert name_key(variant) == name_key("org1")


def test_different_names_keep_different_keys():
    keys = {name_key(n) for n in ("org1", "org2", "org", "orga", "bob", "Bob the Builder")}
    assert len(keys) == 6
    assert name_key("") == ""


def test_check_name_free_looks_at_usernames_display_names_and_teams(participant, other_participant):
    Profile.objects.create(user=other_participant, display_name="org1")
    Profile.of(participant).create_team("Red Team")
    for name in (CYRILLIC, "ALICE", "\u0430lice", "red team", "R\u0435d T\u0435am"):
        with pytest.raises(ValidationError, match="looks like") as raised:
            check_name_free(name)
        assert raised.value.code == "name_taken"
    check_name_free("alice", user=participant)  # one's own username
    check_name_free(CYRILLIC, user=other_participant)  # like one's own display name
    check_name_free("Red Team", team=Team.objects.get())  # the team's own name
    check_name_free("org2")


def signup(client, username: str, display_name: str = ""):
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    return client.post("/accounts/signup/", {**data, "display_name": display_name})


def test_sign_up_refuses_a_look_alike_username_or_display_name(client, db):
    assert signup(client, "org1").status_code == 302
    client.post("/accounts/logout/")
    answer = signup(client, CYRILLIC)
    assert answer.status_code == 400 and TAKEN in answer.content.decode()
    for username in ("ORG1", "\uff4f\uff52\uff47\uff11"):  # Django's own check (NFKC, case)
        answer = signup(client, username)
        assert answer.status_code == 400
        assert "A user with that username already exists." in answer.content.decode()
    assert signup(client, "newbie", display_name=CYRILLIC).status_code == 400
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["org1"]

    # A display name is a name: a new username equal to it (or like it) is refused too.
    assert signup(client, "carol", display_name="The Searchers").status_code == 302
    client.post("/accounts/logout/")
    answer = signup(client, "the_searchers")
    assert answer.status_code == 302  # not alike: "_" is not a space
    client.post("/accounts/logout/")
    Profile.objects.filter(user__username="carol").update(display_name="searcher")
    assert signup(client, "SEARCHER").status_code == 400
    assert signup(client, "s\u0435archer").status_code == 400  # Cyrillic е


def test_sign_up_with_a_display_name_like_ones_own_username_stores_none(client, db):
    assert signup(client, "org1", display_name=CYRILLIC).status_code == 302
    assert Profile.objects.get(user__username="org1").display_name == ""


def test_the_account_page_and_teams_refuse_look_alikes(client, participant, other_participant):
    Profile.of(other_participant).create_team("org1")
    client.force_login(participant)
    answer = client.post("/accounts/profile/", {"action": "profile", "display_name": CYRILLIC})
    assert answer.status_code == 400 and TAKEN in answer.content.decode()
    answer = client.post("/accounts/profile/", {"action": "profile", "display_name": "B\u043eb"})
    assert answer.status_code == 400  # bob's username with a Cyrillic о
    answer = client.post("/accounts/profile/", {"action": "create_team", "team_name": "0RG1"})
    assert answer.status_code == 400 and TAKEN in answer.content.decode()
    answer = client.post("/accounts/profile/", {"action": "create_team", "team_name": "BOB"})
    assert answer.status_code == 400
    assert Team.objects.count() == 1 and Profile.find(participant).display_name == ""
    ok = client.post("/accounts/profile/", {"action": "create_team", "team_name": "Alice's"})
    assert ok.status_code == 302


def test_the_admin_refuses_look_alikes(client, participant, other_participant, django_user_model):
    Profile.of(other_participant).create_team("org1")
    team = Team.objects.get()
    profile = Profile.of(participant)
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)

    renamed = client.post(
        f"/admin/leaderboard/profile/{profile.pk}/change/",
        {
            "display_name": CYRILLIC,
            "notify_runs": "on",
        },
    )
    assert renamed.status_code == 200 and NAME_TAKEN.replace("'", "&#x27;") in (
        renamed.content.decode()
    )
    profile.refresh_from_db()
    assert profile.display_name == ""

    other = Profile.of(participant).create_team("Blue")
    clash = client.post(
        f"/admin/leaderboard/team/{other.pk}/change/", {"name": "ORG1", "join_code": "c" * 12}
    )
    assert clash.status_code == 200 and TAKEN in clash.content.decode()
    other.refresh_from_db()
    assert other.name == "Blue"
    same = client.post(
        f"/admin/leaderboard/team/{team.pk}/change/", {"name": "Org1", "join_code": "d" * 12}
    )
    assert same.status_code == 302  # a team may keep (and re-case) its own name

    user = client.post(
        f"/admin/auth/user/{participant.pk}/change/",
        {"username": "B\u043eb", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"},
    )
    assert user.status_code == 200 and TAKEN in user.content.decode()
    participant.refresh_from_db()
    assert participant.username == "alice"
    added = client.post(
        "/admin/auth/user/add/",
        {
            "username": "ORG1",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "usable_password": "true",
        },
    )
    assert added.status_code == 200 and TAKEN in added.content.decode()
    assert not django_user_model.objects.filter(username="ORG1").exists()
