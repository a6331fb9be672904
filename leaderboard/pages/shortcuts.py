"""What every page shares: problem pages, number formats, plots as files, validators.

A ``Problem`` (``reading.visibility``) raised by a view becomes a readable 400/404 page
(``problem_page``), never a server error.
"""

from __future__ import annotations

import re

import resvg_py
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import content_disposition_header, http_date
from django.utils.text import slugify

from evaluation.significance import p_text
from leaderboard.models import Benchmark
from leaderboard.reading.boards import ALPHA, is_count
from leaderboard.reading.freshness import etag, last_change
from leaderboard.reading.lenses import Lens
from leaderboard.reading.visibility import Problem


def problem_page(request: HttpRequest, problem: Problem, benchmark: Benchmark | None = None):
    context = {"message": problem.message, "benchmark": benchmark}
    return render(request, "leaderboard/problem.html", context, status=problem.status)


def fmt(value: float | None, measure: str = "") -> str:
    """trec_eval's four decimals; counts as integers; a dash for no value."""
    if value is None or value != value:
        return "—"
    if is_count(measure):
        return f"{value:.0f}"
    return f"{value:.4f}"


def fmt_p(p: float | None) -> str:
    """Four decimals (more where rounding would carry a p below alpha up to it)."""
    if p is None or p != p:
        return "—"
    return "< 0.0001" if p < 1e-4 else p_text(p, 4, ALPHA)


def p_phrase(p: float | None) -> str:
    """``fmt_p`` in a sentence: "p = 0.0290", "p < 0.0001" (never "p = < 0.0001")."""
    text = fmt_p(p)
    if text == "—":
        return "p not computed"
    return f"p {text}" if text.startswith("<") else f"p = {text}"


# A need menu lists up to this many needs; past that, a text box (7,000 options weigh
# 400 KB and take a quarter of a second to render).
NEED_MENU = 1000


def need_choices(needs: list[str], titles: dict[str, str]) -> list[tuple[str, str]] | None:
    """A figure's need menu, (need id, title) each, or None past :data:`NEED_MENU` needs."""
    return [(n, titles.get(n, "")) for n in needs] if len(needs) <= NEED_MENU else None


PLOT_FORMATS = ("svg", "png")


def plot_response(request: HttpRequest, svg: str, name: str, fmt: str) -> HttpResponse:
    """A plot as a file of its own; ``?download=1`` makes it an attachment named after
    ``name`` (slugified, so a run name cannot break the header).

    SVG: an XML declaration, then the same ``<svg>`` the page embeds (it carries its fonts
    and colours). PNG: that SVG drawn by resvg (``resvg-py``, a self-contained wheel: no
    Cairo) at twice its size on white; its text needs a system font (the Docker image
    installs DejaVu Sans), currentColor draws black."""
    if fmt == "png":
        png = resvg_py.svg_to_bytes(svg_string=str(svg), background="#ffffff", zoom=2)
        response = HttpResponse(png, content_type="image/png")
    else:
        text = '<?xml version="1.0" encoding="UTF-8"?>\n' + svg
        response = HttpResponse(text, content_type="image/svg+xml; charset=utf-8")
    if request.GET.get("download"):
        filename = f"{slugify(name) or 'plot'}.{fmt}"
        response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


# Django masks the CSRF token afresh on every render; the secret under it is in the key.
CSRF_FIELD = re.compile(rb'<input type="hidden" name="csrfmiddlewaretoken" value="[^"]*">')


def validated(request: HttpRequest, response: HttpResponse, lens: Lens) -> HttpResponse:
    """A page read through ``lens`` with its validators, or a 304 when the reader's copy
    (``If-None-Match``) is still current.

    ``ETag``: a hash of who it was rendered for (the user's id and CSRF secret, so a copy
    is never taken for another viewer's, nor kept across a log-in), the lens, the API's
    ``Last-Modified`` (``reading.freshness.last_change``: the scores the viewer may see)
    and the page's bytes (the CSRF field left out), so anything the page shows moves it
    too: a description edited, a test stored. ``Last-Modified`` follows the scores only,
    so ``If-Modified-Since`` alone never answers 304. ``Cache-Control: private,
    no-cache``: the page is the viewer's own and is checked before every reuse."""
    if response.status_code != 200:
        return response
    changed = last_change(lens, request.user)
    modified = http_date(changed.timestamp())
    viewer = f"{request.user.pk or 0} {request.META.get('CSRF_COOKIE', '')}"
    # the moment to the microsecond: two changes within a second move the ETag apart
    shown = f"{lens.judgments_id} {lens.needs} {lens.query()} {changed.isoformat()}"
    tag = etag(viewer, shown, CSRF_FIELD.sub(b"", response.content))
    response["ETag"] = tag
    response["Last-Modified"] = modified
    response["Cache-Control"] = "private, no-cache"
    patch_vary_headers(response, ["Cookie"])
    return get_conditional_response(request, etag=tag, response=response)
