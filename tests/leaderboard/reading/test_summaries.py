"""The organizers' campaign summary on a small campaign worked by hand: runs per team and
participant in a phase and outside any, the latest pool's statistics, Judged@10 and
Judged@100 of each scored run from its stored ranks; the page, the API and the 404 for
anyone but the organizers."""

from __future__ import annotations

import io

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Benchmark, Phase, Pool, PoolRanks, Profile, Submission
from leaderboard.pipeline import tasks
from leaderboard.pipeline.loading import load_judgments, load_needs
from leaderboard.pipeline.scoring import pool_qrels
from leaderboard.reading.summaries import campaign_summary
from tests.leaderboard.models.test_final_runs import CLOSES, DURING, OPENS

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 -1\nq1 0 d12 1\nq2 0 e1 1\n"
# A: q1 d1..d12 in that order (judged at ranks 1, 2, 3 and 12), q2 e1, e2 (e1 judged):
#    Judged@10 = (3/10 + 1/2) / 2 = 0.4, Judged@100 = (4/12 + 1/2) / 2 = 5/12
# B: q1 five unjudged documents, q2 not answered: 0 and 0
# C: q1 d1, d2; q2 e1: every document judged, 1 and 1
RUNS = {
    "A": [("q1", f"d{i}") for i in range(1, 13)] + [("q2", "e1"), ("q2", "e2")],
    "B": [("q1", f"x{i}") for i in range(1, 6)],
    "C": [("q1", "d1"), ("q1", "d2"), ("q2", "e1")],
}
JUDGED = {"A": (0.4, 5 / 12), "B": (0.0, 0.0), "C": (1.0, 1.0)}


def run_file(name: str) -> bytes:
    lines = [
        f"{need} Q0 {doc} {rank} {100 - rank} {name}"
        for rank, (need, doc) in enumerate(RUNS[name], 1)
    ]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def tiny(client, organizer, participant, other_participant, django_capture_on_commit_callbacks):
    """Team Lab (alice: A; bob: B, marked final) and carol alone (C scored, one failed run)
    in the phase Test; alice's run D outside any phase (not scored on these judgments);
    a pool of depth 10, one run per team (Lab's B, carol's C); olga organises."""
    carol = get_user_model().objects.create_user("carol", password="pw-carol-123")
    benchmark = Benchmark.objects.create(slug="tiny", title="Tiny", daily_limit=10)
    load_needs(benchmark, io.BytesIO(b"q1\tfirst\nq2\tsecond\n"), "needs.tsv")
    with django_capture_on_commit_callbacks(execute=True):
        load_judgments(benchmark, io.BytesIO(QRELS), "qrels.txt")
    benchmark.refresh_from_db()
    benchmark.organizers.add(organizer)
    team = Profile.of(participant).create_team("Lab")
    Profile.of(other_participant).join_team(team.join_code)
    phase = Phase.objects.create(benchmark=benchmark, name="Test", opens=OPENS, closes=CLOSES)
    with time_machine.travel(DURING, tick=False):
        for user, name in [(participant, "A"), (other_participant, "B"), (carol, "C")]:
            client.force_login(user)
            upload = SimpleUploadedFile(f"{name}.txt", run_file(name))
            with django_capture_on_commit_callbacks(execute=True):
                answer = client.post("/benchmarks/tiny/submit/", {"file": upload})
            assert answer.status_code == 302, answer.content
    client.logout()
    runs = {r.run_name: r for r in Submission.objects.filter(benchmark=benchmark)}
    assert {r.status for r in runs.values()} == {"scored"}
    Submission.objects.filter(pk=runs["B"].pk).update(final_priority=1)
    for name, user, status, where in [
        ("broken", carol, Submission.Status.FAILED, phase),
        ("D", participant, Submission.Status.SCORED, None),
    ]:
        Submission.objects.create(
            benchmark=benchmark,
            participant=user,
            team=Profile.find(user).team,
            run_name=name,
            status=status,
            phase=where,
            file=f"runs/{name}.txt",
        )
    pool = Pool.objects.create(benchmark=benchmark, phase=phase, depth=10, runs_per_team=1)
    tasks.make_pool.delay(pool.pk)
    pool.refresh_from_db()
    assert pool.status == "built", pool.failure_reason
    return benchmark, runs


def counts(rows):
    return {r["name"]: (r["submitted"], r["scored"], r["failed"], r["final"]) for r in rows}


