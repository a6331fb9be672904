"""The organizers' API for a campaign's set-up: a benchmark's settings (PATCH), its phases
(list, add, change, delete; the admin's checks), needs and judgments files (a bad line
names the file and line, nothing stored), a new judgments version re-queueing every run
on a real broker, rescoring; and who may do each (anonymous, participant, another
benchmark's organizer, a read token, the organizer)."""

from __future__ import annotations

import datetime as dt

import pytest
import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import ApiToken, Benchmark, InformationNeed, Phase, Submission
from tests import DEMO
from tests.leaderboard.api.test_api import bearer, error_of

PHASES = "/api/benchmarks/library/phases/"
UTC = dt.UTC


def patch(client, url: str, body: dict, headers: dict):
    return client.patch(url, body, content_type="application/json", headers=headers)


def post(client, url: str, body: dict, headers: dict):
    return client.post(url, body, content_type="application/json", headers=headers)


def post_file(client, url: str, headers: dict, content: bytes, name: str, **fields):
    return client.post(url, {"file": SimpleUploadedFile(name, content), **fields}, headers=headers)


@pytest.fixture
def organised(library, organizer):
    library.organizers.add(organizer)
    return library


# --- Settings --------------------------------------------------------------------------


def test_staff_create_a_benchmark_with_every_setting(client, db, organizer):
    new = {
        "slug": "camp",
        "title": "Campaign",
        "primary_measure": "P@10",
        "relevance_level": 2,
        "max_depth": 100,
        "final_runs": 2,
        "daily_limit": 4,
        "open": False,
        "published": False,
    }
    created = post(client, "/api/benchmarks/", new, bearer(organizer))
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["relevance_level"], body["max_depth"], body["final_runs"]) == (2, 100, 2)
    assert body["published"] is False and body["open"] is False
    stored = Benchmark.objects.get(slug="camp")
    assert (stored.primary_measure, stored.daily_limit, stored.max_depth) == ("P_10", 4, 100)


def test_an_organizer_changes_settings_and_a_scoring_setting_requeues_every_run(
    client, demo, organizer, django_capture_on_commit_callbacks
):
    demo.organizers.add(organizer)
    headers, url = bearer(organizer), "/api/benchmarks/library/"
    changed = patch(client, url, {"title": "The Library", "final_runs": 1, "open": False}, headers)
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert (body["title"], body["final_runs"], body["open"]) == ("The Library", 1, False)
    assert (body["rescoring"], body["testing"]) == (0, 0)
    demo.refresh_from_db()
    assert (demo.title, demo.final_runs, demo.is_open, demo.daily_limit) == (
        "The Library",
        1,
        False,
        10,  # left out: kept
    )

    # no judgment of the demo's 0/1 judgments reaches 2: every run would score 0
    too_high = error_of(patch(client, url, {"relevance_level": 2}, headers), 400)
    assert "No judgment of v1 reaches 2 (the highest is 1)" in too_high["error"]
    assert set(demo.submissions.values_list("status", flat=True)) == {"scored"}
    with django_capture_on_commit_callbacks(execute=False):
        rescored = patch(client, url, {"relevance_level": 0}, headers)
    assert rescored.json()["rescoring"] == 2
    assert set(demo.submissions.values_list("status", flat=True)) == {"queued"}

    with django_capture_on_commit_callbacks(execute=False):
        tested = patch(client, url, {"tested_measures": ["P@10"]}, headers)
    assert tested.status_code == 200 and tested.json()["tested_measures"] == ["map", "P_10"]

    refused = error_of(
        patch(client, url, {"primary_measure": "ndcg10", "title": "X"}, headers), 400
    )
    assert "primary_measure" in refused["details"] and "Unknown measure" in refused["error"]
    error_of(patch(client, url, {"max_depth": 0}, headers), 400)
    error_of(patch(client, url, {"title": 5}, headers), 400)  # a JSON string only
    demo.refresh_from_db()
    assert demo.title == "The Library" and demo.primary_measure == "map"  # nothing half-stored


# --- Phases ----------------------------------------------------------------------------


