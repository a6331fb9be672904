"""A deleted row's files leave the request: once the deletion commits, their names go to
``discard_files`` (the default queue), which checks which no row names any more and
deletes those from a bucket a thousand keys a request, retrying while the store does not
answer; with the broker down, the request deletes them itself. Tasks run in-process here
(eager); ``test_storage_worker.py`` has a real worker do it."""

from __future__ import annotations

import logging
import types
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from celery.signals import task_retry
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from leaderboard.celery import app
from leaderboard.models import Submission
from leaderboard.pipeline import tasks
from leaderboard.uploads.presigned import confirm_upload, start_upload
from tests import DEMO
from tests.leaderboard.buckets import Bucket
from tests.leaderboard.workers import broker_or_skip, celery_on, free_port

pytestmark = pytest.mark.django_db

RUN_B = (DEMO / "run-B.txt").read_bytes()


def runs_in_bucket(bucket: Bucket, library, participant, count: int) -> list[str]:
    """``count`` runs whose file and parsed lines are objects in ``bucket``; their names."""
    runs = Submission.objects.bulk_create(
        Submission(
            benchmark=library,
            participant=participant,
            run_name=f"r{n}",
            file=f"runs/library/r{n}.txt",
            parsed=f"parsed/library/r{n}.txt.arrow",
        )
        for n in range(count)
    )
    names = [name for run in runs for name in (run.file.name, run.parsed.name)]
    client = bucket.server.client()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: client.put_object(Bucket=bucket.name, Key=key, Body=b"x"), names))
    return names


def delete_requests(storage) -> list[int]:
    """The number of keys in each delete request ``storage``'s client sends from now on."""
    sent: list[int] = []
    events = storage.connection.meta.client.meta.events
    events.register(
        "provide-client-params.s3.DeleteObjects",
        lambda params, **kwargs: sent.append(len(params["Delete"]["Objects"])),
    )
    events.register("provide-client-params.s3.DeleteObject", lambda **kwargs: sent.append(1))
    return sent


def one_attempt(storage: dict) -> dict:
    """A STORAGES entry whose client tries each request once (botocore's retries wait)."""
    options = storage["OPTIONS"]
    retries = Config(retries={"mode": "standard", "total_max_attempts": 1})
    return {
        **storage,
        "OPTIONS": {**options, "client_config": options["client_config"].merge(retries)},
    }


@pytest.fixture
def retries():
    """The reasons ``discard_files`` was retried for during the test. In-process, a retry
    runs at once (no backoff), and only when task errors are not raised to the caller,
    as a worker's are not."""
    propagates, app.conf.task_eager_propagates = app.conf.task_eager_propagates, False
    counted: list[str] = []

    def count(sender=None, **kwargs) -> None:
        if sender.name == tasks.discard_files.name:
            counted.append(str(kwargs.get("reason")))

    task_retry.connect(count, weak=False)
    yield counted
    task_retry.disconnect(count)
    app.conf.task_eager_propagates = propagates


def test_in_the_bucket_the_objects_of_many_runs_go_a_thousand_keys_a_request(
    bucket, library, participant, django_capture_on_commit_callbacks
):
    names = runs_in_bucket(bucket, library, participant, 1050)
    judgments = library.latest_judgments.file.name
    assert len(bucket.keys()) == 2101
    sent = delete_requests(default_storage)
    with django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(pk__in=Submission.objects.values("pk")).delete()
    assert sorted(sent) == [100, 1000, 1000], f"{len(sent)} requests for {len(names)} keys"
    assert bucket.keys() == [judgments]


