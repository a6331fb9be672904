"""The participants' client reading a comparison from the live server (pytest-django's
``live_server``, PostgreSQL): ``rrl.Client.compare`` and ``rrl compare`` on a benchmark
whose primary measure is not MAP. The demo is scored in-process, so no worker is needed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

import rrl
from leaderboard.models import Benchmark, Submission
from leaderboard.reading.boards import measure_label
from tests.leaderboard.api.test_rrl_end_to_end import rrl_command

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def site(live_server, transactional_db):
    call_command("load_demo", stdout=io.StringIO())
    return live_server.url


def test_the_client_compares_on_the_primary_measure_and_names_what_it_lacks(site, tmp_path):
    Benchmark.objects.filter(slug="library").update(primary_measure="P_10")
    a, b = Submission.objects.filter(benchmark__slug="library").order_by("pk")
    client = rrl.Client(site, backoff=0)

    answer = client.compare("library", a.pk, b.pk)
    assert answer["measure"] == "P_10" and answer["labels"] == {"P_10": "P@10"}
    assert answer["a"]["submission_id"] == a.pk and answer["b"]["submission_id"] == b.pk
    assert answer == client.compare("library", a.pk, b.pk, "P@10")
    assert [n["need_id"] for n in answer["per_need"]]  # the judged needs, paired
    assert client.compare("library", a.pk, b.pk, "map")["measure"] == "map"

    facts_a, facts_b = Submission.objects.filter(benchmark__slug="library-facts").order_by("pk")
    assert client.compare("library-facts", facts_a.pk, facts_b.pk)["measure"] == "recip_rank"

    with pytest.raises(rrl.ApiError) as refused:
        client.compare("library", a.pk, b.pk, "P_7")
    assert refused.value.status == 400 and "P_10" in refused.value.details["measures"]
    with pytest.raises(rrl.ApiError) as count:  # a count is no score to compare runs on
        client.compare("library", a.pk, b.pk, "num_rel_ret")
    assert count.value.status == 400 and "num_rel_ret" not in count.value.details["measures"]
    assert "num_rel_ret is a count" in str(count.value)

    printed = rrl_command(
        "--url", site, "compare", "library", str(a.pk), str(b.pk), config=tmp_path
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("P@10: ")
    # the judgments and needs compared under the heading, as board and results print them,
    # then the server's one-sentence verdict, word for word
    assert " P@10 on " in answer["verdict"] and "(t-test p " in answer["verdict"]
    assert printed.stdout.splitlines()[1:3] == ["Judgments v1, all needs", answer["verdict"]]
    lacking = rrl_command(
        "--url", site, "compare", "library", str(a.pk), str(b.pk), "--measure", "P_7",
        config=tmp_path,
    )  # fmt: skip
    assert lacking.returncode == 1 and "no per-need values of P_7" in lacking.stderr


def test_rrl_prints_the_measures_as_the_pages_name_them(site, tmp_path):
    """``rrl board``, ``results`` and ``status`` show the catalog's labels the API sends in
    ``labels`` (nDCG@10, AP, P@10, RR), never trec_eval's columns."""
    a = Submission.objects.filter(benchmark__slug="library").order_by("pk").first()

    board = rrl_command(
        "--url", site, "board", "library", "--measure", "ndcg_cut_10", config=tmp_path
    )
    assert board.returncode == 0, board.stderr
    assert "ranked by nDCG@10" in board.stdout
    header = next(line for line in board.stdout.splitlines() if line.startswith("rank"))
    assert "nDCG@10" in header and "ndcg_cut" not in board.stdout

    results = rrl_command("--url", site, "results", str(a.pk), "--measure", "P_10", config=tmp_path)
    assert results.returncode == 0, results.stderr
    assert "P@10 per need" in results.stdout and "P_10" not in results.stdout

    status = rrl_command("--url", site, "status", str(a.pk), config=tmp_path)
    assert status.returncode == 0, status.stderr
    names = [line.split()[0] for line in status.stdout.splitlines() if line.startswith("  ")]
    shown = dict.fromkeys([a.benchmark.primary_measure, *a.benchmark.shown_measures])
    assert names == [measure_label(m) for m in shown] and "nDCG@10" in names
