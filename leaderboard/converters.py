"""URL converters, registered on import (urls.py and api/urls.py import this module)."""

from django.urls import register_converter


class IdConverter:
    """A database id: at most 18 digits, so it always fits a 64-bit integer column.

    Django's ``int`` converter accepts any length; an id like 10**30 would then reach the
    database driver and overflow (SQLite raises instead of finding nothing). Longer
    numbers simply do not match, and the reader gets a 404.
    """

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")
