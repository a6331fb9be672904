"""Upload rules on real PostgreSQL and Redis: a failed or withdrawn run's name is free
again, the same file twice is refused by the form as by the API, a gzip bomb or a bad
line deep in a file is refused at upload, refusals are counted per user (429 once the
budget is spent), and a Redis that never answers does not hold an upload."""

from __future__ import annotations

import contextlib
import datetime as dt
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, transaction
from django.utils import timezone

from leaderboard.models import Submission
from leaderboard.pipeline import tasks
from tests import DEMO
from tests.hostile import gzip_bomb
from tests.leaderboard.api.test_api import bearer, error_of
from tests.leaderboard.workers import broker_or_skip, celery_on, queues_of, redis_or_skip

RUN_B = (DEMO / "run-B.txt").read_bytes()
FORM = "/benchmarks/library/submit/"
API = "/api/benchmarks/library/submissions/"
FILLER = b"".join(b"stage-plays Q0 filler-%d %d %d.5 system-B\n" % (i, i, 9000 - i)
                  for i in range(1200))  # fmt: skip


def variant(n: int) -> bytes:
    return RUN_B.replace(b"system-B", f"system-B{n}".encode())


def form_post(client, user, content: bytes, name: str = "run.txt", **fields):
    client.force_login(user)
    return client.post(FORM, {"file": SimpleUploadedFile(name, content), **fields})


def api_post(client, user, content: bytes, name: str = "run.txt", **fields):
    data = {"file": SimpleUploadedFile(name, content), **fields}
    return client.post(API, data, headers=bearer(user))


def text(response) -> str:
    if response["Content-Type"].startswith("application/json"):
        return response.json()["error"]
    return response.content.decode().replace("&#x27;", "'")


# --- A failed or withdrawn run's name is free again ------------------------------------


@pytest.mark.parametrize("end", ["fail", "withdraw"])
def test_the_api_takes_a_failed_or_withdrawn_runs_name_again(client, library, participant, end):
    assert api_post(client, participant, variant(1), run_name="bm25").status_code == 201
    first = Submission.objects.get()
    if end == "fail":
        first.fail("run.txt:7: something only the worker saw")
    else:
        first.withdraw(participant)
    again = api_post(client, participant, variant(2), run_name="bm25")
    assert again.status_code == 201, again.content
    runs = Submission.objects.filter(run_name="bm25").order_by("created")
    assert runs[0].status == ("failed" if end == "fail" else "withdrawn")
    assert runs[1].status == "queued" and runs[1].pk == again.json()["id"]
    # the new run holds the name now: a third is a 409 naming it
    third = error_of(api_post(client, participant, variant(3), run_name="bm25"), 409)
    assert third["details"]["existing"]["id"] == runs[1].pk


def test_the_form_takes_a_failed_runs_name_again(client, library, participant):
    assert form_post(client, participant, variant(1), run_name="bm25").status_code == 302
    Submission.objects.get().fail("run.txt:7: something only the worker saw")
    response = form_post(client, participant, variant(2), run_name="bm25")
    assert response.status_code == 302
    new = Submission.objects.exclude(status="failed").get(run_name="bm25")
    assert response["Location"] == new.get_absolute_url()
    taken = form_post(client, participant, variant(3), run_name="bm25")
    assert taken.status_code == 400 and "already exists" in text(taken)


def test_the_database_lets_one_live_run_hold_a_name(library, participant):
    def run(status: str) -> Submission:
        return Submission.objects.create(
            benchmark=library, participant=participant, run_name="x", status=status
        )

    run("failed"), run("withdrawn"), run("failed")
    live = run("scored")
    with pytest.raises(IntegrityError), transaction.atomic():
        run("queued")
    assert list(Submission.objects.holding_name("x")) == [live]


def test_rescoring_leaves_a_failed_run_whose_name_was_taken_failed(library, participant):
    make = Submission.objects.create
    old = make(benchmark=library, participant=participant, run_name="x", status="failed")
    new = make(benchmark=library, participant=participant, run_name="x", status="scored")
    alone = make(benchmark=library, participant=participant, run_name="y", status="failed")
    assert sorted(Submission.objects.all().requeue_all()) == sorted([new.pk, alone.pk])
    old.refresh_from_db()
    assert old.status == "failed"


