"""CSV and JSON exports: JSON every digit of the stored values, CSV at most six decimals."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from leaderboard.models import Comparison, Result, Submission
from leaderboard.reading.boards import measure_label
from tests.leaderboard import pages_data as data

library, demo_user, reader = data.library, data.demo_user, data.reader
pytestmark = pytest.mark.django_db


def stored() -> dict[str, Result]:
    return {r.submission.run_name: r for r in Result.objects.select_related("submission")}


def test_leaderboard_json(client, library):
    response = client.get(reverse("leaderboard_export", args=["library", "json"]))
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    payload = json.loads(response.content)
    assert payload["benchmark"] == "library" and payload["judgments_version"] == 1
    assert payload["num_needs"] == 4 and payload["primary_measure"] == "map"
    assert [run["run"] for run in payload["runs"]] == ["system-B", "system-A"]
    assert [run["rank"] for run in payload["runs"]] == [1, 2]
    results = stored()
    for run in payload["runs"]:
        assert run["summary"] == results[run["run"]].summary
        assert run["num_needs"] == 4 and run["judgments_version"] == 1
    assert payload["runs"][1]["baseline"] is True


def test_leaderboard_csv(client, library):
    response = client.get(reverse("leaderboard_export", args=["library", "csv"]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["run"] for row in rows] == ["system-B", "system-A"]
    results = stored()
    for row in rows:
        summary = results[row["run"]].summary
        for measure, value in summary.items():  # headed by the label: AP, not map
            assert float(row[measure_label(measure)]) == pytest.approx(value, abs=5e-7)
        assert row["num_needs"] == "4" and row["judgments_version"] == "1"


def test_export_respects_measure_and_visibility(client, library, demo_user):
    payload = json.loads(
        client.get(
            reverse("leaderboard_export", args=["library", "json"]), {"measure": "P@5"}
        ).content
    )
    assert payload["ranked_by"] == "P_5"
    assert [run["run"] for run in payload["runs"]] == ["system-B", "system-A"]
    Submission.objects.filter(run_name="system-A").update(is_hidden=True)
    url = reverse("leaderboard_export", args=["library", "csv"])
    assert "system-A" not in client.get(url).content.decode()
    client.force_login(demo_user)
    assert "system-A" in client.get(url).content.decode()


def test_unknown_export_format_is_404(client, library):
    for fmt in ("xml", "CSV", "json5"):
        url = reverse("leaderboard_export", args=["library", fmt])
        assert client.get(url).status_code == 404


def test_per_need_csv_equals_stored(client, library):
    run = Submission.objects.get(run_name="system-B")
    response = client.get(reverse("submission_csv", args=[run.pk]))
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    frame = run.results.get().per_need_frame()
    assert [row["need_id"] for row in rows] == frame.index.tolist()
    for row in rows:
        for measure in frame.columns:
            assert float(row[measure_label(measure)]) == pytest.approx(
                frame.loc[row["need_id"], measure], abs=5e-7
            )
    Submission.objects.filter(pk=run.pk).update(is_hidden=True)
    assert client.get(reverse("submission_csv", args=[run.pk])).status_code == 404


def test_csv_has_six_decimals_integer_counts_and_need_titles(client, library):
    # 0.6199999999999999 in a spreadsheet reads as noise; JSON keeps every digit.
    run = Submission.objects.get(run_name="system-B")
    result = run.results.get()
    summary = {**result.summary, "map": 0.6199999999999999, "num_ret": 40.0, "P_5": 3e-9}
    Result.objects.filter(pk=result.pk).update(summary=summary)
    rows = list(
        csv.DictReader(
            io.StringIO(
                client.get(reverse("leaderboard_export", args=["library", "csv"])).content.decode()
            )
        )
    )
    line = next(row for row in rows if row["run"] == "system-B")
    assert line["AP"] == "0.62"
    assert line["NumRet"] == "40"
    assert line["NumRelRet"] == str(round(summary["num_rel_ret"]))
    assert line["P@5"] == "3e-09"  # not rounded away to 0
    for row in rows:
        for key, cell in row.items():
            if "." in cell and cell.replace(".", "", 1).lstrip("-").isdigit():
                assert len(cell.split(".")[1]) <= 6, (key, cell)
    payload = json.loads(
        client.get(reverse("leaderboard_export", args=["library", "json"])).content
    )
    b = next(r for r in payload["runs"] if r["run"] == "system-B")
    assert b["summary"]["map"] == 0.6199999999999999

    response = client.get(reverse("submission_csv", args=[run.pk]))
    per_need = list(csv.DictReader(io.StringIO(response.content.decode())))
    titles = dict(library.needs.values_list("need_id", "title"))
    assert [row["title"] for row in per_need] == [titles[row["need_id"]] for row in per_need]
    assert all(row["title"] for row in per_need)
    for row in per_need:
        assert "." not in row["NumRel"] and "." not in row["NumRelRet"]
        for measure in ("AP", "P@5", "P@10", "RR"):
            assert len(row[measure].partition(".")[2]) <= 6


def _textbook(p: list[float], method: str) -> list[float]:
    """Holm and Benjamini-Hochberg written out, for the export's family against #1."""
    m, order = len(p), sorted(range(len(p)), key=lambda i: p[i])
    out = [0.0] * m
    if method == "holm":
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p[i]))
            out[i] = running
    else:
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, m * p[i] / (rank + 1))
            out[i] = running
    return out