def test_phases_are_added_listed_changed_and_deleted_with_the_admins_checks(
    client, organised, organizer
):
    headers = bearer(organizer)
    dev = {"name": "Dev", "opens": "2026-12-01T00:00Z", "closes": "2026-12-10T00:00Z"}
    made = post(client, PHASES, {**dev, "daily_limit": 2, "final_runs": 2}, headers)
    assert made.status_code == 201, made.content
    phase = made.json()
    assert phase["closes"] == "2026-12-10T00:00:00Z" and phase["board"] == "public"
    assert (phase["daily_limit"], phase["final_runs"], phase["total_limit"]) == (2, 2, None)
    # No offset: UTC, as the admin's times are.
    test = {"name": "Test", "opens": "2026-12-10T00:00", "closes": "2026-12-20T12:00"}
    made = post(client, PHASES, {**test, "board": "hidden"}, headers)
    assert made.status_code == 201 and made.json()["opens"] == "2026-12-10T00:00:00Z"
    test_id = made.json()["id"]
    stored = Phase.objects.get(pk=test_id)
    assert stored.opens == dt.datetime(2026, 12, 10, tzinfo=UTC) and stored.board == "hidden"

    listed = client.get(PHASES, headers=headers).json()
    assert [p["name"] for p in listed] == ["Dev", "Test"]
    assert client.get(f"{PHASES}{test_id}/", headers=headers).json()["name"] == "Test"

    overlap = {"name": "Late", "opens": "2026-12-19T00:00Z", "closes": "2026-12-30T00:00Z"}
    body = error_of(post(client, PHASES, overlap, headers), 400)
    assert "overlaps the phase Test" in body["error"]
    backwards = {"name": "Back", "opens": "2027-01-05T00:00Z", "closes": "2027-01-01T00:00Z"}
    body = error_of(post(client, PHASES, backwards, headers), 400)
    assert "close after it opens" in str(body["details"]["closes"])
    taken = {"name": "Dev", "opens": "2027-02-01T00:00Z", "closes": "2027-02-02T00:00Z"}
    assert "name" in error_of(post(client, PHASES, taken, headers), 409)["details"]
    error_of(post(client, PHASES, {"name": "No times"}, headers), 400)
    assert organised.phases.count() == 2  # nothing of the refused ones stored

    changed = patch(client, f"{PHASES}{test_id}/", {"closes": "2026-12-21T00:00Z"}, headers)
    assert changed.status_code == 200 and changed.json()["closes"] == "2026-12-21T00:00:00Z"
    assert changed.json()["board"] == "hidden"  # left out: kept
    into_dev = patch(client, f"{PHASES}{test_id}/", {"opens": "2026-12-05T00:00Z"}, headers)
    assert "overlaps the phase Dev" in error_of(into_dev, 400)["error"]
    renamed = patch(client, f"{PHASES}{test_id}/", {"name": "Dev"}, headers)
    error_of(renamed, 409)
    assert Phase.objects.get(pk=test_id).opens == dt.datetime(2026, 12, 10, tzinfo=UTC)

    # a hidden board that holds a run, before the reveal: deleted, the run's scores
    # would show (its runs go outside any phase), so it is refused until made public
    held = Submission.objects.create(
        benchmark=organised, participant=organizer, run_name="held", phase=stored, file="r.txt"
    )
    refused = error_of(client.delete(f"{PHASES}{test_id}/", headers=headers), 409)
    assert refused["error"] == (
        "The phase Test holds 1 run(s) whose scores are hidden until the reveal; deleted, its "
        "runs would be outside any phase and shown to everyone. Set its board to public "
        "first if that is meant."
    )
    assert patch(client, f"{PHASES}{test_id}/", {"board": "public"}, headers).status_code == 200
    assert client.delete(f"{PHASES}{test_id}/", headers=headers).status_code == 204
    error_of(client.get(f"{PHASES}{test_id}/", headers=headers), 404)
    held.refresh_from_db()
    assert held.phase is None
    error_of(client.delete(f"{PHASES}{test_id}/", headers=headers), 404)
    assert list(organised.phases.values_list("name", flat=True)) == ["Dev"]


# --- Files and rescoring ---------------------------------------------------------------


def test_a_bad_needs_line_names_the_file_and_line_and_stores_nothing(client, organised, organizer):
    before = InformationNeed.objects.count()
    bad = b"n1\tfirst\nn2\tsecond\nn3\n"
    url = "/api/benchmarks/library/needs/"
    body = error_of(post_file(client, url, bearer(organizer), bad, "topics.tsv"), 400)
    assert body["error"] == "topics.tsv:3: expected need_id<TAB>title"
    assert body["details"] == {"file": [body["error"]]}
    assert InformationNeed.objects.count() == before
    loaded = post_file(client, url, bearer(organizer), b"n1\tfirst\nn2\tsecond\n", "topics.tsv")
    assert loaded.json() == {"benchmark": "library", "loaded": 2}
    assert InformationNeed.objects.count() == before + 2


