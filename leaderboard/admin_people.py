"""The participants' side of the Django admin, for superusers: API tokens (seen and
revoked, never shown), display names and teams (moderated), Django's user admin with
usernames checked against every other name (``check_name_free``), and django-axes' lists
of log-in attempts with null characters in their filters refused. Registered when
``leaderboard.admin`` imports it."""

from __future__ import annotations

from axes import admin as axes_admin
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.http import HttpRequest

from leaderboard.admin_scoping import MalformedInputRefused
from leaderboard.models import ApiToken, Profile, Team
from leaderboard.models.people import check_name_free


@admin.register(ApiToken)
class ApiTokenAdmin(MalformedInputRefused, admin.ModelAdmin):
    """Superusers can see and revoke tokens; the raw token is never stored."""

    list_display = ["user", "name", "scope", "expires", "created", "last_used"]
    search_fields = ["user__username", "name"]
    readonly_fields = ["user", "name", "sha256", "scope", "expires", "created", "last_used"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tokens are issued by their owners on /accounts/tokens/

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class SuperusersOnly(MalformedInputRefused):
    """Moderation of participants' names and teams (an offensive display name, a team
    name to fix): superusers only; organizers of one benchmark see no one's account."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made by participants on their account page


@admin.register(Profile)
class ProfileAdmin(SuperusersOnly, admin.ModelAdmin):
    list_display = ["user", "display_name", "team", "notify_runs"]
    list_select_related = ["user", "team"]  # the team may be empty: Django would not join it
    search_fields = ["user__username", "display_name", "team__name"]
    fields = ["user", "display_name", "team", "notify_runs"]
    readonly_fields = ["user"]
    raw_id_fields = ["team"]


@admin.register(Team)
class TeamAdmin(SuperusersOnly, admin.ModelAdmin):
    list_display = ["name", "created"]
    search_fields = ["name"]
    fields = ["name", "join_code", "created"]
    readonly_fields = ["created"]


# --- Users: a username may not be, or look like, another's name ----------------------


class UsernameCheckedChangeForm(UserChangeForm):
    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        if username:
            check_name_free(username, user=self.instance)
        return username


class UsernameCheckedCreationForm(AdminUserCreationForm):
    def clean_username(self) -> str:
        username = super().clean_username()  # None when Django found it taken
        if username:
            check_name_free(username)
        return username


class UsernameCheckedUserAdmin(MalformedInputRefused, UserAdmin):
    """Django's user admin, with usernames checked like sign-up's (``check_name_free``)."""

    form = UsernameCheckedChangeForm
    add_form = UsernameCheckedCreationForm


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), UsernameCheckedUserAdmin)


# --- Log-in attempts: django-axes' lists, their filters checked like the platform's ----


class AccessAttemptAdmin(MalformedInputRefused, axes_admin.AccessAttemptAdmin):
    pass


class AccessLogAdmin(MalformedInputRefused, axes_admin.AccessLogAdmin):
    pass


class AccessFailureLogAdmin(MalformedInputRefused, axes_admin.AccessFailureLogAdmin):
    pass


for model, model_admin in (
    (AccessAttempt, AccessAttemptAdmin),
    (AccessLog, AccessLogAdmin),
    (AccessFailureLog, AccessFailureLogAdmin),
):
    if admin.site.is_registered(model):  # django-axes registers them unless AXES_ENABLE_ADMIN=False
        admin.site.unregister(model)
        admin.site.register(model, model_admin)
