"""The API's reading endpoints added on DRF: run lists (mine), benchmark list filters and
pages, comparisons, the significance matrix, exports and the daily quota."""

from __future__ import annotations

import csv
import io

from django.contrib.auth import get_user_model

from leaderboard.models import Benchmark, Submission
from tests.leaderboard.api.test_api import bearer, error_of, upload, variant

# --- Runs ------------------------------------------------------------------------------


def test_my_runs_lists_only_the_callers_runs_newest_first_with_filters(
    client, demo, participant, other_participant, django_capture_on_commit_callbacks
):
    headers = bearer(participant)
    error_of(client.get("/api/submissions/?mine=1"), 401)  # mine needs a token
    with django_capture_on_commit_callbacks(execute=True):
        first = upload(client, headers, variant(1), run_name="first").json()
        second = upload(client, headers, variant(2), run_name="second").json()
    upload(client, bearer(other_participant), variant(3), run_name="theirs")
    Submission.objects.filter(pk=second["id"]).update(status="failed", failure_reason="x:1: y")

    mine = client.get("/api/submissions/?mine=1", headers=headers).json()
    assert mine["count"] == 2 and mine["next"] is None
    assert [r["run_name"] for r in mine["submissions"]] == ["second", "first"]
    assert mine["submissions"][1]["status"] == "scored"
    assert round(mine["submissions"][1]["summary"]["map"], 3) == 0.740
    assert mine["submissions"][1]["url"].endswith(f"/api/submissions/{first['id']}/")

    failed = client.get("/api/submissions/?mine=true&status=failed", headers=headers).json()
    assert [r["run_name"] for r in failed["submissions"]] == ["second"]
    other = client.get("/api/submissions/?mine=1&benchmark=library-facts", headers=headers)
    assert other.json()["submissions"] == []
    error_of(client.get("/api/submissions/?mine=1&status=nonsense", headers=headers), 400)

    # Without mine: every run the caller may see: the demo's, "first" (scored), not
    # the failed "second" nor the never-scored "theirs" (their owners' only).
    everyone = client.get("/api/submissions/?benchmark=library").json()
    assert {r["run_name"] for r in everyone["submissions"]} == {"system-A", "system-B", "first"}
    Submission.objects.filter(pk=first["id"]).update(is_hidden=True)
    names = {r["run_name"] for r in client.get("/api/submissions/").json()["submissions"]}
    assert "first" not in names
    mine = client.get("/api/submissions/?mine=1", headers=headers).json()
    assert {r["run_name"] for r in mine["submissions"]} == {"first", "second"}


def test_run_lists_are_paged(client, library, participant):
    runs = [
        Submission(benchmark=library, participant=participant, run_name=f"r{i:02}", file="x.txt")
        for i in range(7)
    ]
    Submission.objects.bulk_create(runs)
    headers = bearer(participant)
    page = client.get("/api/submissions/?mine=1&page_size=3", headers=headers).json()
    assert page["count"] == 7 and len(page["submissions"]) == 3
    assert "page=2" in page["next"] and page["previous"] is None
    last = client.get("/api/submissions/?mine=1&page_size=3&page=3", headers=headers).json()
    assert [r["run_name"] for r in last["submissions"]] == ["r00"]
    assert last["next"] is None and "page=2" in last["previous"]
    error_of(client.get("/api/submissions/?mine=1&page=9", headers=headers), 404)


# --- Benchmarks ------------------------------------------------------------------------


def test_the_benchmark_list_filters_and_pages(client, demo, organizer):
    Benchmark.objects.create(slug="closed-one", title="A closed one", is_open=False)
    every = client.get("/api/benchmarks/").json()
    assert every["count"] == 3
    by_title = list(Benchmark.objects.order_by("title", "slug").values_list("slug", flat=True))
    assert [b["slug"] for b in every["benchmarks"]] == by_title
    closed = client.get("/api/benchmarks/?open=false").json()["benchmarks"]
    assert [b["slug"] for b in closed] == ["closed-one"]
    assert len(client.get("/api/benchmarks/?open=true").json()["benchmarks"]) == 2
    found = client.get("/api/benchmarks/?search=FACTS").json()["benchmarks"]
    assert [b["slug"] for b in found] == ["library-facts"]
    paged = client.get("/api/benchmarks/?page_size=2&page=2").json()
    assert paged["count"] == 3 and [b["slug"] for b in paged["benchmarks"]] == by_title[2:]
    assert client.get("/api/benchmarks/?organised=1").json()["count"] == 0
    demo.organizers.add(organizer)
    theirs = client.get("/api/benchmarks/?organised=1", headers=bearer(organizer)).json()
    assert [b["slug"] for b in theirs["benchmarks"]] == ["library"]
    error_of(client.get("/api/benchmarks/?open=maybe"), 400)