def queued_messages(queue: str) -> int:
    """Scoring tasks waiting on the broker in the test's score queue."""
    return redis.Redis.from_url(settings.CELERY_BROKER_URL).llen(f"{queue}.score")


def test_a_new_judgments_version_requeues_every_live_run_on_the_broker(
    client, demo, queue, organizer, django_capture_on_commit_callbacks
):
    demo.organizers.add(organizer)
    runs = demo.submissions.all()
    assert set(runs.values_list("status", flat=True)) == {"scored"}
    withdrawn = runs.first()
    withdrawn.withdraw(withdrawn.participant)
    qrels = (DEMO / "qrels.txt").read_bytes() + b"stage-plays 0 extra-doc 1\n"
    url = "/api/benchmarks/library/judgments/"
    with django_capture_on_commit_callbacks(execute=True):
        loaded = post_file(client, url, bearer(organizer), qrels, "qrels-v2.txt", note="pool 1")
    assert loaded.status_code == 201, loaded.content
    body = loaded.json()
    assert (body["version"], body["created"], body["queued"]) == (2, True, 1)
    assert queued_messages(queue) == 1
    live = runs.exclude(pk=withdrawn.pk).get()
    assert live.status == "queued" and live.sent_at is not None
    demo.refresh_from_db()
    assert demo.latest_judgments.note == "pool 1"
    assert demo.current_judgments.version == 1  # until every run has its v2 result

    with django_capture_on_commit_callbacks(execute=True):
        again = post_file(client, url, bearer(organizer), qrels, "qrels-v2.txt")
    assert again.status_code == 200 and again.json()["queued"] == 0
    with django_capture_on_commit_callbacks(execute=True):
        rescored = client.post("/api/benchmarks/library/rescore/", headers=bearer(organizer))
    assert rescored.status_code == 202 and rescored.json()["queued"] == 1
    assert queued_messages(queue) == 2


def test_a_bad_qrels_line_stores_no_version(client, organised, organizer):
    url = "/api/benchmarks/library/judgments/"
    bad = b"atwood 0 d1 1\natwood 0 d2 high\n"
    body = error_of(post_file(client, url, bearer(organizer), bad, "assessed.qrels"), 400)
    assert body["error"].startswith("assessed.qrels:2:")
    body = error_of(post_file(client, url, bearer(organizer), b"", "empty.qrels"), 400)
    assert body["error"] == "empty.qrels:1: empty file"  # named, as any bad file is
    assert organised.judgments.count() == 1


def test_judgments_of_other_needs_or_without_the_private_ones_store_no_version(
    client, organised, organizer
):
    """Surely another benchmark's file (none of its needs), or one that leaves out a
    private need of the split (its private board would lose it): refused, named."""
    url = "/api/benchmarks/library/judgments/"
    body = error_of(post_file(client, url, bearer(organizer), b"zz 0 d1 1\n", "other.qrels"), 400)
    assert body["error"] == (
        "other.qrels: judges none of the benchmark's 4 needs (atwood, cs-foundations, "
        "russian-novels, stage-plays); its needs are zz"
    )
    organised.set_split(private_needs=["atwood"])
    qrels = b"".join(
        line + b"\n"
        for line in (DEMO / "qrels.txt").read_bytes().splitlines()
        if not line.startswith(b"atwood")
    )
    body = error_of(post_file(client, url, bearer(organizer), qrels, "v2.qrels"), 400)
    assert body["error"] == (
        "v2.qrels: does not judge the private need(s) atwood of the benchmark's split: "
        "change the split first to leave them out"
    )
    # a need the needs file does not list (a typo, another benchmark's): refused at its line
    qrels = (DEMO / "qrels.txt").read_bytes()
    more, line = qrels + b"zzz 0 zz 1\n", len(qrels.splitlines()) + 1
    body = error_of(post_file(client, url, bearer(organizer), more, "v3.qrels"), 400)
    assert body["error"] == (
        f"v3.qrels:{line}: need 'zzz' is not a need of "
        f"{organised.title} (load it with the needs first)"
    )
    # the pool's export loaded as it is: nothing relevant, every score would be 0
    pool = b"atwood 0 new-doc -1\nstage-plays 0 other-doc -1\n"
    body = error_of(post_file(client, url, bearer(organizer), pool, "pool.qrels"), 400)
    assert body["error"] == (
        "pool.qrels: no pair is judged relevant (relevance 1 or more): every score would be "
        "0. A pool's export is loaded once its pairs are assessed, with the earlier judgments"
    )
    assert organised.judgments.versions().count() == 1


