"""Sign-up; log in, log out and password change come from django.contrib.auth."""

from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from leaderboard.forms import SignupForm


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("my_submissions")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(
        request, "registration/signup.html", {"form": form}, status=400 if form.errors else 200
    )