# --- Comparisons -----------------------------------------------------------------------


def test_two_runs_compared_as_the_pages_download_compares_them(client, demo):
    a, b = Submission.objects.filter(benchmark=demo).order_by("pk")
    url = f"/api/benchmarks/library/compare/{a.pk}/{b.pk}/"
    body = client.get(url).json()
    download = client.get(f"/benchmarks/library/compare/{a.pk}/{b.pk}/comparison.json").json()
    assert body == download
    assert body["measure"] == "map" and body["a"]["submission_id"] == a.pk
    assert {"t_p", "wilcoxon_p", "randomization_p"} <= set(body["tests"])
    assert len(body["per_need"]) > 0
    by_p10 = client.get(url + "?measure=P@10").json()
    assert by_p10["measure"] == "P_10"
    unknown = error_of(client.get(url + "?measure=ndcg10"), 400)
    assert "nDCG@10" in unknown["details"]["suggestions"]
    error_of(client.get(f"/api/benchmarks/library/compare/{a.pk}/{a.pk}/"), 400)
    error_of(client.get(f"/api/benchmarks/library/compare/{a.pk}/999999/"), 404)
    Submission.objects.filter(pk=b.pk).update(is_hidden=True)
    error_of(client.get(url), 404)  # a hidden run is not there for an anonymous reader


def test_a_comparison_without_a_measure_is_on_the_primary_measure_as_on_the_page(client, demo):
    # library-facts ranks by recip_rank: tested at scoring time, so the stored tests.
    facts_a, facts_b = Submission.objects.filter(benchmark__slug="library-facts").order_by("pk")
    facts = client.get(f"/api/benchmarks/library-facts/compare/{facts_a.pk}/{facts_b.pk}/")
    assert facts.status_code == 200, facts.content[:500]
    assert facts.json()["measure"] == "recip_rank" and facts.json()["stored"] is True

    # A primary measure chosen after scoring: per-need values exist, tests computed now.
    Benchmark.objects.filter(slug="library").update(primary_measure="ndcg_cut_10")
    a, b = Submission.objects.filter(benchmark=demo).order_by("pk")
    url = f"/api/benchmarks/library/compare/{a.pk}/{b.pk}/"
    body = client.get(url).json()
    assert body["measure"] == "ndcg_cut_10" and body["stored"] is False
    assert body == client.get(url + "?measure=nDCG@10").json()
    assert body == client.get(f"/benchmarks/library/compare/{a.pk}/{b.pk}/comparison.json").json()
    page = client.get(f"/benchmarks/library/compare/{a.pk}/{b.pk}/").content.decode()
    assert '<option value="ndcg_cut_10" selected>' in page

    # A measure the catalog knows but these runs were not scored on: a 400 naming the
    # measures they have, never a comparison on another measure.
    missing = error_of(client.get(url + "?measure=P_7"), 400)
    assert "P_7" in missing["error"]
    assert {"map", "ndcg_cut_10", "P_10"} <= set(missing["details"]["measures"])
    assert "P_7" not in missing["details"]["measures"]

    # A primary measure these runs have no per-need values of: the defined fallback, AP.
    Benchmark.objects.filter(slug="library").update(primary_measure="ndcg_cut_7")
    fallback = client.get(url)
    assert fallback.status_code == 200 and fallback.json()["measure"] == "map"
    assert fallback.json()["stored"] is True


