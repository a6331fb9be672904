"""A deleted row's stored files leave the file store once the deletion commits, whichever
way the row went (the admin, the API, ``QuerySet.delete()``, a cascade); a rolled-back
deletion deletes nothing, and a file another row still names stays."""

from __future__ import annotations

import datetime as dt
import io
import logging
from pathlib import Path

import pytest
import requests
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DatabaseError, transaction

from leaderboard.models import Benchmark, Judgments, PendingUpload, Phase, Pool, Submission
from leaderboard.pipeline import files
from leaderboard.pipeline.loading import load_judgments
from leaderboard.uploads.presigned import confirm_upload, start_upload
from tests import DEMO
from tests.leaderboard.api.test_api import bearer

RUN_B = (DEMO / "run-B.txt").read_bytes()
QRELS = (DEMO / "qrels.txt").read_bytes()

pytestmark = pytest.mark.django_db


def stored(settings) -> set[str]:
    """Every file under MEDIA_ROOT, by its stored name."""
    root = Path(settings.MEDIA_ROOT)
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


def names_of(*rows) -> set[str]:
    """The stored names the rows hold (a run's file and parsed lines, any other's file)."""
    names = set()
    for row in rows:
        names.add(row.file.name)
        if isinstance(row, Submission):
            names.add(row.parsed.name)
    return names


def post_run(client, user, benchmark: Benchmark, tag: str = "system-B") -> Submission:
    """A run stored through the upload form (its file and its parsed lines), not scored."""
    client.force_login(user)
    content = RUN_B.replace(b"system-B", tag.encode())
    response = client.post(
        f"/benchmarks/{benchmark.slug}/submit/",
        {"file": SimpleUploadedFile(f"{tag}.txt", content)},
    )
    assert response.status_code == 302, response.content.decode()[:500]
    run = Submission.objects.get(benchmark=benchmark, run_name=tag)
    assert run.file.name and run.parsed.name
    return run


def built_pool(benchmark: Benchmark, phase: Phase | None = None) -> Pool:
    pool = Pool.objects.create(benchmark=benchmark, phase=phase, depth=10, runs_per_team=1)
    pool.file.save(pool.export_name(), ContentFile(b"atwood 0 doc-1 0\n"))
    return pool


def second_benchmark() -> Benchmark:
    other = Benchmark.objects.create(slug="other", title="Other")
    with open(DEMO / "qrels.txt", "rb") as qrels:
        load_judgments(other, qrels, "qrels.txt")
    return other


def test_a_deleted_run_s_file_and_parsed_lines_go_once_the_deletion_commits(
    client, library, participant, organizer, settings, django_capture_on_commit_callbacks
):
    run = post_run(client, participant, library)
    kept = post_run(client, participant, library, tag="system-C")
    library.organizers.add(organizer)
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(f"/admin/leaderboard/submission/{run.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Submission.objects.filter(pk=run.pk).exists()
    assert names_of(run) <= stored(settings)  # not before the commit
    for callback in callbacks:
        callback()
    assert stored(settings) == names_of(library.latest_judgments, kept)


def test_deleting_a_benchmark_deletes_every_file_it_held(
    client, library, participant, organizer, settings, django_capture_on_commit_callbacks
):
    """A cascade: its judgments (and their parts), runs and pools go, their files with them;
    another benchmark's files stay."""
    post_run(client, participant, library)
    built_pool(library)
    assert library.set_split(private_needs=["atwood"])
    with django_capture_on_commit_callbacks(execute=True):
        load_judgments(library, io.BytesIO(QRELS + b"atwood 0 extra 1\n"), "v2.txt")
    other = second_benchmark()
    other_run = post_run(client, participant, other)
    keep = names_of(other.latest_judgments, other_run)
    assert len(stored(settings) - keep) == 5  # two judgments, a run, its lines, a pool
    library.organizers.add(organizer)
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/admin/leaderboard/benchmark/{library.pk}/delete/", {"post": "yes"}
        )
    assert response.status_code == 302
    assert not Benchmark.objects.filter(pk=library.pk).exists()
    assert stored(settings) == keep