def test_export_gives_raw_p_against_leader_and_bh_on_request(client, demo_user):
    needs = {f"n{i}": f"need {i}" for i in range(8)}
    benchmark = data.make_benchmark("family", needs)
    base = np.linspace(0.2, 0.9, 8)
    shifts = {"lead": 0.0, "near": -0.02, "mid": -0.06, "far": -0.3}
    noise = np.random.default_rng(4).normal(0, 0.05, (len(shifts), 8))
    for (name, shift), wobble in zip(shifts.items(), noise, strict=True):
        values = base + shift + (wobble if shift else 0)
        data.add_run(benchmark, demo_user, name, pd.DataFrame({"map": values}, index=list(needs)))
    data.store_comparisons(benchmark)
    url = reverse("leaderboard_export", args=["family", "json"])
    runs = {}
    for correction in ("holm", "bh", "none"):
        payload = json.loads(client.get(url, {"correction": correction}).content)
        assert payload["correction"] == correction and payload["runs"][0]["run"] == "lead"
        runs[correction] = payload["runs"][1:]
    raw = [run["p_vs_leader_raw"] for run in runs["none"]]
    assert raw == [run["p_vs_leader_raw"] for run in runs["holm"]]
    assert all("p_vs_leader_holm" not in run for run in runs["none"])
    holm = [run["p_vs_leader_holm"] for run in runs["holm"]]
    bh = [run["p_vs_leader_bh"] for run in runs["bh"]]
    assert holm == pytest.approx(_textbook(raw, "holm"), rel=1e-12)
    assert bh == pytest.approx(_textbook(raw, "bh"), rel=1e-12)
    assert bh != pytest.approx(holm)  # the two corrections differ on this family
    csv_rows = list(
        csv.DictReader(
            io.StringIO(
                client.get(
                    reverse("leaderboard_export", args=["family", "csv"]), {"correction": "bh"}
                ).content.decode()
            )
        )
    )
    # six significant digits for a small p (5.2e-06), not six decimals (0.000005)
    assert [float(r["p_vs_leader_bh"]) for r in csv_rows[1:]] == pytest.approx(bh, rel=5e-4)
    assert min(bh) < 1e-5
    bad = client.get(url, {"correction": "bonferroni"})
    assert bad.status_code == 400 and "holm, bh, none" in bad.content.decode()
    api = client.get("/api/benchmarks/family/leaderboard.json", {"correction": "bh"})
    assert [run["p_vs_leader_bh"] for run in api.json()["runs"][1:]] == bh
    assert client.get("/api/benchmarks/family/leaderboard.csv?correction=x").status_code == 400


def test_comparison_json_of_a_constant_difference_is_valid_json(client, demo_user):
    needs = {f"n{i}": f"need {i}" for i in range(4)}
    benchmark = data.make_benchmark("offset", needs)
    base = np.array([0.2, 0.4, 0.6, 0.8])
    a, b = (
        data.add_run(benchmark, demo_user, name, pd.DataFrame({"map": v}, index=list(needs)))
        for name, v in (("up", base + 0.1), ("down", base))
    )
    data.store_comparisons(benchmark)
    for stored in (True, False):
        if not stored:  # computed on the page: compare_pair's inf as well
            Comparison.objects.filter(judgments=benchmark.current_judgments).delete()
        url = reverse("compare_json", args=["offset", a.pk, b.pk])
        text = client.get(url).content.decode()

        def refuse(constant):
            raise AssertionError(f"{constant} is not JSON")

        tests = json.loads(text, parse_constant=refuse)["tests"]
        assert tests["effect_size"] is None and tests["t_statistic"] is None  # +inf
        assert tests["mean_diff"] == pytest.approx(0.1) and tests["t_p"] > 0


def test_an_empty_board_csv_has_the_columns_of_a_full_one(client, library):
    """A script reading the board before the first run is scored finds the columns it
    reads later (the header was ``rank,run`` alone)."""
    full = client.get(reverse("leaderboard_export", args=["library", "csv"]))
    head = next(csv.reader(io.StringIO(full.content.decode())))
    data.make_benchmark("empty", {"q1": "a need"})
    empty = client.get(reverse("leaderboard_export", args=["empty", "csv"]))
    assert empty.status_code == 200
    rows = list(csv.reader(io.StringIO(empty.content.decode())))
    assert len(rows) == 1
    assert rows[0] == head[: len(rows[0])]
    assert rows[0][:11] == [
        "rank", "run", "submission_id", "participant", "team", "submitted", "baseline",
        "num_needs", "judgments_version", "p_vs_leader_raw", "p_vs_leader_holm",
    ]  # fmt: skip
