"""A whole campaign through ``rrl`` and the organizer API, on PostgreSQL and Redis with a
real Celery worker scoring: set-up, two phases, a public/private split, submissions,
the close (refused after it, taken within the grace), final runs, a pool checked against
a plain reference, the assessors' judgments as version 2 with every run rescored,
per-need results, an older version's board and the reveal.

``rrl`` runs in-process, its HTTP through httpx's WSGI transport, so the frozen clock
(time-machine) is the server's too; the worker's clock is real, and only scores."""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections import defaultdict

import httpx
import numpy as np
import pytest
import time_machine
from django.contrib.auth import get_user_model

from evaluation.measures import evaluate
from leaderboard.models import ApiToken, Benchmark, Judgments, Pool, Profile, Result, Submission
from leaderboard.wsgi import application
from rrl import cli, client
from tests.leaderboard.workers import Worker, end_worker_sessions, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

NEEDS = [f"q{i:02d}" for i in range(20)]
DOCS = [f"d{j:03d}" for j in range(80)]
T0 = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)  # before the worker's real clock: no ETA waits
DEV_OPENS, TEST_OPENS, TEST_CLOSES = T0, T0 + dt.timedelta(days=5), T0 + dt.timedelta(days=10)
REVEAL = T0 + dt.timedelta(days=20)
Z = "%Y-%m-%dT%H:%MZ"


# --- Generated data and plain references ----------------------------------------------


def qrels_text(rng: np.random.Generator) -> str:
    """30 judged documents per need, graded 0-2."""
    lines = []
    for need in NEEDS:
        for doc in rng.choice(DOCS, 30, replace=False):
            lines.append(f"{need} 0 {doc} {rng.choice([0, 0, 1, 2])}")
    return "\n".join(lines) + "\n"


def run_rows(rng: np.random.Generator) -> list[tuple[str, str, float]]:
    """25 documents per need, scores to one decimal so ties happen (broken by doc_id)."""
    return [
        (need, str(doc), round(float(rng.uniform(0, 5)), 1))
        for need in NEEDS
        for doc in rng.choice(DOCS, 25, replace=False)
    ]


def run_text(rows: list[tuple[str, str, float]], tag: str) -> str:
    return "".join(f"{n} Q0 {d} {i + 1} {s} {tag}\n" for i, (n, d, s) in enumerate(rows))


def qrels_of(text: str, needs) -> str:
    return "".join(line + "\n" for line in text.splitlines() if line.split()[0] in needs)


def mean_ap(qrels: str, rows, needs) -> float:
    """The engine's AP of a run, averaged over ``needs`` (the run answers every need)."""
    return evaluate(qrels_of(qrels, needs).encode(), run_text(rows, "x").encode(), ["map"]).summary[
        "map"
    ]


def per_need_ap(qrels: str, rows, needs) -> dict[str, float]:
    scored = evaluate(qrels_of(qrels, needs).encode(), run_text(rows, "x").encode(), ["map"])
    return dict(zip(scored.need_ids, scored.columns["map"], strict=True))


def reference_pool(runs: list, depth: int) -> set[tuple[str, str]]:
    """TREC's pool: each run ordered by score descending, doc_id descending on ties, its
    top ``depth`` per need, the union over the runs."""
    pairs = set()
    for rows in runs:
        by_need = defaultdict(list)
        for need, doc, score in rows:
            by_need[need].append((score, doc))
        for need, ranked in by_need.items():
            ranked.sort(reverse=True)
            pairs |= {(need, doc) for _, doc in ranked[:depth]}
    return pairs


# --- rrl in-process, a slow upload, the worker ----------------------------------------


class SlowBody:
    """A request body that arrives ``late``: reading it moves the frozen clock, as a file
    still arriving after the close would (the request's start was stamped before)."""

    def __init__(self, stream, clock, late: dt.datetime) -> None:
        self.stream, self.clock, self.late = stream, clock, late

    def read(self, *args):
        self.clock.move_to(self.late)
        return self.stream.read(*args)

    def readline(self, *args):
        self.clock.move_to(self.late)
        return self.stream.readline(*args)


