"""Sign-up; log in, log out and password change come from django.contrib.auth."""

from django import forms
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional; only organizers see it.")

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


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
