"""CSV and JSON exports equal the stored values, every digit."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from leaderboard.models import Result, Submission
from tests.leaderboard import test_pages_data as data

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
        for measure, value in summary.items():
            assert float(row[measure]) == value  # repr round-trips: the stored float
        assert row["num_needs"] == "4" and row["judgments_version"] == "1"


def test_export_respects_measure_and_visibility(client, library, demo_user):
    rows = json.loads(
        client.get(
            reverse("leaderboard_export", args=["library", "json"]), {"measure": "num_rel_ret"}
        ).content
    )["runs"]
    assert [run["run"] for run in rows] == ["system-A", "system-B"]
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
            assert float(row[measure]) == frame.loc[row["need_id"], measure]
    Submission.objects.filter(pk=run.pk).update(is_hidden=True)
    assert client.get(reverse("submission_csv", args=[run.pk])).status_code == 404