# --- The same file twice ----------------------------------------------------------------


def test_the_form_refuses_the_same_file_twice_with_a_link_to_the_run(client, library, participant):
    assert form_post(client, participant, RUN_B, run_name="first").status_code == 302
    first = Submission.objects.get()
    again = form_post(client, participant, RUN_B, "renamed.txt", run_name="second")
    assert again.status_code == 409
    page = again.content.decode()
    assert "You already submitted this file to this benchmark as first." in page
    assert f'<a href="{first.get_absolute_url()}">first</a>' in page
    assert Submission.objects.count() == 1


def test_the_form_takes_a_failed_runs_file_again(client, library, participant):
    assert form_post(client, participant, RUN_B, run_name="first").status_code == 302
    Submission.objects.get().fail("the worker gave up")
    assert form_post(client, participant, RUN_B, run_name="retry").status_code == 302
    assert Submission.objects.count() == 2


# --- Bad files refused at upload ---------------------------------------------------------


@pytest.mark.parametrize("post", [form_post, api_post], ids=["form", "api"])
def test_a_gzip_bomb_is_refused_by_its_ratio(client, library, participant, post, settings):
    """1 GB of blank lines behind a valid run (~1,000x): refused for its ratio, within
    a generous bound, well under the size limit (which alone would inflate 2 GB)."""
    settings.MAX_UNCOMPRESSED_MB = 2048
    bomb = gzip_bomb(1024, head=RUN_B + FILLER, members=True)
    started = time.monotonic()
    response = post(client, participant, bomb, "bomb.txt.gz", run_name="bomb")
    assert time.monotonic() - started < 30
    assert response.status_code == 400
    assert "bomb.txt.gz: expands more than 100 times its compressed size" in text(response)
    assert not Submission.objects.exists()


@pytest.mark.parametrize("post", [form_post, api_post], ids=["form", "api"])
@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"stage-plays Q0 nul\x00doc 1 1.5 system-B\n", "binary file (NUL byte)"),
        (b"stage-plays Q0 " + b"y" * (1 << 20) + b" 1 1.5 system-B\n", "line longer than"),
    ],
    ids=["nul", "1MB-line"],
)
def test_nul_bytes_and_long_lines_past_line_1000_are_refused_at_upload(
    client, library, participant, post, line, reason
):
    content = RUN_B + FILLER + line + FILLER.replace(b"filler", b"after")
    number = (RUN_B + FILLER).count(b"\n") + 1
    assert number > 1000
    response = post(client, participant, content, "deep.txt", run_name="deep")
    assert response.status_code == 400
    assert f"deep.txt:{number}: {reason}" in text(response)
    assert not Submission.objects.exists()


# --- The budget of refusals ---------------------------------------------------------------


@pytest.fixture
def redis_cache(settings, participant, other_participant):
    """The cache on the test Redis, as in production, under a prefix of this test's."""
    from django.core.cache import cache

    from leaderboard.environment import cache_from_url

    settings.CACHES = {
        "default": {**cache_from_url(redis_or_skip()), "KEY_PREFIX": uuid.uuid4().hex}
    }
    settings.UPLOAD_REFUSAL_LIMIT = 3
    yield
    users = (participant.pk, other_participant.pk)
    cache.delete_many([f"upload-refusals{k}:{pk}" for k in ("", "-since") for pk in users])


BAD = RUN_B + b"stage-plays Q0 broken 1 NOTANUMBER system-B\n"


def test_after_n_refusals_uploads_are_refused_early_with_429(
    client, library, participant, other_participant, redis_cache
):
    for _ in range(2):
        assert form_post(client, participant, BAD, run_name="bad").status_code == 400
    assert api_post(client, participant, BAD, run_name="bad").status_code == 400
    # the budget is spent: even a good file is refused, before it is read
    early = error_of(api_post(client, participant, RUN_B, run_name="good"), 429)
    assert "Your last 3 uploads were refused" in early["error"]
    assert 0 < int(client.post(API, {}, headers=bearer(participant))["Retry-After"]) <= 3601
    page = form_post(client, participant, RUN_B, run_name="good")
    assert page.status_code == 429 and "Your last 3 uploads were refused" in text(page)
    assert not Submission.objects.exists()
    # a name refused is no file refused, and others have their own budget
    assert form_post(client, other_participant, RUN_B, run_name="good").status_code == 302