@pytest.fixture
def rrl(monkeypatch, tmp_path, capsys):
    """``rrl(user, *args)``: the command run as ``user``; its exit status, stdout, stderr.
    ``rrl.slow`` set to (clock, moment): the next submission's body arrives at moment."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    tokens: dict[str, str] = {}
    slow: list = []

    def app(environ, start_response):
        if slow and environ["REQUEST_METHOD"] == "POST" and "submissions" in environ["PATH_INFO"]:
            environ["wsgi.input"] = SlowBody(environ["wsgi.input"], *slow.pop())
        return application(environ, start_response)

    monkeypatch.setattr(
        client, "Client", functools.partial(client.Client, transport=httpx.WSGITransport(app=app))
    )

    def run(user, *args: str) -> tuple[int, str, str]:
        if user.username not in tokens:
            tokens[user.username] = ApiToken.issue(user, "rrl")[1]
        monkeypatch.setenv("RRL_TOKEN", tokens[user.username])
        capsys.readouterr()
        status = cli.main(["--url", "http://testserver", *args])
        out, err = capsys.readouterr()
        return status, out, err

    run.slow = slow
    yield run
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def worker(queue, settings, tmp_path):
    started = Worker(queue, settings.MEDIA_ROOT, tmp_path / "worker.log")
    started.wait_ready()
    yield started
    started.stop()
    # The worker's session can outlive it for a moment; end it so the database can go.
    end_worker_sessions()


def board_values(out: str) -> dict[str, str]:
    """run name -> the printed value, from ``rrl board``'s table."""
    rows = {}
    for line in out.splitlines():
        # rank, run, participant (and team, when a run has one), value, id
        match = re.match(r"\s*\d*\s+(\S+)\s+.*?\s(\d\.\d{4})\s+\d+$", line)
        if match:
            rows[match[1]] = match[2]
    return rows


def settled(benchmark: Benchmark, version: int, runs: int) -> bool:
    """Every run scored on ``version``, its public and private parts, the board on it."""
    benchmark.refresh_from_db()
    rows = Judgments.objects.filter(benchmark=benchmark, version=version)
    busy = Submission.objects.filter(benchmark=benchmark, status__in=["queued", "running"])
    current = benchmark.current_judgments
    return (
        rows.count() == 3
        and Result.objects.filter(judgments__in=rows).count() == 3 * runs
        and not busy.exists()
        and current is not None
        and current.version == version
    )


# --- The campaign ---------------------------------------------------------------------


