"""An upload's parsed lines: the every-line check's parse is stored with the run and
scoring reads it instead of parsing the file again, with the same stored values; columns
that cannot be read send scoring back to the file, which names a bad line; a refused
upload leaves no parsed lines behind."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluation.trec import read_run
from evaluation.trec.columnar import read_parsed_run
from leaderboard.models import Result, Submission
from leaderboard.pipeline import scoring
from tests import DEMO

RUN_B = (DEMO / "run-B.txt").read_bytes()
FORM = "/benchmarks/library/submit/"

pytestmark = pytest.mark.django_db


def big_run() -> bytes:
    """run-B and ~3 MB more lines of its needs: past the size Django keeps in memory, so
    the upload goes through the handler that checks it while it arrives."""
    needs = sorted({line.split()[0] for line in RUN_B.splitlines()})
    more = b"".join(b"%s Q0 extra-%06d %d %.4f system-B\n" % (need, i, 1000 + i, -i / 3)
                    for need in needs for i in range(90_000 // len(needs)))  # fmt: skip
    return RUN_B + more


def upload(client, user, content: bytes, name: str = "run-B.txt"):
    client.force_login(user)
    return client.post(FORM, {"file": SimpleUploadedFile(name, content), "run_name": "mine"})


def stored_values(submission: Submission) -> tuple[dict, bytes, bytes]:
    result = Result.objects.get(submission=submission)
    return result.summary, bytes(result.per_need), bytes(result.ranks)


@pytest.mark.parametrize("content", [RUN_B, big_run()], ids=["in-memory", "streamed"])
def test_scoring_reads_the_parsed_lines_and_stores_what_the_file_gives(
    content, library, client, participant, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # stored, not yet scored
        assert upload(client, participant, content).status_code == 302
    submission = Submission.objects.get()
    assert submission.parsed.name.startswith("parsed/library/mine-")
    got = read_parsed_run(submission.parsed.path, "run-B.txt")
    want = read_run(submission.file.path, "run-B.txt")
    assert got.needs == want.needs and np.array_equal(got.score, want.score)
    assert got.doc.to_pylist() == want.doc.to_pylist()
    # scoring never reads the file: spoiled on disk, the run still scores
    Path(submission.file.path).write_bytes(b"not a run at all\n")
    scoring.run_scoring(submission.pk, "task-1")
    submission.refresh_from_db()
    assert submission.status == "scored", submission.failure_reason
    from_parsed = stored_values(submission)
    # the same run stored without parsed lines is scored from its file, to the same bytes
    Path(submission.file.path).write_bytes(content)
    Submission.objects.filter(pk=submission.pk).update(parsed="", status="queued")
    scoring.run_scoring(submission.pk, "task-2")
    submission.refresh_from_db()
    assert submission.status == "scored", submission.failure_reason
    assert stored_values(submission) == from_parsed


def test_parsed_lines_that_cannot_be_read_send_scoring_to_the_file(
    library, client, participant, django_capture_on_commit_callbacks, caplog
):
    with django_capture_on_commit_callbacks(execute=False):
        upload(client, participant, RUN_B)
    submission = Submission.objects.get()
    Path(submission.parsed.path).write_bytes(b"\xff" * 100)
    with caplog.at_level(logging.WARNING, logger="leaderboard.pipeline.scoring"):
        scoring.run_scoring(submission.pk, "task-1")
    submission.refresh_from_db()
    assert submission.status == "scored", submission.failure_reason
    assert round(submission.current_result().summary["map"], 3) == 0.740
    assert any("parsing its file" in record.getMessage() for record in caplog.records)


def test_a_doc_id_twice_megabytes_apart_fails_with_the_file_s_line(
    library, client, participant, django_capture_on_commit_callbacks
):
    """The upload checks duplicates within a megabyte of lines; one further apart is
    found by scoring, in the parsed lines, and the file then names both lines."""
    content = big_run()
    first = RUN_B.splitlines(keepends=True)[0]
    content += first  # the first line again, 3 MB later
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(client, participant, content).status_code == 302
    submission = Submission.objects.get()
    assert submission.status == "failed"
    line = content.count(b"\n")
    assert submission.failure_reason.startswith(f"run-B.txt:{line}: doc_id ")
    assert "(first on line 1)" in submission.failure_reason


@pytest.mark.parametrize("content", [RUN_B, big_run()], ids=["in-memory", "streamed"])
def test_a_refused_upload_leaves_no_parsed_lines(
    content, library, client, participant, settings, tmp_path
):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    bad = content + b"stage-plays Q0 x 1 oops system-B\n"
    response = upload(client, participant, bad)
    assert response.status_code == 400
    assert "score &#x27;oops&#x27; is not a number" in response.content.decode()
    assert not Submission.objects.exists()
    assert [p for p in Path(settings.MEDIA_ROOT).rglob("*") if "parsed" in str(p)] == []
    assert list(tmp_path.iterdir()) == []
