"""Pools on the platform: built in the background from the final runs, equal to a plain
reference on the same files; the export leaves out judged pairs, hides rank and team,
and is reproducible from the stored seed; the assessors' judgments come back as the next
version and every run is rescored. Organizers only."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluation.pooling import PoolRun
from evaluation.trec import read_qrels, read_run
from leaderboard.models import ApiToken, Phase, Pool, Profile, Submission, final_runs
from leaderboard.pipeline import tasks
from tests.evaluation.test_pooling import reference_pool
from tests.leaderboard.models.test_final_runs import CLOSES, DURING, OPENS
from tests.leaderboard.reading.test_run_results import generated_run

AFTER = CLOSES + dt.timedelta(days=1)


@pytest.fixture
def pooled(client, library, participant, other_participant, organizer,
           django_capture_on_commit_callbacks):  # fmt: skip
    """Team Lab (alice, bob: three runs, two marked final) and carol alone (two runs,
    none marked): scored in the phase Test; olga organises the benchmark."""
    from django.contrib.auth import get_user_model

    carol = get_user_model().objects.create_user("carol", password="pw-carol-123")
    team = Profile.of(participant).create_team("Lab")
    Profile.of(other_participant).join_team(team.join_code)
    library.daily_limit = 10
    library.save()
    library.organizers.add(organizer)
    phase = Phase.objects.create(benchmark=library, name="Test", opens=OPENS, closes=CLOSES)
    authors = [participant, other_participant, participant, carol, carol]
    with time_machine.travel(DURING, tick=False):
        for i, user in enumerate(authors):
            client.force_login(user)
            with django_capture_on_commit_callbacks(execute=True):
                upload = SimpleUploadedFile("r.txt", generated_run(10 + i, f"run{i}"))
                assert (
                    client.post("/benchmarks/library/submit/", {"file": upload}).status_code == 302
                )
    runs = {r.run_name: r for r in Submission.objects.all()}
    assert {r.status for r in runs.values()} == {"scored"}
    Submission.objects.filter(pk=runs["run1"].pk).update(final_priority=1)
    Submission.objects.filter(pk=runs["run0"].pk).update(final_priority=2)
    client.logout()
    return phase, runs


def reference(phase, depth, m):
    """The plain reference (sets per need) over the final runs' files."""
    runs = []
    for final in final_runs(phase.benchmark, phase):
        run = read_run(final.submission.file.path)
        runs.append(PoolRun(final.submission.run_name, final.team_name, final.priority, run))
    return reference_pool(runs, depth, m)


def build_on_page(client, organizer, phase, depth, m, capture) -> Pool:
    client.force_login(organizer)
    with time_machine.travel(AFTER, tick=False), capture(execute=True):
        answer = client.post(
            "/benchmarks/library/pool/", {"phase": phase.pk, "depth": depth, "runs_per_team": m}
        )
    assert answer.status_code == 302, answer.content
    return Pool.objects.latest("pk")