# --- Who may ---------------------------------------------------------------------------


def requests(phase_id: int) -> list[tuple[str, str, dict | None]]:
    """Every organizer endpoint: (method, path, JSON body or None for a file or nothing)."""
    phase = f"{PHASES}{phase_id}/"
    return [
        ("patch", "/api/benchmarks/library/", {"title": "Mine now"}),
        ("get", PHASES, None),
        (
            "post",
            PHASES,
            {"name": "X", "opens": "2027-03-01T00:00Z", "closes": "2027-03-02T00:00Z"},
        ),
        ("get", phase, None),
        ("patch", phase, {"name": "Renamed"}),
        ("delete", phase, None),
        ("post", "/api/benchmarks/library/needs/", "needs"),
        ("post", "/api/benchmarks/library/judgments/", "qrels"),
        ("post", "/api/benchmarks/library/rescore/", None),
    ]


def send(client, method: str, path: str, body, headers: dict):
    if body == "needs":
        return post_file(client, path, headers, b"new\tA new need\n", "needs.tsv")
    if body == "qrels":
        content = (DEMO / "qrels.txt").read_bytes() + b"atwood 0 new-doc 1\n"
        return post_file(client, path, headers, content, "qrels.txt")
    if body is None:
        return getattr(client, method)(path, headers=headers)
    return getattr(client, method)(path, body, content_type="application/json", headers=headers)


def read_token(user) -> dict:
    _, raw = ApiToken.issue(user, "read", scope=ApiToken.READ)
    return {"Authorization": f"Bearer {raw}"}


@pytest.mark.parametrize(
    "caller, reading, writing",
    [
        ("anonymous", 401, 401),
        ("participant", 403, 403),
        ("other organizer", 403, 403),
        ("read token", 200, 403),
        ("submit token", 200, 403),
    ],
)
def test_only_the_benchmarks_organizers_with_a_full_token_may(
    client, organised, organizer, participant, caller, reading, writing
):
    phase = Phase.objects.create(
        benchmark=organised,
        name="Test",
        opens=dt.datetime(2026, 12, 1, tzinfo=UTC),
        closes=dt.datetime(2026, 12, 2, tzinfo=UTC),
    )
    other = get_user_model().objects.create_user("oscar", password="pw-oscar-1", is_staff=True)
    Benchmark.objects.create(slug="other", title="Other").organizers.add(other)
    headers = {
        "anonymous": {},
        "participant": bearer(participant),
        "other organizer": bearer(other),
        "read token": read_token(organizer),
        "submit token": {
            "Authorization": f"Bearer {ApiToken.issue(organizer, 's', scope='submit')[1]}"
        },
    }[caller]
    for method, path, body in requests(phase.pk):
        expected = reading if method == "get" else writing
        error_or_ok = send(client, method, path, body, headers)
        if expected == 200:
            assert error_or_ok.status_code == 200, (method, path)
        else:
            error_of(error_or_ok, expected)
    organised.refresh_from_db()
    assert organised.title == "Library" and organised.judgments.count() == 1
    assert list(organised.phases.values_list("name", flat=True)) == ["Test"]
    assert not InformationNeed.objects.filter(need_id="new").exists()


def test_the_organizer_may_do_each_and_an_unpublished_benchmark_is_a_404_to_others(
    client, organised, organizer, participant, django_capture_on_commit_callbacks
):
    phase = Phase.objects.create(
        benchmark=organised,
        name="Test",
        opens=dt.datetime(2026, 12, 1, tzinfo=UTC),
        closes=dt.datetime(2026, 12, 2, tzinfo=UTC),
    )
    headers = bearer(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        statuses = [
            send(client, method, path, body, headers).status_code
            for method, path, body in requests(phase.pk)
        ]
    assert statuses == [200, 200, 201, 200, 200, 204, 200, 201, 202]
    Benchmark.objects.filter(pk=organised.pk).update(published=False)
    for method, path, body in requests(phase.pk)[:3]:
        error_of(send(client, method, path, body, bearer(participant)), 404)
    superuser = get_user_model().objects.create_superuser("root", password="pw-root-123")
    assert client.get(PHASES, headers=bearer(superuser)).status_code == 200
    assert Submission.objects.count() == 0
