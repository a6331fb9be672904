"""Measures on the platform: a benchmark's primary, shown and tested measures
chosen from the engine's catalog in either name system, every catalog measure stored per
need, ``?measure=`` in either name system, the interpolation mode reaching the engine,
and a change of the tested measures queuing the missing tests."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.models import Benchmark, Comparison, MeasureVector, Submission
from leaderboard.pipeline.loading import load_judgments, load_needs
from leaderboard.reading import boards
from tests import DEMO
from tests.leaderboard.pipeline.test_worker import queue, start_worker  # noqa: F401 (fixtures)


def benchmark_form(**overrides) -> dict:
    data = {
        "slug": "msmarco",
        "title": "MS MARCO-like",
        "description": "",
        "primary_measure": "map",
        "relevance_level": 1,
        "max_depth": 1000,
        "is_open": "on",
        "daily_limit": 10,
        "published": "on",
        "phases-TOTAL_FORMS": 0,  # the phases inline, empty
        "phases-INITIAL_FORMS": 0,
    }
    data.update(overrides)
    return data


def run_names(html: str) -> list[str]:
    import re

    return re.findall(r'<th scope="row"><a href="/submissions/\d+/"[^>]*>([^<]+)</a>', html)


# --- The admin form: catalog names both ways ----------------------------------------------


def test_the_admin_takes_catalog_names_in_either_system_and_stores_columns(client, organizer):
    client.force_login(organizer)
    data = benchmark_form(
        primary_measure="nDCG@10",
        shown_measures="RR@10, P_10 recip_rank_cut_10",
        significance_measures="MRR@10 map",
        interpolation="trec_eval-9",
        needs_file=SimpleUploadedFile("needs.tsv", (DEMO / "needs.tsv").read_bytes()),
        qrels_file=SimpleUploadedFile("qrels.txt", (DEMO / "qrels.txt").read_bytes()),
    )
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    benchmark = Benchmark.objects.get(slug="msmarco")
    assert benchmark.primary_measure == "ndcg_cut_10"
    assert benchmark.shown_measures == ["recip_rank_cut_10", "P_10"]
    assert benchmark.significance_measures == ["recip_rank_cut_10", "map"]
    assert benchmark.tested_measures() == ["ndcg_cut_10", "recip_rank_cut_10", "map"]
    assert benchmark.interpolation == "trec_eval-9"
    # The change form shows them back, and saving it unchanged keeps them.
    page = client.get(f"/admin/leaderboard/benchmark/{benchmark.pk}/change/").content.decode()
    assert 'value="recip_rank_cut_10, P_10"' in page


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("primary_measure", "ndcg10", "Did you mean nDCG@10"),
        ("primary_measure", "P", "Did you mean P@5"),
        ("shown_measures", "P@10, MRR@x", "Unknown measure “MRR@x”"),
        ("significance_measures", "ap map recip", "Did you mean"),
        # counts rank nothing; counts and summary-only measures have nothing to pair
        ("primary_measure", "NumRelRet", "“num_rel_ret” is a count, not a score to rank"),
        ("significance_measures", "map num_ret", "Not testable: num_ret"),
        ("significance_measures", "GMAP, P@10", "Not testable: gm_map"),
    ],
)
def test_an_unknown_measure_is_a_form_error_naming_close_matches(
    client, organizer, field, value, expected
):
    client.force_login(organizer)
    response = client.post("/admin/leaderboard/benchmark/add/", benchmark_form(**{field: value}))
    assert response.status_code == 200
    html = response.content.decode()
    assert expected in html, html[:3000]
    assert not Benchmark.objects.filter(slug="msmarco").exists()


def test_a_form_posted_without_the_new_fields_keeps_the_defaults(client, organizer):
    client.force_login(organizer)
    response = client.post("/admin/leaderboard/benchmark/add/", benchmark_form())
    assert response.status_code == 302
    benchmark = Benchmark.objects.get(slug="msmarco")
    assert benchmark.interpolation == "exact"
    assert benchmark.tested_measures() == ["map"]
    assert "ndcg_cut_10" in benchmark.shown_measures


# --- ?measure= in either name system ------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "column", "label"),
    [
        (("nDCG@10", "ndcg_cut_10", "ndcg@10", "ndcg_cut.10"), "ndcg_cut_10", "nDCG@10"),
        (("RR@10", "recip_rank_cut_10", "MRR@10"), "recip_rank_cut_10", "RR@10"),
        (("AP", "map", "MAP"), "map", "AP"),
    ],
)
def test_measure_in_either_name_system_ranks_the_same(client, demo, names, column, label):
    pages, exports, api = set(), set(), set()
    for name in names:
        response = client.get(reverse("leaderboard", args=["library"]), {"measure": name})
        assert response.status_code == 200
        html = response.content.decode()
        assert f'Runs ranked by <strong><abbr title="{column}">{label}</abbr></strong>' in html
        assert "No run has a value" not in html
        pages.add(tuple(run_names(html)))
        export = client.get(
            reverse("leaderboard_export", args=["library", "json"]), {"measure": name}
        ).json()
        assert export["ranked_by"] == column and export["labels"][column] == label
        exports.add(tuple(run["run"] for run in export["runs"]))
        board = client.get("/api/benchmarks/library/", {"measure": name}).json()["leaderboard"]
        assert board["ranked_by"] == column and board["labels"][column] == label
        api.add(tuple(run["run_name"] for run in board["runs"]))
    assert pages == exports == api == {("system-B", "system-A")}


def test_an_unknown_measure_is_a_400_on_the_board_its_exports_and_api(client, demo):
    for url in (
        reverse("leaderboard", args=["library"]),
        reverse("leaderboard_export", args=["library", "csv"]),
        reverse("leaderboard_export", args=["library", "json"]),
    ):
        response = client.get(url, {"measure": "ndcg10"})
        assert response.status_code == 400, url
        text = response.content.decode()
        assert "There is no measure “ndcg10”" in text and "nDCG@10" in text
        assert "ranked by" not in text.lower()


def test_labels_come_from_the_catalog(client, demo):
    html = client.get(reverse("leaderboard", args=["library"]), {"measure": "Judged@10"}).content
    html = html.decode()
    assert 'Runs ranked by <strong><abbr title="judged_10">Judged@10</abbr></strong>' in html
    assert ">nDCG@10</a></th>" in html and ">AP</a></th>" in html
    assert not hasattr(boards, "MEASURE_LABELS")


# --- What is stored ---------------------------------------------------------------------


def test_every_catalog_measure_is_stored_per_need_and_tested_ones_as_vectors(demo):
    from evaluation.measures import stored_measures

    run = Submission.objects.get(benchmark=demo, run_name="system-B")
    result = run.current_result()
    frame = result.per_need_frame()
    wanted = {entry.column for entry in stored_measures() if entry.per_need}
    assert wanted <= set(frame.columns)
    assert {"ndcg_cut_10", "recip_rank_cut_10", "judged_10"} <= set(frame.columns)
    assert set(result.vectors.values_list("measure", flat=True)) == set(demo.tested_measures())


# --- Interpolation reaches the engine -------------------------------------------------------


def _interpolation_benchmark(mode: str) -> Benchmark:
    """One need with R = 3: at recall 0.7 the exact rule needs 3 relevant documents
    (ceil(2.1)), trec_eval 9.0.8 counts (long)(2.1 + 0.9) = 2 (docs/engine.md)."""
    benchmark = Benchmark.objects.create(slug=f"interp-{mode}", title=mode, interpolation=mode)
    load_needs(benchmark, SimpleUploadedFile("needs.tsv", b"q1\tThe need\n"), "needs.tsv")
    qrels = b"q1 0 r1 1\nq1 0 r2 1\nq1 0 r3 1\nq1 0 n1 0\n"
    load_judgments(benchmark, SimpleUploadedFile("qrels.txt", qrels), "qrels.txt")
    benchmark.refresh_from_db()
    return benchmark


# Relevant at ranks 1, 3 and 10: precision 1, 2/3 and 3/10.
RUN = "".join(
    f"q1 Q0 {doc} {rank} {100 - rank} tag\n"
    for rank, doc in enumerate(["r1", "x1", "r2", *[f"x{i}" for i in range(2, 8)], "r3"], 1)
).encode()


@pytest.mark.parametrize(("mode", "iprec_07"), [("exact", 0.3), ("trec_eval-9", 2 / 3)])
def test_the_interpolation_mode_reaches_the_engine(
    client, participant, django_capture_on_commit_callbacks, mode, iprec_07
):
    benchmark = _interpolation_benchmark(mode)
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/benchmarks/{benchmark.slug}/submit/",
            {"file": SimpleUploadedFile("run.txt", RUN), "description": ""},
        )
    assert response.status_code == 302
    run = Submission.objects.get(benchmark=benchmark)
    assert run.status == "scored", run.failure_reason
    frame = run.current_result().per_need_frame()
    assert frame.loc["q1", "iprec_at_recall_0.70"] == pytest.approx(iprec_07, abs=1e-12)
    assert frame.loc["q1", "iprec_at_recall_0.60"] == pytest.approx(2 / 3, abs=1e-12)
    page = client.get(f"/submissions/{run.pk}/").content.decode()
    assert f"Interpolated precision follows <code>{mode}</code>" in page
    board = client.get(reverse("leaderboard", args=[benchmark.slug])).content.decode()
    assert f"follows <code>{mode}</code>" in board


# --- Pending tests never contradict the table -----------------------------------------------


def test_queued_tests_are_computed_on_the_page_or_said_to_be_pending(client, demo, monkeypatch):
    Comparison.objects.filter(measure="map").delete()  # as if still queued
    html = client.get(reverse("leaderboard", args=["library"])).content.decode()
    assert "pending" not in html  # small board: tested on the page
    assert "Holm-corrected over the 1 comparison" in html
    monkeypatch.setattr(boards, "ON_THE_FLY_CELLS", 0)
    html = client.get(reverse("leaderboard", args=["library"])).content.decode()
    assert '<span class="muted">pending</span>' in html
    assert "No run is statistically tied" not in html
    assert "Tests against #1 are still running for 1 run" in html


def test_a_measure_without_stored_tests_says_so(client, demo, monkeypatch):
    monkeypatch.setattr(boards, "ON_THE_FLY_CELLS", 0)
    html = client.get(reverse("leaderboard", args=["library"]), {"measure": "P@10"})
    html = html.content.decode()
    assert "No stored significance tests for P@10" in html
    assert "No run is statistically tied" not in html


def test_a_summary_only_primary_is_not_tested_nor_pending_forever(client, demo):
    # GMAP ranks the board but has no per-need values: no pair is ever tested on it
    Benchmark.objects.filter(pk=demo.pk).update(primary_measure="gm_map")
    demo.refresh_from_db()
    assert demo.tested_measures() == ["map"]
    html = client.get(reverse("leaderboard", args=["library"])).content.decode()
    assert "pending" not in html and "still running" not in html
    assert "Runs are not tested on GMAP" in html
    page = client.get(reverse("significance", args=["library"])).content.decode()
    assert "Paired t-test on AP for every pair" in page  # the tested measure, not GMAP
    api = client.get("/api/benchmarks/library/significance/")
    assert api.status_code == 200 and api.json()["measure"] == "map"
    assert api.json()["family_size"] == 1


# --- Changing the tested measures queues the missing tests ----------------------------------


def test_changing_the_primary_measure_queues_the_missing_comparisons(
    client, demo, organizer, django_capture_on_commit_callbacks
):
    demo.organizers.add(organizer)
    assert not Comparison.objects.filter(measure="recip_rank_cut_10").exists()
    client.force_login(organizer)
    data = benchmark_form(
        slug="library",
        title=demo.title,
        primary_measure="RR@10",
        shown_measures="nDCG@10",
        significance_measures="AP",
        interpolation="exact",
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/leaderboard/benchmark/{demo.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    demo.refresh_from_db()
    assert demo.primary_measure == "recip_rank_cut_10"
    assert Comparison.objects.filter(measure="recip_rank_cut_10").count() == 1
    assert MeasureVector.objects.filter(measure="recip_rank_cut_10").count() == 2


# --- End to end: upload, a real worker, the pages --------------------------------------------


def _run_c() -> bytes:
    """A run with one relevant document at rank 1 of every need and nothing else
    relevant: RR@10 = 1 like system-B, nDCG@10 below both demo runs."""
    needs: dict[str, str] = {}
    for line in (DEMO / "qrels.txt").read_text().splitlines():
        need, _, doc, rel = line.split()
        if int(rel) > 0:
            needs.setdefault(need, doc)
    return "".join(
        f"{need} Q0 {doc} {rank} {20 - rank} run-c\n"
        for need, first in needs.items()
        for rank, doc in enumerate([first, *[f"junk-{i}" for i in range(9)]], 1)
    ).encode()


def _ranks(html: str) -> dict[str, str]:
    import re

    return dict(
        (name, rank)
        for rank, name in re.findall(
            r'<tr[^>]*><td class="num rank">([^<]+)</td><th scope="row"><a href="/submissions/\d+/"[^>]*>'
            r"([^<]+)</a>",
            html,
        )
    )


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_benchmark_ranked_by_ndcg_then_rr_end_to_end(
    start_worker,  # noqa: F811 (the fixture imported above)
    client,
    organizer,
    participant,
):
    """PostgreSQL, Redis and a real worker: the organizer creates a benchmark ranked by
    nDCG@10 in the admin, three runs are uploaded through the form and scored and tested
    by the worker; the board, the significance page and the compare page follow nDCG@10;
    switching the primary measure to RR@10 queues its tests, and every page follows."""
    from tests.leaderboard.workers import wait_for

    start_worker()
    client.force_login(organizer)
    data = benchmark_form(
        primary_measure="nDCG@10",
        shown_measures="RR@10, AP",
        needs_file=SimpleUploadedFile("needs.tsv", (DEMO / "needs.tsv").read_bytes()),
        qrels_file=SimpleUploadedFile("qrels.txt", (DEMO / "qrels.txt").read_bytes()),
    )
    assert client.post("/admin/leaderboard/benchmark/add/", data).status_code == 302
    benchmark = Benchmark.objects.get(slug="msmarco")
    client.force_login(participant)
    files = {
        "system-A": (DEMO / "run-A.txt").read_bytes(),
        "system-B": (DEMO / "run-B.txt").read_bytes(),
        "run-c": _run_c(),
    }
    for name, content in files.items():
        response = client.post(
            "/benchmarks/msmarco/submit/",
            {"file": SimpleUploadedFile(f"{name}.txt", content), "run_name": name},
        )
        assert response.status_code == 302, response.content.decode()[:2000]
    runs = Submission.objects.filter(benchmark=benchmark)

    def tested(measure: str) -> bool:
        return (
            Comparison.objects.filter(submission_a__benchmark=benchmark, measure=measure).count()
            == 3
        )

    wait_for(
        lambda: (
            runs.filter(status="scored").count() == 3 and tested("ndcg_cut_10") and tested("map")
        ),
        timeout=90,
        what="the worker to score and test three runs",
    )
    ids = {run.run_name: run.pk for run in runs}
    assert set(ids) == set(files), ids
    board_url = reverse("leaderboard", args=["msmarco"])
    html = client.get(board_url).content.decode()
    assert 'Runs ranked by <strong><abbr title="ndcg_cut_10">nDCG@10</abbr></strong>' in html
    assert run_names(html) == ["system-B", "system-A", "run-c"]
    assert "pending" not in html
    significance = client.get(reverse("significance", args=["msmarco"])).content.decode()
    assert "nDCG@10" in significance and 'class="missing"' not in significance  # all tested
    compare_url = reverse("compare", args=["msmarco", ids["system-B"], ids["run-c"]])
    compare = client.get(compare_url, {"measure": "nDCG@10"}).content.decode()
    assert "nDCG@10 over 4 needs" in compare

    # The organizer switches the primary measure to RR@10: its tests are queued at once.
    client.force_login(organizer)
    change = benchmark_form(primary_measure="RR@10", shown_measures="nDCG@10, AP")
    response = client.post(f"/admin/leaderboard/benchmark/{benchmark.pk}/change/", change)
    assert response.status_code == 302, response.content.decode()[:3000]
    wait_for(lambda: tested("recip_rank_cut_10"), timeout=60, what="the RR@10 tests")
    html = client.get(board_url).content.decode()
    assert 'Runs ranked by <strong><abbr title="recip_rank_cut_10">RR@10</abbr></strong>' in html
    # B and run-c both have RR@10 = 1: they share rank 1, A (0.75) is third.
    assert _ranks(html) == {"system-B": "1", "run-c": "1", "system-A": "3"}
    assert "pending" not in html
    tied = html.split('class="tied-summary"')[1].split("</p>")[0]
    assert "run-c" in tied  # identical per-need RR@10: p = 1, tied with #1
    assert 'class="tied"><td class="num rank">1</td><th scope="row"><a href="/submissions/' in html
    significance = client.get(reverse("significance", args=["msmarco"])).content.decode()
    assert "RR@10" in significance and 'class="missing"' not in significance
    compare = client.get(compare_url, {"measure": "recip_rank_cut_10"}).content.decode()
    assert "RR@10 over 4 needs" in compare


def test_changing_the_interpolation_rescores_every_run(
    client, participant, organizer, django_capture_on_commit_callbacks
):
    benchmark = _interpolation_benchmark("exact")
    benchmark.organizers.add(organizer)
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/benchmarks/{benchmark.slug}/submit/",
            {"file": SimpleUploadedFile("run.txt", RUN), "description": ""},
        )
    run = Submission.objects.get(benchmark=benchmark)
    assert run.current_result().per_need_frame().loc["q1", "iprec_at_recall_0.70"] == 0.3
    client.force_login(organizer)
    data = benchmark_form(slug=benchmark.slug, title=benchmark.title, interpolation="trec_eval-9")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/leaderboard/benchmark/{benchmark.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    run.refresh_from_db()
    assert run.status == "scored"
    value = run.current_result().per_need_frame().loc["q1", "iprec_at_recall_0.70"]
    assert value == pytest.approx(2 / 3, abs=1e-12)
