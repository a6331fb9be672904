"""A benchmark from an ir_datasets id, offline: datasets built from local files with
ir_datasets' own classes and registered under test ids; nothing is downloaded."""

from __future__ import annotations

import io

import ir_datasets
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrels, TrecQueries, TsvQueries
from ir_datasets.util import LocalDownload

from leaderboard.models import ApiToken, Benchmark, InformationNeed
from leaderboard.pipeline.datasets import DatasetError, dataset_files, title_field
from rrl import cli
from tests import DEMO
from tests.leaderboard.api.test_api import bearer, error_of
from tests.leaderboard.test_admin import benchmark_form

QRELS_DEFS = {0: "not relevant", 1: "relevant", 2: "highly relevant"}


def _register(name: str, dataset: Dataset) -> str:
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, dataset)
    return name


@pytest.fixture(scope="session")
def offline_dataset(tmp_path_factory) -> str:
    """The demo's four library needs and their qrels as an ir_datasets dataset."""
    folder = tmp_path_factory.mktemp("ir_datasets")
    queries = folder / "queries.tsv"
    needs = [line.split("\t")[:2] for line in (DEMO / "needs.tsv").read_text().splitlines()]
    queries.write_text("".join(f"{need}\t{title}\n" for need, title in needs))
    qrels = folder / "qrels.txt"
    qrels.write_bytes((DEMO / "qrels.txt").read_bytes())
    dataset = Dataset(
        TsvQueries(LocalDownload(queries)), TrecQrels(LocalDownload(qrels), QRELS_DEFS)
    )
    return _register("rrl-test/library", dataset)


@pytest.fixture(scope="session")
def topics_dataset(tmp_path_factory) -> str:
    """TREC topics (title, description, narrative: no ``text`` field)."""
    folder = tmp_path_factory.mktemp("ir_datasets_topics")
    topics = folder / "topics.txt"
    topics.write_text(
        "<top>\n<num> Number: 401\n<title> foreign minorities, Germany\n"
        "<desc> Description:\nWhat language and cultural differences\n"
        "<narr> Narrative:\nA relevant document will focus\n</top>\n"
    )
    qrels = folder / "qrels.txt"
    qrels.write_text("401 0 FBIS3-1 1\n401 0 FBIS3-2 0\n")
    dataset = Dataset(
        TrecQueries(LocalDownload(topics)), TrecQrels(LocalDownload(qrels), QRELS_DEFS)
    )
    return _register("rrl-test/topics", dataset)


