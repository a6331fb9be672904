"""Organizers' Markdown (a benchmark's description, rules and data) as safe HTML.

markdown-it-py renders CommonMark (plus tables and strikethrough); the nh3 sanitiser then
keeps only the tags Markdown produces and a few harmless inline ones, only ``href`` and
``title`` on links, and only http, https and mailto URLs: a script element, an ``on*``
attribute, a ``style`` (which the Content-Security-Policy would refuse anyway) or a
``javascript:`` link never reaches the page, whatever an organizer (or a stolen organizer
account) types. Headings are moved down two levels (``#`` becomes ``<h3>``) so that they
sit under the page's own ``<h1>`` and section ``<h2>``s.
"""

from __future__ import annotations

from html import unescape

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
TAGS = {
    "p", "br", "hr", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "code", "pre", "kbd",
    "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "s",
    "del", "sup", "sub", "dl", "dt", "dd", "abbr",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "ol": {"start"}}
SCHEMES = {"http", "https", "mailto"}
SHIFT = 2  # '#' is an <h3>: below the page's <h1> and its sections' <h2>


def _html(text: str) -> str:
    tokens = _MD.parse(text or "")
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + SHIFT)}"
    return _MD.renderer.render(tokens, _MD.options, {})


def markdown_html(text: str) -> SafeString:
    """``text`` (Markdown) as sanitised HTML, safe to put in a page as it is."""
    if not text or not text.strip():
        return mark_safe("")
    clean = nh3.clean(
        _html(text),
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308 (sanitised by nh3 just above)


def markdown_text(text: str) -> str:
    """``text`` (Markdown) as plain text, for a summary line (the template escapes it)."""
    return " ".join(unescape(nh3.clean(_html(text), tags=set())).split())
