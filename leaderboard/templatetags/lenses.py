"""``{% lens_url 'compare' slug a b measure=m %}``: a link that keeps the reader's lens.

``{% url %}`` with the page's ``lens`` query (``?judgments=``, ``?needs=``, only those the
reader asked for: ``Lens.link``) and the keyword arguments as further query parameters (a
None value left out). Every in-benchmark link of the pages that read through a lens is
written with it, so a reader on ``?judgments=2&needs=private`` stays there.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.urls import reverse

register = template.Library()


@register.simple_tag(takes_context=True)
def lens_url(context, name: str, *args, **params) -> str:
    path = reverse(name, args=args)
    lens = context.get("lens")
    if lens is not None:
        return lens.link(path, **params)
    query = urlencode({key: value for key, value in params.items() if value is not None})
    return f"{path}?{query}" if query else path