def test_the_page_builds_a_pool_equal_to_the_reference(
    client, pooled, organizer, django_capture_on_commit_callbacks
):
    phase, runs = pooled
    pool = build_on_page(client, organizer, phase, 6, 1, django_capture_on_commit_callbacks)
    assert pool.status == "built", pool.failure_reason
    chosen, top, pairs, sizes, run_unique, team_pairs, team_unique = reference(phase, 6, 1)
    # Lab's priority 1 (run1) and carol's latest (run4)
    assert sorted(r.name for r in chosen) == ["run1", "run4"]
    stats = pool.stats
    assert {n["need_id"]: n["pool"] for n in stats["needs"]} == sizes
    assert {r["run"]: r["unique"] for r in stats["runs"]} == run_unique
    assert {t["team"]: t["unique"] for t in stats["teams"]} == team_unique
    assert stats["pairs"] == len(pairs)
    # the export: the pool's pairs the latest judgments do not judge, as a qrels file
    qrels = read_qrels(phase.benchmark.latest_judgments.file.path)
    judged = set(zip(qrels.need_id, qrels.doc_id, strict=True))
    exported = read_qrels(pool.file.path)
    assert set(exported.relevance) == {-1}
    assert set(zip(exported.need_id, exported.doc_id, strict=True)) == pairs - judged
    assert stats["to_judge"] == len(exported) == len(pairs - judged) > 0
    page = client.get(f"/benchmarks/library/pool/?pool={pool.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Download the export for assessors" in html
    assert f"/admin/leaderboard/benchmark/{phase.benchmark.pk}/change/" in html
    download = client.get(f"/benchmarks/library/pool/{pool.pk}/export.qrels")
    assert b"".join(download.streaming_content) == pool.file.open("rb").read()


def test_the_export_is_reproducible_from_the_stored_seed(
    client, pooled, organizer, django_capture_on_commit_callbacks
):
    phase, _ = pooled
    first = build_on_page(client, organizer, phase, 8, 2, django_capture_on_commit_callbacks)
    again = Pool.objects.create(
        benchmark=phase.benchmark, phase=phase, depth=8, runs_per_team=2, seed=first.seed
    )
    other = Pool.objects.create(
        benchmark=phase.benchmark, phase=phase, depth=8, runs_per_team=2, seed=first.seed + 1
    )
    tasks.make_pool.delay(again.pk)
    tasks.make_pool.delay(other.pk)
    again.refresh_from_db()
    other.refresh_from_db()
    data = first.file.open("rb").read()
    assert again.file.open("rb").read() == data
    other_data = other.file.open("rb").read()
    assert other_data != data and sorted(other_data.split(b"\n")) == sorted(data.split(b"\n"))
    # a redelivered message for a built pool does nothing
    assert tasks.make_pool.delay(first.pk).get() == "gone"


def test_pools_are_for_organizers_only(client, pooled, participant):
    _, _ = pooled
    assert client.get("/benchmarks/library/pool/").status_code == 302  # to log in
    client.force_login(participant)
    assert client.get("/benchmarks/library/pool/").status_code == 403
    _, raw = ApiToken.issue(participant, "t")
    api = client.get("/api/benchmarks/library/pools/", headers={"Authorization": f"Bearer {raw}"})
    assert api.status_code == 403
    posted = client.post(
        "/api/benchmarks/library/pools/",
        {"depth": 5, "runs_per_team": 1},
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert posted.status_code == 403
    assert not Pool.objects.exists()


def test_the_api_builds_and_exports_and_the_judgments_come_back(
    client, pooled, organizer, django_capture_on_commit_callbacks
):
    phase, runs = pooled
    _, raw = ApiToken.issue(organizer, "t")
    auth = {"Authorization": f"Bearer {raw}"}
    bad = client.post(
        "/api/benchmarks/library/pools/",
        {"depth": 0, "runs_per_team": 1},
        content_type="application/json",
        headers=auth,
    )
    assert bad.status_code == 400
    with time_machine.travel(AFTER, tick=False), django_capture_on_commit_callbacks(execute=True):
        made = client.post(
            "/api/benchmarks/library/pools/",
            {"depth": 4, "runs_per_team": 3},
            content_type="application/json",
            headers=auth,
        )
    assert made.status_code == 202 and made.json()["phase"] == "Test"
    pool = client.get(f"/api/benchmarks/library/pools/{made.json()['id']}/", headers=auth).json()
    assert pool["status"] == "built" and pool["judgments_version"] == 1
    assert pool["export"] == f"/benchmarks/library/pool/{pool['id']}/export.qrels"  # the page's
    api_export = client.get(f"/api/benchmarks/library/pools/{pool['id']}/export/", headers=auth)
    text = b"".join(api_export.streaming_content)
    assert text == Pool.objects.get(pk=pool["id"]).file.open("rb").read() and text
    # the assessors judge every pair relevant; the next version is the old one plus theirs
    old = open(phase.benchmark.latest_judgments.file.path, "rb").read()
    judged = old + text.replace(b" -1\n", b" 1\n")
    with django_capture_on_commit_callbacks(execute=True):
        loaded = client.post(
            "/api/benchmarks/library/judgments/",
            {"file": SimpleUploadedFile("qrels-v2.txt", judged)},
            headers=auth,
        )
    assert loaded.status_code == 201 and loaded.json()["version"] == 2
    benchmark = phase.benchmark
    benchmark.refresh_from_db()
    assert benchmark.current_judgments.version == 2
    for run in runs.values():
        assert run.results.filter(judgments=benchmark.current_judgments).exists()
    # a pool built now leaves nothing to judge
    with time_machine.travel(AFTER, tick=False), django_capture_on_commit_callbacks(execute=True):
        again = client.post(
            "/api/benchmarks/library/pools/",
            {"depth": 4, "runs_per_team": 3},
            content_type="application/json",
            headers=auth,
        ).json()
    done = client.get(f"/api/benchmarks/library/pools/{again['id']}/", headers=auth).json()
    assert done["stats"]["to_judge"] == 0 and done["stats"]["pairs"] == pool["stats"]["pairs"]


def test_the_pool_form_refuses_bad_settings(client, pooled, organizer):
    phase, _ = pooled
    client.force_login(organizer)
    page = client.get("/benchmarks/library/pool/")
    assert page.status_code == 200 and b"Build in the background" in page.content
    for bad in ({"depth": 0, "runs_per_team": 1}, {"depth": 5, "runs_per_team": 101},
                {"depth": 5, "runs_per_team": 1, "phase": 999_999}):  # fmt: skip
        answer = client.post("/benchmarks/library/pool/", {"phase": phase.pk, **bad})
        assert answer.status_code == 400
    assert not Pool.objects.exists()
    assert client.get("/benchmarks/library/pool/?pool=999999").status_code == 404
    # "²" is a digit to Python but no number: the page, as for any other non-number
    assert client.get("/benchmarks/library/pool/?pool=²").status_code == 200
    assert client.get("/benchmarks/library/pool/999999/export.qrels").status_code == 404
