"""The page where a participant issues and revokes API tokens (``/accounts/tokens/``)."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache

from leaderboard.models import ApiToken

MAX_TOKENS = 20


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. the machine that submits."
    )


@never_cache
@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """List, issue and revoke one's API tokens; a new token is shown once, on this answer."""
    mine = ApiToken.objects.filter(user=request.user)
    form = TokenForm()
    new_token = ""
    status = 200
    if request.method == "POST" and "revoke" in request.POST:
        token_id = request.POST["revoke"]
        if token_id.isdigit():
            mine.filter(pk=int(token_id)).delete()
        return HttpResponseRedirect(reverse("api_tokens"))
    if request.method == "POST":
        form = TokenForm(request.POST)
        if form.is_valid() and mine.count() >= MAX_TOKENS:
            form.add_error(None, f"You have {MAX_TOKENS} tokens; revoke one first.")
        if form.is_valid():
            _, new_token = ApiToken.issue(request.user, form.cleaned_data["name"])
            form = TokenForm()
        else:
            status = 400
    context = {"tokens": list(mine), "form": form, "new_token": new_token}
    return render(request, "leaderboard/tokens.html", context, status=status)
