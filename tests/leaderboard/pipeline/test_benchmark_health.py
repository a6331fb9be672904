"""The benchmark health: computed in the background, stored, shown.

The task is debounced (a newer request supersedes a queued one), runs on the compare
queue, is queued after each run's comparisons; the page reads what was stored and
never computes; the leaderboard shows the MDD line.
"""

from __future__ import annotations

import json
import math

import pytest
from django.contrib.auth import get_user_model

from evaluation.health import JudgedRanks, minimum_detectable_difference, residual_variance
from leaderboard.celery import route
from leaderboard.models import Benchmark, BenchmarkHealth, PoolRanks, Submission
from leaderboard.pipeline import health, scoring, tasks
from leaderboard.pipeline.scoring import pool_qrels


def _other_owner(benchmark: Benchmark) -> None:
    """System B to another participant: two participants, so pool bias has someone to leave out."""
    bob = get_user_model().objects.create_user("bob-b", password="pw-bob-123")
    Submission.objects.filter(benchmark=benchmark, run_name="system-B").update(participant=bob)


def test_load_demo_computes_and_stores_the_health(demo) -> None:
    row = BenchmarkHealth.objects.get(benchmark=demo, judgments=demo.current_judgments)
    assert row.computed_at is not None
    data = row.data
    assert (data["runs"], data["needs"], data["primary"]) == (2, 4, "map")
    ap = data["measures"]["map"]
    result = demo.submissions.get(run_name="system-A").results.get()
    assert ap["discriminative_power"]["pairs"] == 1
    # the stored numbers are the engine's on the stored per-need scores
    from leaderboard.pipeline.health import _matrix, _results

    results = list(_results(demo, demo.current_judgments))
    mask = result.per_need_frame()["num_rel"].to_numpy() > 0
    matrix = _matrix(results, "map", mask)
    sigma = math.sqrt(2 * residual_variance(matrix))
    assert ap["mdd"] == pytest.approx(minimum_detectable_difference(4, sigma))


def test_pool_bias_with_two_participants(demo) -> None:
    _other_owner(demo)
    row = health.compute(demo.pk, demo.current_judgments_id)
    pool = row.data["pool_bias"]
    assert pool["depth"] == 100 and pool["participants"] == 2
    assert {r["run"] for r in pool["runs"]} == {"system-A", "system-B"}
    for r in pool["runs"]:
        assert r["loo_score"] <= r["score"] + 1e-12
        assert 0 <= r["judged"] <= 1
    assert pool["max_drop"] == pytest.approx(max(r["drop"] for r in pool["runs"]))


