"""A built pool's export (``need_id 0 doc_id -1`` per line) as a download, served by the
organizers' pool page and the organizer API alike."""

from __future__ import annotations

from django.http import FileResponse, Http404
from django.utils.http import content_disposition_header

from leaderboard.models import Pool
from leaderboard.pipeline.files import unavailable_as_error


def export_response(pool: Pool) -> FileResponse:
    """The assessors' file (``need_id 0 doc_id -1`` per line) as a download: the page's
    and the organizer API's."""
    if pool.status != Pool.Status.BUILT or not pool.file:
        raise Http404("This pool is not built yet.")
    with unavailable_as_error(f"reading {pool.file.name}"):
        stream = pool.file.storage.open(pool.file.name, "rb")
    response = FileResponse(stream, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, pool.export_name())
    return response
