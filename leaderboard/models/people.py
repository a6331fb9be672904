"""Participants as the pages show them: a display name, a team, whether run mail is wanted.

``Profile`` is one row per user, made when it is first needed (``Profile.of``): users
created before profiles existed, by ``createsuperuser`` or in the admin, have none until
then, and every reader of a profile treats "none" as the defaults (the username, no
team, mail on). ``Team`` is a name and a join code: a member creates it, shares the
code, others join with it; the last member to leave deletes it. The code is shown to
members only; there is no other way in, so a team cannot be joined by guessing its name.

Names that a board shows side by side must not pass for one another: ``check_name_free``
compares a username, display name or team name with every other one under ``name_key``
(Unicode TR39's confusable skeleton of the NFKC case-folded name), so ``оrg1`` with a
Cyrillic о, ``ORG1`` and the full-width ``ｏｒｇ１`` are all taken once ``org1`` is.

Imports nothing else of ``models``.
"""

from __future__ import annotations

import functools
import secrets
import unicodedata

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models.functions import Lower
from icu import SpoofChecker

NAME_LENGTH = 60
MAX_MEMBERS = 50


def clean_name(value: str, what: str = "A name") -> str:
    """A display or team name as stored: whitespace runs collapsed, stripped, printable
    characters only (no control or format characters, which can reorder what a reader
    sees), at most ``NAME_LENGTH``. Raises ``ValidationError`` naming what is wrong."""
    text = " ".join(value.split())
    if any(unicodedata.category(c) in {"Cc", "Cf", "Co", "Cs"} for c in text):
        raise ValidationError(f"{what} may contain only printable characters.")
    if len(text) > NAME_LENGTH:
        raise ValidationError(f"{what} may be at most {NAME_LENGTH} characters.")
    return text


_SPOOF = SpoofChecker()  # ICU's TR39 implementation; getSkeleton is thread-safe
NAME_TAKEN = "That name is, or looks like, another participant's or team's; choose another."


@functools.lru_cache(maxsize=65536)  # names recur on every check; a key is a short string
def name_key(name: str) -> str:
    """The form in which two names that look alike are equal: NFKC (full-width and other
    compatibility forms to the plain ones), case-folded, then the confusable skeleton of
    Unicode TR39 (UTS #39, section 4) from ICU's ``SpoofChecker`` with the data of
    ``confusables.txt``, so that a Cyrillic ``о`` and a Latin ``o``, or ``1`` and ``l``,
    map to one character. A skeleton may hold capitals (``0`` maps to ``O``), so it is
    case-folded and skeletonised once more. Example: ``name_key("0RG1") == "orgl"``."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return _SPOOF.getSkeleton(0, _SPOOF.getSkeleton(0, folded).casefold())


def check_name_free(name: str, *, user=None, team=None) -> None:
    """Raise ``ValidationError`` (code ``name_taken``) if ``name`` is, or looks like
    (``name_key``), the username or display name of any user but ``user``, or the name of
    any team but ``team``.

    The keys are computed in Python over every name (ICU is not in the database), so the
    check is linear in the number of accounts and teams; it runs only when a name is
    chosen, and ``name_key`` remembers the keys it computed."""
    from django.contrib.auth import get_user_model

    key = name_key(name)
    if not key:
        return
    uid, tid = getattr(user, "pk", None), getattr(team, "pk", None)
    usernames = get_user_model().objects.exclude(pk=uid).values_list("username", flat=True)
    displays = (
        Profile.objects.exclude(user_id=uid)
        .exclude(display_name="")
        .values_list("display_name", flat=True)
    )
    teams = Team.objects.exclude(pk=tid).values_list("name", flat=True)
    for names in (usernames, displays, teams):
        if any(name_key(other) == key for other in names.iterator(chunk_size=2000)):
            raise ValidationError(NAME_TAKEN, code="name_taken")


def new_join_code() -> str:
    """12 URL-safe characters (72 random bits): shared by hand, never guessed."""
    return secrets.token_urlsafe(9)


class Team(models.Model):
    name = models.CharField(max_length=NAME_LENGTH)
    join_code = models.CharField(max_length=20, unique=True, default=new_join_code)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="unique_team_name_ci"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """Forms and the admin: the name cleaned, and not another's (``check_name_free``)."""
        self.name = clean_name(self.name, "A team name")
        check_name_free(self.name, team=self)

    def members(self) -> models.QuerySet:
        from django.contrib.auth import get_user_model

        return get_user_model().objects.filter(profile__team=self).order_by("username")


class Profile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    display_name = models.CharField(
        max_length=NAME_LENGTH,
        blank=True,
        help_text="Shown on leaderboards and run pages instead of the username.",
    )
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="profiles"
    )
    notify_runs = models.BooleanField(
        "mail me when my runs are scored or fail",
        default=True,
    )

    def __str__(self) -> str:
        return self.public_name

    @classmethod
    def of(cls, user) -> Profile:
        """The user's profile, made (with the defaults) if there is none yet."""
        profile, _ = cls.objects.select_related("team").get_or_create(user=user)
        return profile

    @classmethod
    def find(cls, user) -> Profile:
        """The user's profile, or (without writing one) an unsaved one with the defaults."""
        return cls.objects.select_related("team").filter(user=user).first() or cls(user=user)

    @property
    def public_name(self) -> str:
        return self.display_name or self.user.get_username()

    def clean(self) -> None:
        """The admin: the display name cleaned, and not another's (``check_name_free``)."""
        self.display_name = clean_name(self.display_name, "A display name")
        if self.display_name:
            check_name_free(self.display_name, user=self.user)

    def create_team(self, name: str) -> Team:
        """A new team named ``name`` with this participant as its first member (leaving
        any team they were in). Raises ``ValidationError`` if the name is, or looks like,
        another participant's or team's (the participant's own names are theirs to use)."""
        name = clean_name(name, "A team name")
        if not name:
            raise ValidationError("Give the team a name.")
        with transaction.atomic():
            check_name_free(name, user=self.user)
            team = Team.objects.create(name=name)
            self._move_to(team)
        return team

    def join_team(self, code: str) -> Team:
        """Join the team whose join code is ``code``. Raises ``ValidationError`` for an
        unknown code or a full team."""
        code = code.strip()
        with transaction.atomic():
            team = Team.objects.select_for_update().filter(join_code=code).first() if code else None
            if team is None:
                raise ValidationError("No team has that join code; ask a member for it.")
            if team.pk != self.team_id and team.profiles.count() >= MAX_MEMBERS:
                raise ValidationError(
                    f"{team.name} has {MAX_MEMBERS} members, the most a team may."
                )
            self._move_to(team)
        return team

    def leave_team(self) -> None:
        with transaction.atomic():
            self._move_to(None)

    def _move_to(self, team: Team | None) -> None:
        """Inside a transaction: the old team's row is locked, so two last members
        leaving at once cannot both miss the other's leaving and leave it empty."""
        old = self.team_id
        if old is not None:
            list(Team.objects.select_for_update().filter(pk=old))
        self.team = team
        self.save(update_fields=["team"])
        if old is not None and old != getattr(team, "pk", None):
            # The last one out deletes the team (and its join code).
            Team.objects.filter(pk=old, profiles__isnull=True).delete()
