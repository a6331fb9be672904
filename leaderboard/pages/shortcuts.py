"""What every page shares: finding what the reader may see, problem pages, number formats.

``visible_benchmark`` and ``visible_submission`` are the pages' ``get_object_or_404``:
hidden, unpublished and withdrawn things are a 404 for whoever may not see them. A
``Problem`` raised by a view becomes a readable 400/404 page (``problem_page``), never a
server error.
"""

from __future__ import annotations

import resvg_py
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import content_disposition_header
from django.utils.text import slugify

from leaderboard.models import Benchmark, Result, Submission
from leaderboard.pages.boards import is_count


class Problem(Exception):
    """A request the page cannot answer, with what to tell the reader."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def problem_page(request: HttpRequest, problem: Problem, benchmark: Benchmark | None = None):
    context = {"message": problem.message, "benchmark": benchmark}
    return render(request, "leaderboard/problem.html", context, status=problem.status)


def visible_benchmark(request: HttpRequest, slug: str) -> Benchmark:
    return get_object_or_404(
        Benchmark.objects.visible_to(request.user).select_related("current_judgments"), slug=slug
    )


def fmt(value: float | None, measure: str = "") -> str:
    """trec_eval's four decimals; counts as integers; a dash for no value."""
    if value is None or value != value:
        return "—"
    if is_count(measure):
        return f"{value:.0f}"
    return f"{value:.4f}"


def fmt_p(p: float | None) -> str:
    if p is None or p != p:
        return "—"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def p_phrase(p: float | None) -> str:
    """``fmt_p`` in a sentence: "p = 0.0290", "p < 0.0001" (never "p = < 0.0001")."""
    text = fmt_p(p)
    if text == "—":
        return "p not computed"
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def visible_submission(request: HttpRequest, pk: int) -> Submission:
    submission = get_object_or_404(
        Submission.objects.select_related("benchmark", "participant", "judgments"), pk=pk
    )
    if not submission.is_visible_to(request.user) or not (
        submission.benchmark.published or submission.benchmark.is_organised_by(request.user)
    ):
        raise Http404("No such run.")
    return submission


def shown_result(submission: Submission) -> Result | None:
    """The result on the benchmark's current judgments, else the newest one (rescoring)."""
    results = list(submission.results.select_related("judgments").order_by("-judgments__version"))
    current = submission.benchmark.current_judgments_id
    for result in results:
        if result.judgments_id == current:
            return result
    return results[0] if results else None


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