def test_the_significance_matrix(client, demo):
    body = client.get("/api/benchmarks/library/significance/").json()
    assert body["measure"] == "map" and body["correction"] == "holm" and body["alpha"] == 0.05
    assert [r["run_name"] for r in body["runs"]] == ["system-B", "system-A"]
    cells = body["cells"]
    assert cells[0][0] is None and cells[1][1] is None
    assert cells[0][1]["a"] == body["runs"][0]["submission_id"]
    assert cells[0][1]["better"] is True and cells[1][0]["better"] is False
    assert cells[0][1]["p"] == cells[1][0]["p"] and 0 < cells[0][1]["p"] <= 1
    assert body["family_size"] == 1 and body["missing"] == 0
    tukey = client.get("/api/benchmarks/library/significance/?correction=tukey").json()
    assert tukey["correction"] == "tukey"
    error_of(client.get("/api/benchmarks/library/significance/?correction=nope"), 400)
    error_of(client.get("/api/benchmarks/library/significance/?measure=P_10"), 400)  # not tested


# --- Exports ---------------------------------------------------------------------------


def test_exports_under_api_are_the_pages_downloads_and_honour_the_token(client, demo, participant):
    csv_text = client.get("/api/benchmarks/library/leaderboard.csv").content.decode()
    assert csv_text == client.get("/benchmarks/library/leaderboard.csv").content.decode()
    rows = list(csv.reader(io.StringIO(csv_text)))
    assert rows[0][:2] == ["rank", "run"] and rows[1][1] == "system-B"
    as_json = client.get("/api/benchmarks/library/leaderboard.json").json()
    assert [r["run"] for r in as_json["runs"]] == ["system-B", "system-A"]
    run = Submission.objects.get(run_name="system-B")
    per_need = client.get(f"/api/submissions/{run.pk}/per-need.csv")
    assert per_need["Content-Type"].startswith("text/csv")
    assert per_need.content == client.get(f"/submissions/{run.pk}/per-need.csv").content
    error_of(client.get("/api/benchmarks/library/leaderboard.csv?measure=ndcg10"), 400)

    # A hidden run: in the owner's export (through the token), not in an anonymous one.
    demo_user = get_user_model().objects.get(username="demo")
    Submission.objects.filter(pk=run.pk).update(is_hidden=True)
    anonymous = client.get("/api/benchmarks/library/leaderboard.json").json()
    assert [r["run"] for r in anonymous["runs"]] == ["system-A"]
    error_of(client.get(f"/api/submissions/{run.pk}/per-need.csv"), 404)
    headers = bearer(demo_user)
    owner = client.get("/api/benchmarks/library/leaderboard.json", headers=headers).json()
    assert [r["run"] for r in owner["runs"]] == ["system-B", "system-A"]
    assert client.get(f"/api/submissions/{run.pk}/per-need.csv", headers=headers).status_code == 200
    error_of(
        client.get("/api/benchmarks/library/leaderboard.csv", headers={"Authorization": "x"}), 401
    )


def test_a_run_without_scores_has_no_per_need_export(client, library, participant):
    headers = bearer(participant)
    created = upload(client, headers).json()
    export = f"/api/submissions/{created['id']}/per-need.csv"
    body = error_of(client.get(export, headers=headers), 404)
    assert body["details"] == {"status": "queued"}
    error_of(client.get(export), 404)  # and to anyone else, no such run yet


# --- The daily quota -------------------------------------------------------------------


def test_the_quota_counts_todays_runs_but_not_failed_ones(client, library, participant):
    headers = bearer(participant)
    error_of(client.get("/api/benchmarks/library/quota/"), 401)
    quota = client.get("/api/benchmarks/library/quota/", headers=headers).json()
    assert quota["limit"] == 3 and quota["used_today"] == 0 and quota["remaining_today"] == 3
    assert quota["open"] is True and quota["resets_at"].endswith("T00:00:00Z")
    created = upload(client, headers, variant(1), run_name="one").json()
    upload(client, headers, variant(2), run_name="two")
    Submission.objects.filter(pk=created["id"]).update(status="failed")
    quota = client.get("/api/benchmarks/library/quota/", headers=headers).json()
    assert quota["used_today"] == 1 and quota["remaining_today"] == 2
    error_of(client.get("/api/benchmarks/nope/quota/", headers=headers), 404)
