"""The ``rrl`` command in-process, its client on a fake transport: what it prints and its
exit status for a scored run, a run that failed while being scored, a duplicate, and no
site. The real server and worker: tests/leaderboard/api/test_rrl_end_to_end.py."""

from __future__ import annotations

import functools
import json

import httpx
import pytest

from rrl import cli, client, config

RUN = b"q1 Q0 d1 1 1.0 bm25\n"


@pytest.fixture
def site(monkeypatch, tmp_path):
    """A fake site whose runs end as ``outcome`` says; the config in ``tmp_path``."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("RRL_URL", raising=False)
    monkeypatch.delenv("RRL_TOKEN", raising=False)
    monkeypatch.setenv("RRL_PASSWORD", "secret")
    state = {"outcome": "scored", "seen": []}
    run = {"id": 5, "run_name": "bm25", "benchmark": "lib", "page": "http://lb.test/submissions/5/"}

    def handler(request: httpx.Request) -> httpx.Response:
        state["seen"].append(
            (request.method, request.url.path, request.headers.get("Authorization"))
        )
        if state["outcome"] == "unreachable":
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        path = request.url.path
        if path == "/api/tokens/":
            assert json.loads(request.content)["password"] == "secret"
            return httpx.Response(201, json={"token": "rrl_new"})
        if path == "/api/submissions/" and request.method == "GET":
            mine = {**run, "status": "scored", "submitted": "2026-12-05T23:59:58.123456Z"}
            return httpx.Response(200, json={"submissions": [mine], "next": None})
        if path.endswith("/uploads/"):
            return httpx.Response(501, json={"error": "post the file", "details": {}})
        if path.endswith("/submissions/") and state["outcome"] == "duplicate":
            existing = {"run_name": "bm25", "id": 5, "url": "http://lb.test/api/submissions/5/"}
            return httpx.Response(
                409,
                json={
                    "error": "You already submitted this file.",
                    "details": {"existing": existing},
                },
            )
        if path.endswith("/submissions/"):
            return httpx.Response(201, json={**run, "status": "queued"})
        if path == "/api/submissions/5/":
            failed = state["outcome"] == "failed"
            return httpx.Response(
                200,
                json={
                    **run,
                    "status": state["outcome"],
                    "failure_reason": "run.txt:3: score 'x' is not a number" if failed else "",
                    "summary": None
                    if failed
                    else {"map": 0.5, "P_10": 0.25, "ndcg_cut_10": 0.3, "num_ret": 10.0},
                    "labels": {}
                    if failed
                    else {
                        "map": "AP",
                        "P_10": "P@10",
                        "ndcg_cut_10": "nDCG@10",
                        "num_ret": "NumRet",
                    },
                },
            )
        if path == "/api/benchmarks/lib/":
            return httpx.Response(200, json={"primary_measure": "map", "shown_measures": ["P_10"]})
        return httpx.Response(404, json={"error": "No such endpoint.", "details": {}})

    fake = functools.partial(client.Client, transport=httpx.MockTransport(handler), backoff=0)
    monkeypatch.setattr(client, "Client", fake)
    (tmp_path / "run.txt").write_bytes(RUN)
    state["file"] = str(tmp_path / "run.txt")
    state["config"] = tmp_path / "rrl" / "config.json"
    return state


def test_login_keeps_the_token_and_submit_wait_prints_the_summary(site, capsys):
    assert cli.main(["--url", "http://lb.test", "login", "--username", "alice"]) == 0
    assert config.load(site["config"])["tokens"] == {"http://lb.test": "rrl_new"}
    capsys.readouterr()
    assert cli.main(["submit", "lib", site["file"], "--wait"]) == 0
    out, err = capsys.readouterr()
    assert "Run bm25 (id 5) is scored on lib:" in out
    assert "AP    0.5000" in out and "P@10  0.2500" in out and "NumRet" not in out
    assert "map" not in out and "P_10" not in out  # the server's labels, as its pages show
    assert "uploading: 100%" in err and "scoring: scored" in err
    # the stored token went with every request after the login
    assert all(auth == "Bearer rrl_new" for _, path, auth in site["seen"] if path != "/api/tokens/")


def test_status_prints_the_measures_its_benchmark_shows(site, capsys):
    assert cli.main(["--url", "http://lb.test", "status", "5"]) == 0
    out = capsys.readouterr().out
    assert "AP    0.5000" in out and "P@10  0.2500" in out  # primary, shown
    assert "nDCG@10" not in out and "NumRet" not in out  # stored, not shown by lib


def test_runs_prints_when_each_was_submitted_in_utc(site, capsys):
    assert cli.main(["--url", "http://lb.test", "runs"]) == 0
    out = capsys.readouterr().out
    assert "2026-12-05 23:59 UTC" in out and "T23:59:58" not in out


def test_an_id_that_no_run_can_have_is_a_usage_error_before_any_request(site, capsys):
    for argv in (["status", "--", "-1"], ["results", "0"], ["compare", "5", "x"]):
        with pytest.raises(SystemExit) as stopped:
            cli.main(["--url", "http://lb.test", *argv])
        assert stopped.value.code == 2
        assert "a whole number from 1, not" in capsys.readouterr().err
    assert site["seen"] == []


def test_a_run_that_failed_prints_file_line_reason_and_exits_1(site, capsys):
    site["outcome"] = "failed"
    assert cli.main(["--url", "http://lb.test", "submit", "lib", site["file"], "--wait"]) == 1
    out, err = capsys.readouterr()
    assert err.strip().endswith("run.txt:3: score 'x' is not a number")
    assert "scored on" not in out


def test_a_duplicate_names_the_existing_run_and_exits_1(site, capsys):
    site["outcome"] = "duplicate"
    assert cli.main(["--url", "http://lb.test", "submit", "lib", site["file"]]) == 1
    err = capsys.readouterr().err
    assert "You already submitted this file." in err
    assert "existing run: http://lb.test/api/submissions/5/" in err


def test_without_a_site_it_says_how_to_give_one(site, capsys):
    assert cli.main(["runs"]) == 2
    assert "--url" in capsys.readouterr().err
    assert cli.main(["--url", "127.0.0.1:8000", "runs"]) == 1
    assert capsys.readouterr().err == (
        "rrl: the site's address starts with http:// or https://, not '127.0.0.1:8000'\n"
    )


def test_a_site_that_cannot_be_reached_is_said_in_a_line_not_a_traceback(site, capsys):
    site["outcome"] = "unreachable"
    assert cli.main(["--url", "http://lb.test", "runs"]) == 1
    err = capsys.readouterr().err
    assert err == "rrl: cannot reach http://lb.test: [Errno 111] Connection refused\n"
    assert cli.main(["--url", "http://lb.test", "submit", "lib", site["file"]]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "rrl: cannot reach http://lb.test: [Errno 111] Connection refused",
        "the run may have been stored: `rrl runs --benchmark lib` lists your runs",
    ]


def test_a_reader_that_closes_the_pipe_ends_it_quietly(site, capsys, monkeypatch):
    def closed(client, args, path):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setitem(cli.COMMANDS, "runs", closed)
    assert cli.main(["--url", "http://lb.test", "runs"]) == 1
    assert capsys.readouterr().err == ""


def test_board_compare_and_results_ask_for_a_version_and_needs_and_print_them(monkeypatch, capsys):
    """``--judgments`` and ``--needs`` go to the API as its query; the answer's version and
    needs are printed first, under the heading, as docs/api.md says."""
    monkeypatch.setenv("RRL_TOKEN", "t")
    asked = []
    lens = {"judgments_version": 1, "needs": "public"}
    answers = {
        "/api/benchmarks/lib/": {
            "title": "Lib",
            "leaderboard": {**lens, "ranked_by": "map", "runs": []},
        },
        "/api/benchmarks/lib/compare/1/2/": {
            **lens,
            "measure": "map",
            "a": {"run": "x", "mean": 0.5},
            "b": {"run": "y", "mean": 0.25},
            "difference": "a - b",
            "tests": {},
        },
        "/api/submissions/1/results/": {
            "judgments_version": 1,
            "judgments_needs": "public",
            "id": 1,
            "run_name": "x",
            "measure": "map",
            "field": "scored runs",
            "field_runs": 2,
            "needs": [],
        },
    }

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(dict(request.url.params))
        return httpx.Response(200, json=answers[request.url.path])

    fake = functools.partial(client.Client, transport=httpx.MockTransport(handler), backoff=0)
    monkeypatch.setattr(client, "Client", fake)
    flags = ["--judgments", "1", "--needs", "public"]
    for command in (["board", "lib"], ["compare", "lib", "1", "2"], ["results", "1"]):
        assert cli.main(["--url", "http://lb.test", *command, *flags]) == 0
        # first, under the heading: what the scores below are on (docs/api.md)
        assert capsys.readouterr().out.splitlines()[1] == "Judgments v1, public needs", command
    assert asked == [{"judgments": "1", "needs": "public"}] * 3


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "--url", "http://lb.test", "status", "5"],
        ["--url", "http://lb.test", "status", "5", "--json"],
        ["status", "5", "--url", "http://lb.test", "--json"],
        ["status", "--json", "5", "--url", "http://lb.test"],
    ],
)
def test_url_and_json_are_taken_before_or_after_the_command(site, capsys, argv):
    assert cli.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["run_name"] == "bm25"


def test_json_after_a_command_of_a_command_is_taken_too():
    args = cli.parser().parse_args(["phase", "list", "robust04", "--json"])
    assert args.json is True and args.url is None
    assert cli.parser().parse_args(["--url", "http://a", "runs"]).url == "http://a"


def test_board_prints_each_run_s_team_when_any_run_has_one(monkeypatch, capsys):
    monkeypatch.setenv("RRL_TOKEN", "t")
    run = {"rank": 1, "value": 0.5, "submission_id": 3}
    boards = [
        [{**run, "run_name": "bm25", "participant": "Ada", "team": "Engines"},
         {**run, "rank": 2, "run_name": "solo", "participant": "Bob", "team": ""}],
        [{**run, "run_name": "bm25", "participant": "Ada", "team": ""}],
    ]  # fmt: skip

    def handler(request: httpx.Request) -> httpx.Response:
        board = {"ranked_by": "map", "judgments_version": 1, "needs": "all", "runs": boards[0]}
        return httpx.Response(200, json={"title": "Lib", "leaderboard": board})

    fake = functools.partial(client.Client, transport=httpx.MockTransport(handler), backoff=0)
    monkeypatch.setattr(client, "Client", fake)
    assert cli.main(["--url", "http://lb.test", "board", "lib"]) == 0
    table = capsys.readouterr().out.splitlines()[2:]
    assert table[0].split() == ["rank", "run", "participant", "team", "map", "id"]
    assert table[-2].split() == ["1", "bm25", "Ada", "Engines", "0.5000", "3"]
    assert table[-1].split() == ["2", "solo", "Bob", "0.5000", "3"]  # alone: no team
    boards.pop(0)  # no run has a team: no column for it
    assert cli.main(["--url", "http://lb.test", "board", "lib"]) == 0
    assert "team" not in capsys.readouterr().out
