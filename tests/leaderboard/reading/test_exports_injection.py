"""CSV exports against formula injection (OWASP): text cells starting with = + - @ TAB CR
get a leading quote; the numbers the exporter writes stay numbers."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from leaderboard.models import Benchmark, Result, Submission
from leaderboard.pipeline.loading import load_judgments
from leaderboard.reading.exports import _csv

NEEDS = ["=cmd|'/Ccalc'!A0", "@SUM(A1:A9)", "-5", "+1", "plain"]


@pytest.fixture
def hostile(db, django_capture_on_commit_callbacks):
    """A benchmark whose need ids and participants are formulas, with one scored run."""
    benchmark = Benchmark.objects.create(slug="hostile", title="Hostile")
    qrels = "".join(f"{need} 0 d1 1\n{need} 0 d2 0\n" for need in NEEDS).encode()
    load_judgments(benchmark, io.BytesIO(qrels), "qrels.txt")
    user = get_user_model().objects.create_user("+A1+B1", password="pw-formula-123")
    run = "".join(f"{need} Q0 d{i} {i} {3 - i} -run\n" for need in NEEDS for i in (1, 2))
    client = Client()
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/benchmarks/hostile/submit/",
            {"file": SimpleUploadedFile("run.txt", run.encode()), "run_name": "-run"},
        )
    assert response.status_code == 302
    submission = Submission.objects.get(benchmark=benchmark)
    assert submission.status == "scored", submission.failure_reason
    return submission


def cells(response) -> list[list[str]]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_per_need_csv_escapes_formula_need_ids(client, hostile):
    rows = cells(client.get(reverse("submission_csv", args=[hostile.pk])))
    header, body = rows[0], rows[1:]
    assert header[:2] == ["need_id", "title"]
    assert sorted(row[0] for row in body) == sorted(
        ["'=cmd|'/Ccalc'!A0", "'@SUM(A1:A9)", "'-5", "'+1", "plain"]
    )
    for row in body:
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r"))
        for value in row[2:]:
            float(value)  # every measure cell is a plain number


def test_leaderboard_csv_escapes_names_and_keeps_numbers_numeric(client, hostile):
    result = Result.objects.get(submission=hostile)
    Result.objects.filter(pk=result.pk).update(summary={**result.summary, "map": -0.5})
    rows = cells(client.get(reverse("leaderboard_export", args=["hostile", "csv"])))
    header, (row,) = rows[0], rows[1:]
    line = dict(zip(header, row, strict=True))
    assert line["participant"] == "'+A1+B1"
    assert line["run"] == "'-run"
    assert line["AP"] == "-0.5"  # a number the exporter wrote: not escaped
    assert line["rank"] == "1" and line["num_needs"] == "5"
    assert line["submission_id"] == str(hostile.pk)
    for cell in row:
        if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
            float(cell)  # only numbers may start so


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+A1", "'+A1"),
        ("-A1", "'-A1"),
        ("@A1", "'@A1"),
        ("\tA1", "'\tA1"),
        ("\rA1", "'\rA1"),
        ("-5", "'-5"),  # a need id or name is text, even when it reads as a number
        ("a=b", "a=b"),
        ("", ""),
        (None, ""),
        (-0.5, "-0.5"),
        (-5, "-5"),
        (0.1 + 0.2, "0.3"),  # at most six decimals in a CSV
        (0.6199999999999999, "0.62"),
        (1 / 3, "0.333333"),
        (2.5e-9, "2.5e-09"),  # a tiny p-value keeps six significant digits, not 0
        (True, "True"),
    ],
)
def test_one_cell(value, cell):
    assert _csv(value) == cell