def test_a_store_that_does_not_answer_is_retried_until_it_does(
    bucket, library, participant, settings, caplog, retries, django_capture_on_commit_callbacks
):
    names = runs_in_bucket(bucket, library, participant, 2)
    settings.STORAGES = {**settings.STORAGES, "default": one_attempt(bucket.storage())}
    down = types.SimpleNamespace(tries=0)

    def refuse(**kwargs):
        down.tries += 1
        if down.tries <= 2:
            raise EndpointConnectionError(endpoint_url=bucket.server.url)

    default_storage.connection.meta.client.meta.events.register(
        "before-send.s3.DeleteObjects", refuse
    )
    with caplog.at_level(logging.WARNING, logger="leaderboard"):
        with django_capture_on_commit_callbacks(execute=True):
            Submission.objects.filter(run_name__in=["r0", "r1"]).delete()
    assert len(retries) == 2 and "did not answer" in retries[0]
    failed = [r for r in caplog.records if f"deleting {len(names)} files failed" in r.message]
    assert len(failed) == 2, caplog.text
    assert bucket.keys() == [library.latest_judgments.file.name]


def test_a_store_down_for_good_is_retried_then_logged_and_the_deletion_stands(
    library, participant, settings, caplog, retries, monkeypatch, django_capture_on_commit_callbacks
):
    run = Submission.objects.create(
        benchmark=library, participant=participant, run_name="gone", file="runs/library/x.txt"
    )
    nowhere = Bucket(types.SimpleNamespace(url=f"http://127.0.0.1:{free_port()}"), "lb-x")
    settings.STORAGES = {**settings.STORAGES, "default": one_attempt(nowhere.storage(timeout=1))}
    monkeypatch.setattr(tasks.discard_files, "max_retries", 2)
    with caplog.at_level(logging.WARNING, logger="leaderboard"):
        with django_capture_on_commit_callbacks(execute=True):
            run.delete()
    assert not Submission.objects.filter(pk=run.pk).exists()
    assert len(retries) == 2
    gave_up = [r for r in caplog.records if r.name == "leaderboard.pipeline.tasks"]
    assert [r.levelname for r in gave_up] == ["ERROR"], caplog.text
    assert "could not delete runs/library/x.txt" in gave_up[0].message


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_the_request_deletes_the_files_itself(
    library, participant, settings, caplog
):
    broker_or_skip()
    run = Submission.objects.create(benchmark=library, participant=participant, run_name="r")
    run.file.save("r.txt", ContentFile(b"atwood Q0 doc-1 1 1.0 r\n"))
    assert default_storage.exists(run.file.name)
    with caplog.at_level(logging.WARNING, logger="leaderboard"):
        with celery_on(f"redis://127.0.0.1:{free_port()}/0", "nowhere"):
            run.delete()
    assert not default_storage.exists(run.file.name)
    assert default_storage.exists(library.latest_judgments.file.name)
    assert "the broker did not take 1 file deletions" in caplog.text


def test_an_upload_confirmed_again_before_the_task_ran_keeps_its_object(
    bucket, library, participant, monkeypatch, django_capture_on_commit_callbacks
):
    """The names go to the task as the deletion left them; which are in use is checked
    in the task: a deleted run's presigned upload confirmed again meanwhile names the
    object once more, and keeps it."""
    upload = start_upload(participant, library, file_name="run-B.txt", size=len(RUN_B))
    assert requests.put(upload.url, data=RUN_B, headers=upload.headers, timeout=10).ok
    with django_capture_on_commit_callbacks(execute=True):
        run = confirm_upload(participant, upload.token)
    queued: list[tuple] = []
    monkeypatch.setattr(tasks.discard_files, "apply_async", lambda args, **kw: queued.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(pk=run.pk).delete()
    assert queued == [([run.file.name, run.parsed.name],)]  # sent at the commit
    with django_capture_on_commit_callbacks(execute=True):
        again = confirm_upload(participant, upload.token)
    assert again.pk != run.pk and again.file.name == run.file.name
    assert tasks.discard_files.apply(queued[0]).get() == 1  # the old parsed lines only
    assert run.file.name in bucket.keys() and again.parsed.name in bucket.keys()
    assert run.parsed.name not in bucket.keys()