def test_the_budget_opens_again_when_its_window_ends(
    client, library, participant, redis_cache, settings
):
    settings.UPLOAD_REFUSAL_WINDOW = 1
    for _ in range(3):
        assert api_post(client, participant, BAD, run_name="bad").status_code == 400
    assert api_post(client, participant, RUN_B, run_name="good").status_code == 429
    from django.core.cache import cache

    deadline = time.monotonic() + 10  # Redis expires the window's keys
    while cache.get(f"upload-refusals:{participant.pk}") is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert api_post(client, participant, RUN_B, run_name="good").status_code == 201


# --- A Redis that never answers -------------------------------------------------------------


@contextlib.contextmanager
def silent_server():
    """A TCP server that accepts connections and never answers: a hung Redis."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        server.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("post", [form_post, api_post], ids=["form", "api"])
def test_a_hung_redis_does_not_hold_an_upload_and_the_outbox_keeps_the_run(
    client, library, participant, post, settings
):
    broker = broker_or_skip()
    settings.UPLOAD_PUBLISH_TIMEOUT_MS = 300
    queue = f"test-hung-{uuid.uuid4().hex[:8]}"
    with silent_server() as url, celery_on(url, queue):
        started = time.monotonic()
        response = post(client, participant, RUN_B, run_name="hung")
        seconds = time.monotonic() - started
    assert response.status_code in {201, 302}, response.content[:300]
    assert seconds < 5, seconds  # generous: the app's own timeouts and retries take 8-12 s
    run = Submission.objects.get()
    assert run.status == "queued" and run.sent_at is None and run.waiting_for_queue
    # the outbox holds it, and sends it once Redis answers
    Submission.objects.update(queued_at=timezone.now() - dt.timedelta(minutes=1))
    with celery_on(broker, queue):
        try:
            assert tasks.send_unsent() == 1
            assert redis.Redis.from_url(broker).llen(f"{queue}.score") == 1
        finally:
            redis.Redis.from_url(broker).delete(*queues_of(queue))
    run.refresh_from_db()
    assert run.sent_at is not None


@pytest.mark.django_db(transaction=True)
def test_one_of_several_users_racing_for_a_name_gets_it_and_none_a_500(library, monkeypatch):
    """Six users post one name at once: the database's constraint lets one run hold it;
    the others are told the name was just taken (400; the API's 409), nothing stored."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from leaderboard.uploads import receiving

    monkeypatch.setattr(receiving, "queue_scoring", lambda submission: None)
    users = [get_user_model().objects.create_user(f"racer{i}") for i in range(6)]
    barrier = threading.Barrier(6, timeout=60)  # a thread that fails first breaks it

    def upload(i: int) -> int:
        client = Client()
        client.force_login(users[i])
        barrier.wait()
        try:
            response = client.post(
                FORM, {"file": SimpleUploadedFile("r.txt", variant(i)), "run_name": "same"}
            )
            return response.status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        codes = sorted(pool.map(upload, range(6)))
    assert codes == [302, 400, 400, 400, 400, 400]
    assert Submission.objects.filter(run_name="same").count() == 1


def test_with_the_cache_down_uploads_go_on_unbudgeted(client, library, participant, settings):
    """docs/settings.md: if the cache stops answering, the API keeps working. The
    refusal budget asked the cache before every upload, so each was a 500."""
    import socket

    with socket.socket() as closed:  # a port with nothing listening
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    from leaderboard.environment import cache_from_url

    settings.CACHES = {"default": cache_from_url(f"redis://127.0.0.1:{port}/1")}
    assert api_post(client, participant, BAD, run_name="bad").status_code == 400
    assert api_post(client, participant, RUN_B, run_name="good").status_code == 201
    assert form_post(client, participant, BAD, run_name="worse").status_code == 400