def test_the_summary_equals_the_hand_computation(tiny):
    benchmark, runs = tiny
    summary = campaign_summary(benchmark, pool_qrels)
    test, outside = summary["phases"]
    assert test["phase"] == "Test" and test["closes"] == CLOSES
    # (submitted, scored, failed, final): Lab marked B only; carol's latest scored is C
    assert counts(test["teams"]) == {"Lab": (2, 2, 0, 1), "carol": (2, 1, 1, 1)}
    assert counts(test["participants"]) == {
        "alice": (1, 1, 0, 0),
        "bob": (1, 1, 0, 1),
        "carol": (2, 1, 1, 1),
    }
    assert counts([test["totals"]]) == {"All": (4, 3, 1, 2)}
    assert outside["phase"] is None
    assert counts(outside["teams"]) == {"Lab": (1, 1, 0, 1)}  # D: Lab's latest, so final
    # the pool: B's top 10 (q1 x1..x5) and C's (q1 d1 d2, q2 e1): q1 7 pairs, q2 1
    pool = summary["pool"]
    assert (pool["depth"], pool["runs_offered"], pool["runs_pooled"]) == (10, 2, 2)
    sizes = [pool[k] for k in ("needs", "size_min", "size_median", "size_max", "size_total")]
    assert sizes == [2, 1, 4.0, 7, 8]
    assert pool["to_judge"] == 5  # x1..x5; d1, d2 and e1 are judged
    assert {t["team"]: (t["runs"], t["contributed"], t["unique"]) for t in pool["teams"]} == {
        "Lab": (1, 5, 5),
        "carol": (1, 3, 3),
    }
    judged = summary["judged"]
    assert judged["judgments_version"] == 1
    found = {r["run"]: (r["judged_10"], r["judged_100"]) for r in judged["runs"]}
    assert found.keys() == JUDGED.keys()  # D has no result on these judgments
    for name, (at_10, at_100) in JUDGED.items():
        assert found[name] == (pytest.approx(at_10), pytest.approx(at_100))
    # the same Judged@10 the scoring stored with the run
    result = runs["A"].results.get()
    assert result.summary["judged_10"] == pytest.approx(found["A"][0])


def test_a_run_without_stored_ranks_has_no_judged_value_and_no_qrels_are_read(tiny):
    benchmark, runs = tiny
    PoolRanks.objects.filter(result__submission=runs["B"]).delete()
    rows = campaign_summary(benchmark, pool_qrels)["judged"]["runs"]
    assert {r["run"]: r["judged_10"] for r in rows}["B"] is None
    PoolRanks.objects.all().delete()

    def unread(judgments):
        raise AssertionError("the qrels were read with no ranks to read them for")

    rows = campaign_summary(benchmark, unread)["judged"]["runs"]
    assert {r["judged_100"] for r in rows} == {None}


def test_an_unreadable_judgments_file_leaves_the_values_out(tiny):
    benchmark, _ = tiny

    def gone(judgments):
        raise FileNotFoundError(judgments.file.name)

    judged = campaign_summary(benchmark, gone)["judged"]
    assert {r["judged_10"] for r in judged["runs"]} == {None}
    assert judged["problem"] == "The judgments file could not be read (FileNotFoundError)."


def test_a_benchmark_without_pool_or_phases(tiny):
    benchmark, _ = tiny
    Pool.objects.all().delete()
    Phase.objects.all().delete()
    benchmark.refresh_from_db()
    summary = campaign_summary(benchmark, pool_qrels)
    assert summary["pool"] is None
    (only,) = summary["phases"]
    assert only["phase"] is None and only["totals"]["submitted"] == 5


def test_the_page_is_the_organizers(client, tiny, organizer, participant):
    assert client.get("/benchmarks/tiny/summary/").status_code == 404
    client.force_login(participant)
    assert client.get("/benchmarks/tiny/summary/").status_code == 404
    assert "Campaign summary" not in client.get("/benchmarks/tiny/").content.decode()
    client.force_login(organizer)
    page = client.get("/benchmarks/tiny/summary/")
    assert page.status_code == 200
    html = page.content.decode()
    assert ">Runs per team in Test</caption>" in html
    assert ">Judged@10 and Judged@100 of every scored run</caption>" in html
    assert '<td class="num">0.417</td>' in html  # A's Judged@100, 5/12
    assert 'href="/benchmarks/tiny/summary/"' in client.get("/benchmarks/tiny/").content.decode()
    assert (
        'href="/benchmarks/tiny/summary/"' in client.get("/benchmarks/tiny/pool/").content.decode()
    )


def test_the_api_is_the_organizers(client, tiny, organizer, participant):
    from leaderboard.models import ApiToken

    url = "/api/benchmarks/tiny/summary/"
    assert client.get(url).status_code == 404
    _, secret = ApiToken.issue(participant, "laptop")
    assert client.get(url, HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 404
    _, secret = ApiToken.issue(organizer, "laptop")
    answer = client.get(url, HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert answer.status_code == 200
    data = answer.json()
    assert [p["phase"] for p in data["phases"]] == ["Test", None]
    assert data["pool"]["size_median"] == 4.0
    found = {r["run"]: r["judged_100"] for r in data["judged"]["runs"]}
    assert found["A"] == pytest.approx(5 / 12) and found["B"] == 0.0
