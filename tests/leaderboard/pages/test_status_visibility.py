"""A run's live status (``/submissions/<id>/status/``) follows the run page's rule: hidden,
withdrawn, failed and never-scored runs, and runs on unpublished benchmarks, are a 404
for whoever may not see them (anyone but the run's owner and the organizers)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.models import Benchmark, Submission
from tests.leaderboard.uploads.test_uploads import RUN_B


@pytest.fixture
def run(library, participant, organizer, django_capture_on_commit_callbacks) -> Submission:
    library.organizers.add(organizer)
    client = Client()
    client.force_login(participant)
    upload = SimpleUploadedFile("run-B.txt", RUN_B)
    with django_capture_on_commit_callbacks(execute=True):  # scored in-process
        response = client.post("/benchmarks/library/submit/", {"file": upload, "run_name": "mine"})
    assert response.status_code == 302
    return Submission.objects.get()


def codes(run: Submission, users: dict) -> dict[str, tuple[int, int]]:
    """Per reader: (the status endpoint's code, the run page's code)."""
    out = {}
    for label, user in users.items():
        client = Client()
        if user is not None:
            client.force_login(user)
        status = client.get(f"/submissions/{run.pk}/status/")
        page = client.get(f"/submissions/{run.pk}/")
        out[label] = (status.status_code, page.status_code)
        if status.status_code == 200:
            assert status.json()["status"] == Submission.objects.get(pk=run.pk).status
    return out


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("public", {"anonymous": 200, "other": 200, "owner": 200, "organizer": 200}),
        # being rescored: it was scored, so it keeps its place
        ("rescoring", {"anonymous": 200, "other": 200, "owner": 200, "organizer": 200}),
        ("queued", {"anonymous": 404, "other": 404, "owner": 200, "organizer": 200}),
        ("failed", {"anonymous": 404, "other": 404, "owner": 200, "organizer": 200}),
        ("hidden", {"anonymous": 404, "other": 404, "owner": 200, "organizer": 200}),
        ("withdrawn", {"anonymous": 404, "other": 404, "owner": 200, "organizer": 200}),
        # the run page shows nothing of an unpublished benchmark but to its organizers,
        # the run's owner included
        ("unpublished", {"anonymous": 404, "other": 404, "owner": 404, "organizer": 200}),
        ("unpublished-hidden", {"anonymous": 404, "other": 404, "owner": 404, "organizer": 200}),
    ],
)
def test_status_is_shown_to_whoever_may_see_the_run_page(
    run, participant, other_participant, organizer, case, expected
):
    if "hidden" in case:
        Submission.objects.filter(pk=run.pk).update(is_hidden=True)
    if case == "withdrawn":
        Submission.objects.filter(pk=run.pk).update(status=Submission.Status.WITHDRAWN)
    if case == "rescoring":
        Submission.objects.filter(pk=run.pk).update(status=Submission.Status.QUEUED)
    if case == "queued":  # never scored: no result yet
        run.results.all().delete()
        Submission.objects.filter(pk=run.pk).update(status=Submission.Status.QUEUED)
    if case == "failed":
        Submission.objects.filter(pk=run.pk).update(status=Submission.Status.FAILED)
    if case.startswith("unpublished"):
        Benchmark.objects.filter(pk=run.benchmark_id).update(published=False)
    users = {
        "anonymous": None,
        "other": other_participant,
        "owner": participant,
        "organizer": organizer,
    }
    found = codes(run, users)
    assert {label: status for label, (status, _) in found.items()} == expected
    assert all(status == page for status, page in found.values()), found


def test_status_of_a_run_that_does_not_exist_is_a_404(client, db):
    assert client.get("/submissions/999999/status/").status_code == 404
