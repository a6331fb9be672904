"""Sign-up and the account page; log in, log out and password change come from
django.contrib.auth.

Both keep ``next``: a visitor sent to log in from a page that needs an account, who
signs up instead, lands back on that page. ``next`` is followed only when it points at
this site (``url_has_allowed_host_and_scheme``, as Django's own log-in view checks it),
never to another host: no open redirect.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache

from leaderboard.models import Profile
from leaderboard.models.people import NAME_LENGTH, check_name_free, clean_name, name_key

DISPLAY_NAME_HELP = (
    "Optional. Shown on leaderboards, run pages and exports instead of your username."
)


def safe_next(request: HttpRequest) -> str:
    """The ``next`` the request carries (form field first, then query), if it is a path
    or URL on this site; "" otherwise."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if not target or not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return ""
    # Back to the log-in or sign-up page itself (its header links carry the page they
    # are on) would show a form to someone now logged in: go home instead.
    path = urlsplit(target).path
    if path.startswith((reverse("login"), reverse("signup"))):
        return ""
    return target


class DisplayNameField(forms.CharField):
    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", NAME_LENGTH * 2)  # collapsed by clean_name
        kwargs.setdefault("help_text", DISPLAY_NAME_HELP)
        super().__init__(label="Display name", **kwargs)


def _clean_display_name(value: str, user) -> str:
    name = clean_name(value, "A display name")
    if name:
        check_name_free(name, user=user)
    return name


class SignupForm(UserCreationForm):
    display_name = DisplayNameField()
    email = forms.EmailField(
        required=False,
        help_text="Optional; for password resets and mail when your runs are scored. "
        "Only organizers see it.",
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "display_name", "email")

    def clean_username(self) -> str:
        """Django's checks, then: not a name, nor like a name, already on the site."""
        username = super().clean_username()  # None when Django found it taken
        if username:
            check_name_free(username)
        return username

    def clean_display_name(self) -> str:
        return _clean_display_name(self.cleaned_data.get("display_name", ""), None)

    def clean(self):
        cleaned = super().clean()
        name = cleaned.get("display_name")
        if name and name_key(name) == name_key(cleaned.get("username") or ""):
            cleaned["display_name"] = ""  # the username, or like it: nothing to store
        return cleaned

    @transaction.atomic
    def save(self, commit: bool = True):
        user = super().save(commit=True)
        Profile.objects.create(user=user, display_name=self.cleaned_data.get("display_name", ""))
        return user


def signup(request: HttpRequest) -> HttpResponse:
    target = safe_next(request)
    if request.user.is_authenticated:
        return redirect(target or "my_submissions")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect(target or "home")
    return render(
        request,
        "registration/signup.html",
        {"form": form, "next": target},
        status=400 if form.errors else 200,
    )


# --- The account page ------------------------------------------------------------------


class ProfileForm(forms.Form):
    display_name = DisplayNameField()
    email = forms.EmailField(
        required=False, help_text="For password resets and run mail. Only organizers see it."
    )
    notify_runs = forms.BooleanField(
        required=False,
        label="Mail me when my runs are scored or fail",
        help_text="Needs an email address above.",
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_display_name(self) -> str:
        return _clean_display_name(self.cleaned_data.get("display_name", ""), self.user)


class CreateTeamForm(forms.Form):
    team_name = forms.CharField(
        label="Team name",
        max_length=NAME_LENGTH * 2,
        help_text="Shown beside the runs you submit in it.",
    )


class JoinTeamForm(forms.Form):
    join_code = forms.CharField(
        label="Join code", max_length=40, help_text="A member of the team has it."
    )


@never_cache
@login_required
def account(request: HttpRequest) -> HttpResponse:
    """Display name, email, run mail; create, join or leave a team. Each form posts
    ``action`` and comes back here (303-style redirect) when it worked."""
    user = request.user
    profile = Profile.of(user)
    initial = {
        "display_name": profile.display_name,
        "email": user.email,
        "notify_runs": profile.notify_runs,
    }
    forms_ = {
        "profile": ProfileForm(initial=initial, user=user),
        "create_team": CreateTeamForm(),
        "join_team": JoinTeamForm(),
    }
    action = request.POST.get("action", "")
    if request.method == "POST":
        done = _act(request, action, profile, forms_)
        if done:
            messages.success(request, done)
            return redirect("account")
    context = {
        "profile": profile,
        "team": profile.team,
        "members": list(profile.team.members()) if profile.team else [],
        "profile_form": forms_["profile"],
        "create_form": forms_["create_team"],
        "join_form": forms_["join_team"],
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "registration/account.html", context, status=status)


def _act(request: HttpRequest, action: str, profile: Profile, forms_: dict) -> str:
    """Carry out one posted action; the message to show, or "" (its form has the errors)."""
    user = request.user
    if action == "profile":
        form = forms_["profile"] = ProfileForm(request.POST, user=user)
        if not form.is_valid():
            return ""
        with transaction.atomic():
            user.email = form.cleaned_data["email"]
            user.save(update_fields=["email"])
            profile.display_name = form.cleaned_data["display_name"]
            profile.notify_runs = form.cleaned_data["notify_runs"]
            profile.save(update_fields=["display_name", "notify_runs"])
        return "Your account is saved."
    if action == "create_team":
        form = forms_["create_team"] = CreateTeamForm(request.POST)
        if form.is_valid():
            try:
                team = profile.create_team(form.cleaned_data["team_name"])
            except ValidationError as error:
                form.add_error("team_name", error)
            else:
                return f"You made the team {team.name}; share its join code with your team-mates."
        return ""
    if action == "join_team":
        form = forms_["join_team"] = JoinTeamForm(request.POST)
        if form.is_valid():
            try:
                team = profile.join_team(form.cleaned_data["join_code"])
            except ValidationError as error:
                form.add_error("join_code", error)
            else:
                return f"You joined {team.name}."
        return ""
    if action == "leave_team" and profile.team_id:
        name = profile.team.name
        profile.leave_team()
        return f"You left {name}."
    messages.error(request, "Nothing to do: use one of the forms below.")
    return ""