def test_deleting_a_user_deletes_their_runs_files(
    client,
    admin_client,
    library,
    participant,
    other_participant,
    settings,
    django_capture_on_commit_callbacks,
):
    post_run(client, participant, library)
    post_run(client, participant, library, tag="system-C")
    theirs = post_run(client, other_participant, library, tag="system-D")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(f"/admin/auth/user/{participant.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Submission.objects.filter(participant=participant.pk).exists()
    assert stored(settings) == names_of(library.latest_judgments, theirs)


def test_a_deleted_judgments_version_s_file_goes_and_the_others_stay(
    client, library, organizer, settings, django_capture_on_commit_callbacks
):
    v1 = library.latest_judgments
    with django_capture_on_commit_callbacks(execute=True):
        v2 = load_judgments(library, io.BytesIO(QRELS + b"atwood 0 x 1\n"), "v2")
    library.organizers.add(organizer)
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/admin/leaderboard/judgments/{v2.pk}/delete/", {"post": "yes"})
    assert not Judgments.objects.filter(pk=v2.pk).exists()
    assert stored(settings) == names_of(v1)


def test_pools_deleted_with_their_phase_through_the_api_or_by_a_queryset_lose_their_exports(
    client, library, organizer, settings, django_capture_on_commit_callbacks
):
    now = dt.datetime.now(dt.UTC)
    phase = Phase.objects.create(
        benchmark=library, name="Test", opens=now - dt.timedelta(days=2), closes=now
    )
    in_phase, outside, kept = built_pool(library, phase), built_pool(library), built_pool(library)
    library.organizers.add(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(
            f"/api/benchmarks/library/phases/{phase.pk}/", headers=bearer(organizer)
        )
    assert response.status_code == 204, response.content
    assert not Pool.objects.filter(pk=in_phase.pk).exists()
    assert stored(settings) == names_of(library.latest_judgments, outside, kept)
    with django_capture_on_commit_callbacks(execute=True):
        Pool.objects.filter(pk=outside.pk).delete()
    assert stored(settings) == names_of(library.latest_judgments, kept)


def test_a_rolled_back_deletion_deletes_nothing(
    client, library, participant, settings, django_capture_on_commit_callbacks
):
    run = post_run(client, participant, library)
    before = stored(settings)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            library.delete()
            raise RuntimeError("changed my mind")
    assert callbacks == []
    assert Submission.objects.filter(pk=run.pk).exists()
    assert stored(settings) == before


def test_a_judgments_part_shares_its_version_s_file_which_stays_until_the_version_goes(
    library, settings, django_capture_on_commit_callbacks
):
    version = library.latest_judgments
    with django_capture_on_commit_callbacks(execute=True):
        assert library.set_split(private_needs=["atwood"])
    parts = list(version.parts.all())
    assert {part.file.name for part in parts} == {version.file.name}
    with django_capture_on_commit_callbacks(execute=True):
        parts[0].delete()
        assert library.set_split(private_needs=[])  # the split cleared: the parts go
    assert not version.parts.exists()
    assert stored(settings) == {version.file.name}
    with django_capture_on_commit_callbacks(execute=True):
        Judgments.objects.filter(pk=version.pk).delete()
    assert stored(settings) == set()


def test_in_the_bucket_a_presigned_run_keeps_its_object_until_the_run_itself_goes(
    bucket, library, participant, django_capture_on_commit_callbacks
):
    """The confirmed upload's row names the run's object too: deleting that row leaves
    the object to the run; deleting the run takes it and its parsed lines."""
    upload = start_upload(participant, library, file_name="run-B.txt", size=len(RUN_B))
    put = requests.put(upload.url, data=RUN_B, headers=upload.headers, timeout=10)
    assert put.status_code == 200, put.text
    with django_capture_on_commit_callbacks(execute=False):
        run = confirm_upload(participant, upload.token)
    judgments = library.latest_judgments.file.name
    assert bucket.keys() == sorted([judgments, run.file.name, run.parsed.name])
    with django_capture_on_commit_callbacks(execute=True):
        PendingUpload.objects.filter(token=upload.token).delete()
    assert bucket.keys() == sorted([judgments, run.file.name, run.parsed.name])
    with django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(pk=run.pk).delete()
    assert bucket.keys() == [judgments]


def test_in_the_bucket_an_upload_never_confirmed_goes_with_its_participant(
    bucket, library, participant, django_capture_on_commit_callbacks
):
    upload = start_upload(participant, library, file_name="run-B.txt", size=len(RUN_B))
    requests.put(upload.url, data=RUN_B, headers=upload.headers, timeout=10)
    key = PendingUpload.objects.get(token=upload.token).key
    assert key in bucket.keys()
    with django_capture_on_commit_callbacks(execute=True):
        participant.delete()
    assert bucket.keys() == [library.latest_judgments.file.name]


def test_a_failure_after_the_commit_is_logged_and_the_deletion_stands(
    client,
    library,
    participant,
    settings,
    caplog,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    run = post_run(client, participant, library)

    def database_gone(names):
        raise DatabaseError("the connection was lost")

    monkeypatch.setattr(files, "names_in_use", database_gone)
    with caplog.at_level(logging.ERROR), django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(pk=run.pk).delete()
    assert not Submission.objects.filter(pk=run.pk).exists()
    assert "the connection was lost" in caplog.text
    assert names_of(run) <= stored(settings)  # kept: not known to be unused


def test_the_files_of_a_cascade_are_checked_together_once_it_commits(
    client,
    library,
    participant,
    settings,
    django_assert_max_num_queries,
    django_capture_on_commit_callbacks,
):
    """One check for all the rows a deletion took, not one per row."""
    for n in range(3):  # the daily limit
        post_run(client, participant, library, tag=f"system-{n}")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        library.delete()
    with django_assert_max_num_queries(3):  # one per model with files
        for callback in callbacks:
            callback()
    assert stored(settings) == set()