def test_a_whole_campaign_from_topics_to_the_reveal(rrl, worker, tmp_path):
    rng = np.random.default_rng(2026)
    users = get_user_model().objects
    olga = users.create_user("olga", password="pw-olga-123", is_staff=True)
    alice, bob, carol = (
        users.create_user(n, password=f"pw-{n}-123") for n in "alice bob carol".split()
    )
    lab = Profile.of(alice).create_team("Lab")
    Profile.of(bob).join_team(lab.join_code)
    Profile.of(carol).create_team("Solo")

    needs_file, v1_file = tmp_path / "needs.tsv", tmp_path / "qrels-v1.txt"
    needs_file.write_text("".join(f"{n}\tneed {n}\n" for n in NEEDS))
    v1 = qrels_text(rng)
    v1_file.write_text(v1)
    runs: dict[str, list] = {}

    def submit(user, name: str) -> tuple[int, str, str]:
        runs[name] = run_rows(rng)
        path = tmp_path / f"{name}.txt"
        path.write_text(run_text(runs[name], name))
        return rrl(user, "submit", "camp", str(path), "--name", name)

    def scored(count: int) -> None:
        wait_for(
            lambda: Submission.objects.filter(status="scored").count() == count,
            60,
            what=f"{count} runs scored ({worker.log_path})",
        )

    with time_machine.travel(T0 - dt.timedelta(days=1), tick=False) as clock:
        # The organizer's set-up.
        made = rrl(olga, "benchmark", "create", "camp", "--title", "Camp",
                   "--primary-measure", "map", "--final-runs", "2", "--daily-limit", "10")  # fmt: skip
        assert made[0] == 0, made[2]
        assert rrl(olga, "needs", "camp", str(needs_file))[1].startswith("Loaded 20 needs")
        loaded = rrl(olga, "judgments", "camp", str(v1_file), "--note", "v1")
        assert "Judgments v1 of camp: 600 judgments of 20 needs" in loaded[1], loaded
        dev = ["--opens", DEV_OPENS.strftime(Z), "--closes", TEST_OPENS.strftime(Z)]
        assert rrl(olga, "phase", "add", "camp", "Development", *dev)[0] == 0
        test = ["--opens", TEST_OPENS.strftime(Z), "--closes", TEST_CLOSES.strftime(Z)]
        assert rrl(olga, "phase", "add", "camp", "Test", *test, "--board", "public")[0] == 0
        split = rrl(olga, "split", "camp", "--fraction", "0.3", "--seed", "7")
        assert "camp: 6 private and 14 public needs, drawn as 0.3 with seed 7" in split[1]
        updated = rrl(olga, "benchmark", "update", "camp", "--reveal-at", REVEAL.strftime(Z))
        assert updated[0] == 0, updated[2]
        camp = Benchmark.objects.get(slug="camp")
        assert camp.reveal_at == REVEAL and camp.final_needs == "private"
        private = set(camp.private_needs)
        public = set(NEEDS) - private

        # Development: every board shows the public needs' scores.
        clock.move_to(DEV_OPENS + dt.timedelta(days=1))
        for user, name in ((alice, "dev-a"), (bob, "dev-b"), (carol, "dev-c")):
            status, out, err = submit(user, name)
            assert status == 0 and "Phase Development is open until" in out, err
        scored(3)
        status, out, _ = rrl(bob, "board", "camp")
        assert "Judgments v1, public needs" in out.splitlines() and "ranked by AP" in out
        shown = board_values(out)
        for name in ("dev-a", "dev-b", "dev-c"):
            assert shown[name] == f"{mean_ap(v1, runs[name], public):.4f}", name

        # Test: two teams, three participants.
        clock.move_to(TEST_OPENS + dt.timedelta(days=1))
        test_runs = [(alice, "t-a1"), (alice, "t-a2"), (bob, "t-b1"), (carol, "t-c1"), (carol, "t-c2")]  # fmt: skip
        for user, name in test_runs:
            assert submit(user, name)[0] == 0
        scored(8)
        ids = dict(Submission.objects.values_list("run_name", "pk"))
        # Final runs, in priority order; any member marks the team's.
        marked = rrl(alice, "final", str(ids["t-b1"]), str(ids["t-a2"]))
        assert marked[0] == 0 and "in the phase Test (at most 2)" in marked[1], marked
        assert rrl(carol, "final", str(ids["t-c2"]), str(ids["t-c1"]))[0] == 0

        # The close: refused after it, through rrl and the API; taken within the grace
        # when the request began before it.
        clock.move_to(TEST_CLOSES + dt.timedelta(minutes=1))
        late = submit(bob, "t-late")
        assert late[0] == 1 and "closed at 2026-10-11 00:00 UTC" in late[2], late
        with client.Client("http://testserver", ApiToken.issue(bob, "api")[1]) as api:
            with pytest.raises(client.ApiError) as refused:
                api.submit("camp", run_text(run_rows(rng), "api-late").encode(), name="api-late")
        assert refused.value.status == 403
        assert "the phase Test closed at 2026-10-11 00:00 UTC" in refused.value.error
        clock.move_to(TEST_CLOSES - dt.timedelta(minutes=1))
        rrl.slow.append((clock, TEST_CLOSES + dt.timedelta(minutes=4)))
        grace = submit(carol, "t-grace")
        assert grace[0] == 0, grace[2]
        taken = Submission.objects.get(run_name="t-grace")
        assert taken.phase.name == "Test" and taken.created == TEST_CLOSES + dt.timedelta(minutes=4)
        scored(9)
        assert not Submission.objects.filter(run_name__in=["t-late", "api-late"]).exists()

        # Before the reveal: public needs only, the private values nowhere.
        clock.move_to(TEST_CLOSES + dt.timedelta(days=1))
        status, out, _ = rrl(carol, "board", "camp")
        shown = board_values(out)
        assert len(shown) == 9 and "Judgments v1, public needs" in out.splitlines()
        for name, rows in runs.items():
            if name in shown:
                assert shown[name] == f"{mean_ap(v1, rows, public):.4f}", name
        secret = f"{mean_ap(v1, runs['t-c1'], private):.4f}"
        assert secret != shown["t-c1"] and secret not in out
        hidden = rrl(carol, "board", "camp", "--needs", "private")
        assert hidden[0] == 1 and "from the reveal at 2026-10-21 00:00 UTC" in hidden[2]

        # The pool of each team's first final run, depth 10, checked against the
        # reference; its export leaves out the pairs v1 judged.
        built = rrl(olga, "pool", "build", "camp", "--depth", "10", "--runs-per-team", "1", "--phase", "Test", "--wait")  # fmt: skip
        assert built[0] == 0 and "built" in built[1], built
        export = tmp_path / "pool.qrels"
        assert rrl(olga, "pool", "export", "camp", "-o", str(export))[0] == 0
        pooled = reference_pool([runs["t-b1"], runs["t-c2"]], depth=10)
        judged = {(line.split()[0], line.split()[2]) for line in v1.splitlines()}
        lines = [line.split() for line in export.read_text().splitlines()]
        assert {(n, d) for n, _, d, _ in lines} == pooled - judged
        assert len(lines) == len(pooled - judged) and {(i, r) for _, i, _, r in lines} == {
            ("0", "-1")
        }
        assert Pool.objects.get().stats["pairs"] == len(pooled)

        # The assessors' judgments as v2: every run rescored by the worker.
        assessed = "".join(f"{n} 0 {d} {rng.choice([0, 1, 2])}\n" for n, _, d, _ in lines)
        v2 = v1 + assessed
        v2_file = tmp_path / "qrels-v2.txt"
        v2_file.write_text(v2)
        loaded = rrl(olga, "judgments", "camp", str(v2_file), "--note", "assessed pool")
        assert "Judgments v2 of camp" in loaded[1] and "9 runs queued for rescoring" in loaded[1]
        wait_for(lambda: settled(camp, 2, 9), 60, what=f"runs rescored on v2 ({worker.log_path})")

        # Per-need results: the run beside the best, median and worst final runs.
        status, out, _ = rrl(alice, "--json", "results", str(ids["t-a2"]))
        answer = json.loads(out)
        assert answer["judgments_version"] == 2 and answer["field_runs"] == 4
        finals = [per_need_ap(v2, runs[n], public) for n in ("t-b1", "t-a2", "t-c2", "t-c1")]
        own = per_need_ap(v2, runs["t-a2"], public)
        assert [n["need_id"] for n in answer["needs"]] == sorted(public)
        for row in answer["needs"]:
            field = [values[row["need_id"]] for values in finals]
            assert row["run"] == pytest.approx(own[row["need_id"]], abs=1e-12)
            assert row["best"] == pytest.approx(np.max(field), abs=1e-12)
            assert row["median"] == pytest.approx(np.median(field), abs=1e-12)
            assert row["worst"] == pytest.approx(np.min(field), abs=1e-12)

        # The board on v2 by default; v1's values on asking.
        shown = board_values(rrl(bob, "board", "camp")[1])
        assert shown["t-c2"] == f"{mean_ap(v2, runs['t-c2'], public):.4f}"
        status, out, _ = rrl(bob, "board", "camp", "--judgments", "1")
        assert "Judgments v1, public needs" in out.splitlines()
        older = board_values(out)
        assert older == {n: f"{mean_ap(v1, runs[n], public):.4f}" for n in older}
        assert len(older) == 9

        # The reveal: the final board ranks by the private needs of v2.
        clock.move_to(REVEAL + dt.timedelta(hours=1))
        status, out, _ = rrl(bob, "board", "camp")
        assert "Judgments v2, private needs" in out.splitlines()
        final = board_values(out)
        assert final == {n: f"{mean_ap(v2, runs[n], private):.4f}" for n in final}
        assert len(final) == 9