@pytest.fixture(scope="session")
def queries_only(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("ir_datasets_queries") / "queries.tsv"
    path.write_text("1\tjust a query\n")
    return _register("rrl-test/queries-only", Dataset(TsvQueries(LocalDownload(path))))


def test_the_command_loads_a_dataset_as_needs_and_judgments(db, offline_dataset):
    out = io.StringIO()
    call_command("load_benchmark", "--ir-datasets", offline_dataset, stdout=out)
    benchmark = Benchmark.objects.get(slug="rrl-test-library")
    assert benchmark.title == "rrl-test/library"
    needs = dict(benchmark.needs.values_list("need_id", "title"))
    expected = dict(line.split("\t")[:2] for line in (DEMO / "needs.tsv").read_text().splitlines())
    assert needs == expected
    judgments = benchmark.current_judgments
    assert (judgments.version, judgments.num_needs, judgments.num_relevant) == (1, 4, 23)
    assert judgments.note == "ir_datasets rrl-test/library"
    assert "4 needs" in out.getvalue() and "judgments v1" in out.getvalue()
    # loading it again adds no judgments version (the same qrels, byte for byte)
    call_command("load_benchmark", "--ir-datasets", offline_dataset, stdout=io.StringIO())
    assert benchmark.judgments.count() == 1


def test_the_command_takes_a_slug_and_refuses_files_with_a_dataset(db, offline_dataset):
    call_command("load_benchmark", "lib", "--ir-datasets", offline_dataset, stdout=io.StringIO())
    assert Benchmark.objects.get(slug="lib").needs.count() == 4
    with pytest.raises(CommandError, match="either --ir-datasets or --needs/--qrels"):
        call_command(
            "load_benchmark",
            "lib",
            "--ir-datasets",
            offline_dataset,
            "--qrels",
            str(DEMO / "qrels.txt"),
        )
    with pytest.raises(CommandError, match="a slug"):
        call_command("load_benchmark", "--needs", str(DEMO / "needs.tsv"))


def test_unknown_ids_and_datasets_without_qrels_are_named(db, queries_only):
    with pytest.raises(CommandError, match="ir_datasets has no dataset 'no/such-thing'"):
        call_command("load_benchmark", "--ir-datasets", "no/such-thing")
    with pytest.raises(CommandError, match="'rrl-test/queries-only' has no qrels"):
        call_command("load_benchmark", "--ir-datasets", queries_only)
    assert not Benchmark.objects.exists()


def test_the_title_is_text_else_title_else_the_first_text_field(topics_dataset):
    files = dataset_files(topics_dataset)
    assert files.title_field == "title"
    assert files.needs == (
        b"401\tforeign minorities, Germany\tWhat language and cultural differences\n"
    )
    assert files.qrels == b"401 0 FBIS3-1 1\n401 0 FBIS3-2 0\n"

    from typing import NamedTuple

    class Text(NamedTuple):
        query_id: str
        title: str
        text: str

    class Other(NamedTuple):
        query_id: str
        number: int
        keywords: str

    class Untyped(NamedTuple):
        query_id: str
        body: object

    assert [title_field(cls) for cls in (Text, Other, Untyped)] == ["text", "keywords", "body"]


def test_a_failed_download_is_a_clear_error(tmp_path):
    missing = tmp_path / "gone.tsv"  # LocalDownload of a file that is not there
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d 1\n")
    name = _register(
        "rrl-test/broken",
        Dataset(TsvQueries(LocalDownload(missing)), TrecQrels(LocalDownload(qrels), QRELS_DEFS)),
    )
    with pytest.raises(DatasetError, match="ir_datasets could not read 'rrl-test/broken'"):
        dataset_files(name)


def test_an_organizer_creates_a_benchmark_from_an_id_in_the_admin(
    client, organizer, offline_dataset
):
    client.force_login(organizer)
    response = client.post(
        "/admin/leaderboard/benchmark/add/", benchmark_form(ir_datasets_id=offline_dataset)
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    benchmark = Benchmark.objects.get(slug="robust")
    assert InformationNeed.objects.filter(benchmark=benchmark).count() == 4
    assert benchmark.current_judgments.note == "ir_datasets rrl-test/library"


def test_the_admin_names_a_bad_id_on_the_form(client, organizer):
    client.force_login(organizer)
    response = client.post(
        "/admin/leaderboard/benchmark/add/", benchmark_form(ir_datasets_id="no/such-thing")
    )
    assert response.status_code == 200
    assert "ir_datasets has no dataset" in response.content.decode()
    assert not Benchmark.objects.filter(slug="robust").exists()


def test_the_admin_takes_an_id_or_files_not_both(client, organizer, offline_dataset):
    client.force_login(organizer)
    data = benchmark_form(
        ir_datasets_id=offline_dataset,
        qrels_file=SimpleUploadedFile("qrels.txt", (DEMO / "qrels.txt").read_bytes()),
    )
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 200
    assert "Give either an ir_datasets id or files, not both." in response.content.decode()
    assert not Benchmark.objects.filter(slug="robust").exists()


# --- The API and the client --------------------------------------------------------------


def test_staff_create_a_benchmark_from_an_id_through_the_api(client, organizer, offline_dataset):
    body = {"slug": "library-api", "title": "Library", "ir_datasets": offline_dataset}
    created = client.post(
        "/api/benchmarks/", body, content_type="application/json", headers=bearer(organizer)
    )
    assert created.status_code == 201, created.content
    assert created.json()["num_needs"] == 4
    benchmark = Benchmark.objects.get(slug="library-api")
    assert InformationNeed.objects.filter(benchmark=benchmark).count() == 4
    assert benchmark.current_judgments.note == f"ir_datasets {offline_dataset}"
    assert benchmark.is_organised_by(organizer)

    unknown = {"slug": "nothing", "title": "Nothing", "ir_datasets": "no-such/dataset"}
    refused = client.post(
        "/api/benchmarks/", unknown, content_type="application/json", headers=bearer(organizer)
    )
    assert "no-such/dataset" in error_of(refused, 400)["details"]["ir_datasets"][0]
    assert not Benchmark.objects.filter(slug="nothing").exists()


def test_the_client_command_creates_a_benchmark_from_an_id(
    transactional_db, live_server, organizer, offline_dataset, monkeypatch, tmp_path, capsys
):
    _, secret = ApiToken.issue(organizer, "rrl")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("RRL_URL", live_server.url)
    monkeypatch.setenv("RRL_TOKEN", secret)
    code = cli.main(
        ["benchmark", "create", "dl19", "--title", "DL 19", "--ir-datasets", offline_dataset]
    )
    assert code == 0, capsys.readouterr().err
    assert "Created dl19 (4 needs)" in capsys.readouterr().out
    assert Benchmark.objects.get(slug="dl19").current_judgments.num_needs == 4
