"""The page where a participant issues and revokes API tokens (``/accounts/tokens/``).

Revoking asks first, on a page of its own (``/accounts/tokens/<id>/revoke/``): the
confirmation works without JavaScript, and a stray click on the list deletes nothing.
"""

from __future__ import annotations

import datetime as dt

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache

from leaderboard.models import ApiToken

EXPIRY_CHOICES = [("", "Never"), ("7", "In 7 days"), ("30", "In 30 days"), ("90", "In 90 days")]
EXPIRY_CHOICES += [("365", "In a year")]


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. the machine that submits."
    )
    scope = forms.ChoiceField(
        choices=ApiToken.SCOPES,
        initial=ApiToken.FULL,
        required=False,  # left out: full
        help_text="Submit suits a machine that only uploads runs: it cannot withdraw or "
        "hide them, nor manage tokens. Read suits a script that only reads scores.",
    )
    expires_in_days = forms.TypedChoiceField(
        label="Expires",
        choices=EXPIRY_CHOICES,
        coerce=int,
        empty_value=None,
        required=False,
        help_text="After that the token is refused with 401 “token expired”.",
    )

    def issue(self, user) -> str:
        """The new token (raw) from the cleaned form."""
        days = self.cleaned_data["expires_in_days"]
        expires = timezone.now() + dt.timedelta(days=days) if days else None
        _, raw = ApiToken.issue(
            user,
            self.cleaned_data["name"],
            scope=self.cleaned_data["scope"] or ApiToken.FULL,
            expires=expires,
        )
        return raw


@never_cache
@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """List and issue one's API tokens; a new token is shown once, on this answer."""
    mine = ApiToken.objects.filter(user=request.user)
    form = TokenForm()
    new_token = ""
    status = 200
    if request.method == "POST":
        form = TokenForm(request.POST)
        if form.is_valid() and mine.count() >= ApiToken.MAX_PER_USER:
            form.add_error(None, f"You have {ApiToken.MAX_PER_USER} tokens; revoke one first.")
        if form.is_valid():
            new_token = form.issue(request.user)
            form = TokenForm()
        else:
            status = 400
    context = {"tokens": list(mine), "form": form, "new_token": new_token}
    return render(request, "leaderboard/tokens.html", context, status=status)


@never_cache
@login_required
def revoke(request: HttpRequest, pk: int) -> HttpResponse:
    """GET asks "Revoke this token?"; POST revokes it. Someone else's token is a 404."""
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    if request.method == "POST":
        token.delete()
        messages.success(request, f"Token “{token.name}” revoked: scripts using it now get 401.")
        return redirect("api_tokens")
    return render(request, "leaderboard/token_revoke.html", {"token": token})
