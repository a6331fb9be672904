"""Who may see and change what in the organizers' admin: a staff user the benchmarks they
organise and what belongs to them, a superuser everything (``OrganizerScoped``, mixed into
each model admin); the benchmark list filter offers only the user's benchmarks; "view on
site" leads only to what the user may view in the admin (``view_on_site``); input the
database would refuse with a server error is refused first (``MalformedInputRefused``)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.contenttypes.models import ContentType
from django.contrib.contenttypes.views import shortcut
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse

from leaderboard.models import Benchmark


def organises(request: HttpRequest, benchmark: Benchmark | None) -> bool:
    user = request.user
    if not (user.is_active and user.is_staff):
        return False
    if user.is_superuser or benchmark is None:
        return True
    return benchmark.is_organised_by(user)


class OrganisedBenchmarkFilter(admin.RelatedFieldListFilter):
    """The benchmark list filter, offering only the benchmarks the user organises."""

    def field_choices(self, field, request, model_admin):
        ordering = self.field_admin_ordering(field, request, model_admin)
        mine = Benchmark.objects.organised_by(request.user).values("pk")
        return field.get_choices(
            include_blank=False, ordering=ordering, limit_choices_to={"pk__in": mine}
        )


BENCHMARK_FILTER = ("benchmark", OrganisedBenchmarkFilter)


class MalformedInputRefused:
    """What the admin's pages would send to the database as is, checked first, where
    PostgreSQL or the id column would refuse it with a server error: a null character in
    a list's filters is refused as the admin refuses any unusable filter (the list again,
    with its "invalid" flag), one in an autocomplete's term finds nothing, and an action
    posted with something else than ids changes nothing and says so. The list's own
    search box is checked by Django's search form already."""

    def get_changelist_instance(self, request: HttpRequest):
        if any("\x00" in value for _, values in request.GET.lists() for value in values):
            raise IncorrectLookupParameters("A null character in the list's filters.")
        return super().get_changelist_instance(request)

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str):
        if "\x00" in search_term:
            return queryset.none(), False
        return super().get_search_results(request, queryset, search_term)

    def response_action(self, request: HttpRequest, queryset: QuerySet):
        try:
            for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
                self.model._meta.pk.to_python(value)
        except ValidationError:
            self.message_user(
                request, "Nothing was changed: the selection was not a list of ids.", messages.ERROR
            )
            return None  # the list again, as after an action with nothing selected
        return super().response_action(request, queryset)


class OrganizerScoped(MalformedInputRefused):
    """Permissions by organisership instead of Django's per-model permissions."""

    benchmark_path = "benchmark"

    def _benchmark_of(self, obj) -> Benchmark | None:
        if obj is None:
            return None
        for part in self.benchmark_path.split("__"):
            obj = getattr(obj, part)
        return obj

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.benchmark_path}__organizers": request.user}).distinct()

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return organises(request, self._benchmark_of(obj))

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return organises(request, self._benchmark_of(obj))

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return organises(request, self._benchmark_of(obj))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "benchmark" and not request.user.is_superuser:
            kwargs["queryset"] = Benchmark.objects.organised_by(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


def view_on_site(request: HttpRequest, content_type_id: str, object_id: str) -> HttpResponse:
    """The admin's "view on site" redirect (Django's ``shortcut``), for an object the
    user may view in the admin only: Django's own answers any staff user for any object,
    so another benchmark's slug would be named in the redirect. Anything else is a 404,
    as for an object that does not exist."""
    try:
        model = ContentType.objects.get_for_id(content_type_id).model_class()
    except (ContentType.DoesNotExist, ValueError):
        model = None
    model_admin = admin.site._registry.get(model)
    obj = model_admin and model_admin.get_object(request, object_id)
    if obj is None or not model_admin.has_view_permission(request, obj):
        raise Http404("No such object.")
    return shortcut(request, content_type_id, object_id)
