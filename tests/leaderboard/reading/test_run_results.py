"""A run's per-need results beside the best, median and worst of the field: numpy's max,
median and min over the final runs' stored per-need values (0 for a need not answered),
on the page, its CSV and JSON, the API and ``rrl results``."""

from __future__ import annotations

import csv
import functools
import io
import re

import httpx
import numpy as np
import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.models import Phase, Result, Submission, final_runs
from leaderboard.pages.campaigns import _rows_html
from leaderboard.pages.shortcuts import fmt
from leaderboard.reading.results import run_results
from rrl import cli
from rrl import client as rrl_client
from tests.leaderboard.models.test_final_runs import CLOSES, DURING, OPENS

DEMO_QRELS = "leaderboard/demo/qrels.txt"


def generated_run(seed: int, name: str, skip: str | None = None) -> bytes:
    """A run over the library's judged docs and some unjudged ones, in random order;
    ``skip``: a need it does not answer."""
    rng = np.random.default_rng(seed)
    by_need: dict[str, list[str]] = {}
    for line in open(DEMO_QRELS).read().split("\n"):
        if line.strip():
            need, _, doc, _ = line.split()
            by_need.setdefault(need, []).append(doc)
    lines = []
    for need, docs in sorted(by_need.items()):
        if need == skip:
            continue
        pool = docs + [f"{need}-other-{i}" for i in range(10)]
        picked = rng.choice(pool, size=int(rng.integers(3, len(pool))), replace=False)
        for rank, doc in enumerate(picked, 1):
            lines.append(f"{need} Q0 {doc} {rank} {100 - rank} {name}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def field(client, library, participant, other_participant, django_capture_on_commit_callbacks):
    """Five scored runs in the phase Test: alice's four (two marked final), bob's one."""
    library.daily_limit = 10
    library.save()
    phase = Phase.objects.create(
        benchmark=library, name="Test", opens=OPENS, closes=CLOSES, final_runs=2
    )
    made = []
    with time_machine.travel(DURING, tick=False):
        for i, (user, skip) in enumerate(
            [(participant, None), (participant, "atwood"), (participant, None),
             (participant, "stage-plays"), (other_participant, None)]
        ):  # fmt: skip
            client.force_login(user)
            with django_capture_on_commit_callbacks(execute=True):
                upload = SimpleUploadedFile("r.txt", generated_run(i, f"run{i}", skip))
                answer = client.post("/benchmarks/library/submit/", {"file": upload})
            assert answer.status_code == 302, answer.content
            made.append(Submission.objects.get(run_name=f"run{i}"))
    assert {r.status for r in Submission.objects.all()} == {"scored"}
    Submission.objects.filter(pk=made[3].pk).update(final_priority=1)
    Submission.objects.filter(pk=made[1].pk).update(final_priority=2)
    library.refresh_from_db()
    return phase, made


def expected(phase, measure):
    finals = [f.submission for f in final_runs(phase.benchmark, phase)]
    needs = phase.benchmark.current_judgments.need_ids
    values = []
    for run in finals:
        frame = run.current_result().per_need_frame()
        values.append([frame[measure].get(n, 0.0) for n in needs])
    values = np.array(values)
    return finals, needs, values.max(axis=0), np.median(values, axis=0), values.min(axis=0)


def test_best_median_worst_are_numpys_over_the_final_runs(client, field, participant):
    phase, runs = field
    finals, needs, best, median, worst = expected(phase, "map")
    # alice's marked two (priority order), bob's latest: three runs, not all five
    assert [r.run_name for r in finals] == ["run3", "run1", "run4"]
    client.force_login(participant)
    got = client.get(f"/submissions/{runs[0].pk}/results.json").json()
    assert got["measure"] == "map" and got["field_runs"] == 3
    assert [n["need_id"] for n in got["needs"]] == needs
    np.testing.assert_array_equal([n["best"] for n in got["needs"]], best)
    np.testing.assert_array_equal([n["median"] for n in got["needs"]], median)
    np.testing.assert_array_equal([n["worst"] for n in got["needs"]], worst)
    own = runs[0].current_result().per_need_frame()["map"]
    assert [n["run"] for n in got["needs"]] == [own[n] for n in needs]
    # run3 does not answer stage-plays: it scores 0 there, so the worst is 0
    assert got["needs"][needs.index("stage-plays")]["worst"] == 0.0
    # the API answers the same
    api = client.get(f"/api/submissions/{runs[0].pk}/results/?measure=P@10").json()
    _, _, best10, median10, worst10 = expected(phase, "P_10")
    assert api["measure"] == "P_10"
    np.testing.assert_array_equal([n["median"] for n in api["needs"]], median10)
    np.testing.assert_array_equal([n["best"] for n in api["needs"]], best10)


def test_the_table_writes_the_api_s_values_as_trec_eval_prints_them(client, field, participant):
    """Four decimals rounded from the double, as trec_eval's ``%.4f`` (the leaderboard's
    and the comparison's ``fmt``), a dash for no value: one number format on every page."""
    _, runs = field
    client.force_login(participant)
    api = client.get(f"/api/submissions/{runs[2].pk}/results/?measure=map").json()
    html = client.get(f"/submissions/{runs[2].pk}/results/?measure=map").content.decode()
    cells = re.findall(r'<tr><th scope="row">([^<]*)</th>' + "<td>([^<]*)</td>" * 4, html)
    keys = ("run", "best", "median", "worst")
    assert cells == [(n["need_id"], *(fmt(n[k]) for k in keys)) for n in api["needs"]]
    assert len(cells) == len(api["needs"]) > 0
    assert any(not value.endswith("0") for row in cells for value in row[1:])  # not all round
    assert (fmt(0.12345), fmt(None), fmt(float("nan"))) == ("0.1235", "—", "—")


def test_a_row_is_written_as_trec_eval_prints_where_decimal_rounding_differs():
    """0.00015 is stored just below the tie: trec_eval's %.4f prints 0.0001, where Django's
    floatformat (half-up on the shortest decimal) wrote 0.0002; no value is a dash."""
    row = {"need_id": "q<1>", "run": 0.00015, "best": 0.5, "median": None, "worst": 0.0}
    assert str(_rows_html([row])).strip() == (
        '<tr><th scope="row">q&lt;1&gt;</th>'
        "<td>0.0001</td><td>0.5000</td><td>—</td><td>0.0000</td></tr>"
    )


def test_the_page_draws_the_table_and_the_plot_and_the_csv_matches(client, field, participant):
    phase, runs = field
    _, needs, best, median, worst = expected(phase, "P_10")
    client.force_login(participant)
    page = client.get(f"/submissions/{runs[2].pk}/results/?measure=P_10")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-plot="results"' in html and "final runs of the phase Test (3 runs)" in html
    rows = list(csv.reader(io.StringIO(client.get(
        f"/submissions/{runs[2].pk}/results.csv?measure=P_10"
    ).content.decode())))  # fmt: skip
    assert rows[0] == ["need_id", "P@10", "best", "median", "worst"]
    assert [r[0] for r in rows[1:]] == needs
    assert [float(r[3]) for r in rows[1:]] == pytest.approx(median.tolist(), abs=5e-7)
    bad = client.get(f"/submissions/{runs[2].pk}/results/?measure=nope")
    assert bad.status_code == 400 and b"No stored measure" in bad.content
    assert client.get(f"/api/submissions/{runs[2].pk}/results/?measure=nope").status_code == 400
    assert client.get("/submissions/999999/results/").status_code == 404


def test_without_phases_the_field_is_every_scored_live_run(client, field, participant):
    phase, runs = field
    phase.delete()  # the runs stay, in no phase, on a benchmark without phases
    Submission.objects.filter(pk=runs[2].pk).update(status=Submission.Status.WITHDRAWN)
    live = [r for i, r in enumerate(runs) if i != 2]
    frames = [r.current_result().per_need_frame()["map"] for r in live]
    needs = runs[0].benchmark.current_judgments.need_ids
    values = np.array([[f.get(n, 0.0) for n in needs] for f in frames])
    client.force_login(participant)
    got = client.get(f"/api/submissions/{runs[0].pk}/results/").json()
    assert got["field"] == "scored runs" and got["field_runs"] == 4
    np.testing.assert_array_equal([n["median"] for n in got["needs"]], np.median(values, axis=0))
    np.testing.assert_array_equal([n["best"] for n in got["needs"]], values.max(axis=0))
    np.testing.assert_array_equal([n["worst"] for n in got["needs"]], values.min(axis=0))
    unscored = Submission.objects.create(
        benchmark=runs[0].benchmark, participant=participant, run_name="q", file="runs/q.txt"
    )
    assert client.get(f"/submissions/{unscored.pk}/results/").status_code == 404


def test_rrl_results_prints_the_apis_table(client, field, participant, monkeypatch, capsys):
    """The command on the API's answer (read through the test client and served to the
    client's transport: the eager scoring tasks leave the test's connection unusable for
    a WSGI request outside the test client)."""
    phase, runs = field
    _, needs, best, _, _ = expected(phase, "map")
    client.force_login(participant)
    answer = client.get(f"/api/submissions/{runs[4].pk}/results/").json()

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == f"/api/submissions/{runs[4].pk}/results/"
        return httpx.Response(200, json=answer)

    fake = functools.partial(rrl_client.Client, transport=httpx.MockTransport(handler))
    monkeypatch.setattr(rrl_client, "Client", fake)
    monkeypatch.setenv("RRL_TOKEN", "t")
    assert cli.main(["--url", "http://lb.test", "results", str(runs[4].pk)]) == 0
    out = capsys.readouterr().out
    assert "beside the final runs of the phase Test (3)" in out
    first = next(line for line in out.splitlines() if line.startswith(needs[0]))
    assert f"{best[0]:.4f}" in first


def test_a_tested_measure_is_read_from_the_vectors_with_the_matrices_values(field):
    """The field's values of a tested measure (map) come from the stored vectors, not the
    runs' whole per-need matrices, and equal the matrices' column."""
    _, runs = field
    result = runs[0].current_result()
    with CaptureQueriesContext(connection) as queries:
        got = run_results(runs[0], result, "map")
    assert not any('"per_need"' in query["sql"] for query in queries.captured_queries)
    needs = got.table.index
    columns = np.array([
        Result.objects.get(submission=run, judgments=result.judgments)
        .per_need_frame()["map"].reindex(needs, fill_value=0.0).to_numpy()
        for run in got.field
    ])  # fmt: skip
    np.testing.assert_array_equal(got.table["best"], columns.max(axis=0))
    np.testing.assert_array_equal(got.table["median"], np.median(columns, axis=0))
    np.testing.assert_array_equal(got.table["worst"], columns.min(axis=0))