def test_health_page_public_and_organizer_only_when_unpublished(demo, client) -> None:
    _other_owner(demo)
    health.compute(demo.pk, demo.current_judgments_id)
    response = client.get(f"/benchmarks/{demo.slug}/health/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Benchmark health" in html and "computed <time" in html
    assert 'data-plot="asl"' in html and "Pool bias" in html and "system-B" in html
    assert 'class="series-points"' in html  # one pair: a dot, since one point draws no line
    mdd = BenchmarkHealth.objects.get(benchmark=demo).data["measures"]["map"]["mdd"]
    assert f"{mdd:.4f}" in html
    Benchmark.objects.filter(pk=demo.pk).update(published=False)
    assert client.get(f"/benchmarks/{demo.slug}/health/").status_code == 404
    olga = get_user_model().objects.create_user("olga-o", password="pw-olga-123")
    demo.organizers.add(olga)
    client.force_login(olga)
    assert client.get(f"/benchmarks/{demo.slug}/health/").status_code == 200


def test_page_never_computes(library, client) -> None:
    response = client.get(f"/benchmarks/{library.slug}/health/")
    assert response.status_code == 200
    assert "Not computed yet" in response.content.decode()
    assert not BenchmarkHealth.objects.exists()
    assert client.get("/benchmarks/no-such/health/").status_code == 404


def test_leaderboard_shows_the_mdd_line(demo, client) -> None:
    html = client.get(f"/benchmarks/{demo.slug}/").content.decode()
    mdd = BenchmarkHealth.objects.get(benchmark=demo).data["measures"]["map"]["mdd"]
    assert f"With 4 needs, AP differences below {mdd:.3f} are unlikely" in html
    assert f'href="/benchmarks/{demo.slug}/health/"' in html
    BenchmarkHealth.objects.all().delete()
    assert "mdd-line" not in client.get(f"/benchmarks/{demo.slug}/").content.decode()


def test_debounced_newest_request_wins(demo) -> None:
    judgments = demo.current_judgments_id
    BenchmarkHealth.objects.all().delete()
    first = BenchmarkHealth.request(demo.pk, judgments)
    second = BenchmarkHealth.request(demo.pk, judgments)
    assert second == first + 1
    assert tasks.compute_health(demo.pk, judgments, first) == "superseded"
    assert BenchmarkHealth.objects.get().computed_at is None
    assert tasks.compute_health(demo.pk, judgments, second) == "computed"
    assert BenchmarkHealth.objects.get().computed_at is not None


def test_comparing_a_run_queues_the_health_on_the_compare_queue(
    demo, settings, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    assert route("leaderboard.tasks.compute_health", (), {}, {}) == {
        "queue": settings.CELERY_COMPARE_QUEUE
    }
    sent = []
    monkeypatch.setattr(
        tasks.compute_health, "apply_async", lambda args, countdown: sent.append((args, countdown))
    )
    settings.BENCHMARK_HEALTH_DELAY_SECONDS = 7
    run = demo.submissions.get(run_name="system-A")
    before = BenchmarkHealth.objects.get(benchmark=demo).requested
    with django_capture_on_commit_callbacks(execute=True):
        tasks.compare_submission(run.pk, run.judgments_id)
        tasks.compare_submission(run.pk, run.judgments_id)
    assert sent == [
        ((demo.pk, run.judgments_id, before + 1), 7),
        ((demo.pk, run.judgments_id, before + 2), 7),
    ]


def test_pool_depth_in_the_admin_form(demo) -> None:
    from leaderboard.admin_forms import BenchmarkForm

    assert "pool_depth" in BenchmarkForm.base_fields
    assert Benchmark._meta.get_field("pool_depth").default == 100


def test_pool_bias_text_says_leave_one_team_out_and_explains_negative_drops(demo, client) -> None:
    _other_owner(demo)
    health.compute(demo.pk, demo.current_judgments_id)
    html = client.get(f"/benchmarks/{demo.slug}/health/").content.decode()
    key = html[html.index('id="pool-key"') : html.index("</p>", html.index('id="pool-key"'))]
    assert "Leave one team out" in key and "participant out" not in key
    assert "counts as a team of one" in key
    assert "A drop can be negative" in key and "shrinks R" in key
    assert "(2 teams)" in key


def test_scoring_stores_the_judged_ranks_and_pool_bias_reads_no_run_file(demo, monkeypatch) -> None:
    _other_owner(demo)
    results = list(health._results(demo, demo.current_judgments))
    stored = PoolRanks.objects.filter(result__in=results)
    assert stored.count() == len(results) == 2
    qrels = pool_qrels(demo.current_judgments)
    for result in results:  # what scoring kept is what the run file gives
        again = health._read_ranks(result.submission, qrels)
        kept = JudgedRanks.from_bytes(bytes(stored.get(result=result).data), qrels)
        assert kept.line.tolist() == again.line.tolist() and len(kept.line) > 0
        assert kept.rank.tolist() == again.rank.tolist()
    expected = health.compute(demo.pk, demo.current_judgments_id).data["pool_bias"]

    def no_file(*args, **kwargs):
        raise AssertionError("a run file was read")

    monkeypatch.setattr(scoring, "local_copy", no_file)  # read_submission's
    assert health.compute(demo.pk, demo.current_judgments_id).data["pool_bias"] == expected
    assert expected["participants"] == 2 and len(expected["runs"]) == 2


def test_a_result_without_judged_ranks_has_its_run_read_once(demo, monkeypatch) -> None:
    _other_owner(demo)
    expected = health.compute(demo.pk, demo.current_judgments_id).data["pool_bias"]
    PoolRanks.objects.all().delete()
    read = []
    real = health._read_ranks
    monkeypatch.setattr(health, "_read_ranks", lambda s, q: read.append(s.pk) or real(s, q))
    assert health.compute(demo.pk, demo.current_judgments_id).data["pool_bias"] == expected
    assert len(read) == 2 and PoolRanks.objects.count() == 2
    health.compute(demo.pk, demo.current_judgments_id)
    assert len(read) == 2  # stored the first time


@pytest.fixture
def queued(monkeypatch) -> list:
    """The health recomputations sent (benchmark, judgments), in place of the queue."""
    sent = []
    monkeypatch.setattr(
        tasks.compute_health, "apply_async", lambda args, countdown: sent.append(args[:2])
    )
    return sent


def test_a_hidden_run_is_off_the_health_page_at_once_and_a_recompute_is_queued(
    demo, client, queued, django_capture_on_commit_callbacks
) -> None:
    _other_owner(demo)
    health.compute(demo.pk, demo.current_judgments_id)
    run = demo.submissions.get(run_name="system-B")
    page = f"/benchmarks/{demo.slug}/health/"
    html = client.get(page).content.decode()
    assert "system-B" in html and f'href="/submissions/{run.pk}/"' in html
    client.force_login(run.participant)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/submissions/{run.pk}/hide/", {"confirm": "on"})
    assert response.status_code == 302
    assert queued == [(demo.pk, demo.current_judgments_id)]
    stored = BenchmarkHealth.objects.get(benchmark=demo).data["pool_bias"]["runs"]
    assert "system-B" in {row["run"] for row in stored}  # not recomputed yet
    assert "system-B" in client.get(page).content.decode()  # its owner still sees it
    client.logout()
    html = client.get(page).content.decode()
    assert "Pool bias" in html and "system-A" in html
    assert "system-B" not in html and f'href="/submissions/{run.pk}/"' not in html
    # the recomputation leaves it out of the stored health too (one run: no pool bias)
    data = health.compute(demo.pk, demo.current_judgments_id).data
    assert data["runs"] == 1 and "system-B" not in json.dumps(data)


def test_unhide_and_withdraw_through_the_api_queue_a_recompute(
    demo, client, queued, django_capture_on_commit_callbacks
) -> None:
    from tests.leaderboard.api.test_api import bearer

    _other_owner(demo)
    run = demo.submissions.get(run_name="system-B")
    headers = bearer(run.participant)
    for action in ("hide", "unhide", "withdraw"):
        before = len(queued)
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post(f"/api/submissions/{run.pk}/{action}/", headers=headers)
        assert answer.status_code == 200, answer.content
        assert len(queued) > before, action
    assert set(queued) == {(demo.pk, demo.current_judgments_id)}
    health.compute(demo.pk, demo.current_judgments_id)
    html = client.get(f"/benchmarks/{demo.slug}/health/").content.decode()
    assert "system-B" not in html


def test_the_admin_actions_queue_a_recompute(
    demo, rf, queued, organizer, django_capture_on_commit_callbacks
) -> None:
    from django.contrib import admin
    from django.contrib.messages.storage.cookie import CookieStorage

    from leaderboard.admin_runs import SubmissionAdmin

    runs = Submission.objects.filter(benchmark=demo, run_name="system-B")
    model_admin = SubmissionAdmin(Submission, admin.site)
    for action in (model_admin.hide, model_admin.unhide, model_admin.withdraw):
        before = len(queued)
        request = rf.post("/admin/")
        request.user = organizer
        request._messages = CookieStorage(request)  # each action says what it did
        with django_capture_on_commit_callbacks(execute=True):
            action(request, runs)
        assert len(queued) > before, action.__name__
    assert set(queued) == {(demo.pk, demo.current_judgments_id)}
    assert runs.get().is_withdrawn


def test_with_one_run_the_page_counts_the_needs_with_a_relevant_document(demo, client) -> None:
    """One scored run: nothing to assess, but the facts line said "0 needs with a
    relevant document" of a benchmark whose 4 needs all have one; with no run it says
    nothing of them."""
    demo.submissions.filter(run_name="system-B").update(is_hidden=True)
    data = health.compute(demo.pk, demo.current_judgments_id).data
    assert (data["runs"], data["needs"]) == (1, 4)
    html = client.get(f"/benchmarks/{demo.slug}/health/").content.decode()
    assert "4 needs with a relevant document" in html and "1 scored run " in html
    assert "nothing to assess yet" in html
    demo.submissions.update(is_hidden=True)
    data = health.compute(demo.pk, demo.current_judgments_id).data
    assert data["runs"] == 0 and "needs" not in data
    html = client.get(f"/benchmarks/{demo.slug}/health/").content.decode()
    assert "with a relevant document" not in html and "0 scored runs" in html
