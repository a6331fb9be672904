"""``rrl``'s campaign commands against the real API, in-process: the client's HTTP goes
to the Django application through httpx's WSGI transport (same database, no server)."""

from __future__ import annotations

import datetime as dt
import functools
import json

import httpx
import pytest
import time_machine

from leaderboard.models import ApiToken, Benchmark, Phase, Submission
from leaderboard.wsgi import application
from rrl import cli, client
from tests import DEMO
from tests.leaderboard.models.test_final_runs import CLOSES, DURING, OPENS, make_run


@pytest.fixture
def rrl(monkeypatch, tmp_path):
    """``rrl(user, *args)``: the command run as ``user`` (a fresh token), its exit status.
    As Django's test client does, requests leave the test's database connection open."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setattr(
        client,
        "Client",
        functools.partial(client.Client, transport=httpx.WSGITransport(app=application)),
    )

    def run(user, *args: str) -> int:
        _, raw = ApiToken.issue(user, "rrl")
        monkeypatch.setenv("RRL_TOKEN", raw)
        return cli.main(["--url", "http://testserver", *args])

    yield run
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_rrl_final_sets_and_shows_the_final_runs(rrl, library, participant, capsys):
    phase = Phase.objects.create(benchmark=library, name="Test", opens=OPENS, closes=CLOSES)
    a = make_run(library, participant, "a", phase, 0)
    b = make_run(library, participant, "b", phase, 1)
    with time_machine.travel(DURING, tick=False):
        assert rrl(participant, "final", str(b.pk), str(a.pk)) == 0
        out = capsys.readouterr().out
        assert "in the phase Test (at most 3)" in out
        assert out.index(" b ") < out.index(" a ")
        assert rrl(participant, "final", "--benchmark", "library") == 0
        out = capsys.readouterr().out
        assert "chosen" in out and "Final runs change until 2026-07-20 12:00 UTC" in out
    assert [r.final_priority for r in Submission.objects.order_by("run_name")] == [2, 1]
    with time_machine.travel(CLOSES + dt.timedelta(hours=1), tick=False):
        assert rrl(participant, "final", str(a.pk)) == 1
        assert "closed at 2026-07-20 12:00 UTC" in capsys.readouterr().err


def test_rrl_sets_up_a_campaign_as_an_organizer(
    rrl, organizer, participant, tmp_path, capsys, django_capture_on_commit_callbacks
):
    about = tmp_path / "about.md"
    about.write_text("# A campaign\n")
    assert (
        rrl(
            organizer,
            "benchmark",
            "create",
            "camp",
            "--title",
            "Camp",
            "--primary-measure",
            "nDCG@10",
            "--shown-measures",
            "P@10, map",
            "--final-runs",
            "2",
            "--no-open",
        )
        == 0
    ), capsys.readouterr().err
    assert "Created camp (0 needs)" in capsys.readouterr().out
    assert rrl(organizer, "benchmark", "update", "camp", "--description", "@about.md") == 1
    assert "about.md" in capsys.readouterr().err  # relative to the working directory
    assert (
        rrl(
            organizer,
            "benchmark",
            "update",
            "camp",
            "--description",
            f"@{about}",
            "--open",
            "--daily-limit",
            "4",
        )
        == 0
    )
    assert "Updated camp" in capsys.readouterr().out
    camp = Benchmark.objects.get(slug="camp")
    assert (camp.description, camp.is_open, camp.daily_limit) == ("# A campaign", True, 4)
    assert (camp.primary_measure, camp.shown_measures, camp.final_runs) == (
        "ndcg_cut_10",
        ["P_10", "map"],
        2,
    )

    dev = ["--opens", "2026-12-01T00:00Z", "--closes", "2026-12-10T00:00Z"]
    assert rrl(organizer, "phase", "add", "camp", "Dev", *dev, "--daily-limit", "2") == 0
    test = ["--opens", "2026-12-09T00:00", "--closes", "2026-12-20T00:00"]
    assert rrl(organizer, "phase", "add", "camp", "Test", *test) == 1
    assert "overlaps the phase Dev" in capsys.readouterr().err
    assert (
        rrl(
            organizer,
            "phase",
            "add",
            "camp",
            "Test",
            "--opens",
            "2026-12-10T00:00",
            "--closes",
            "2026-12-20T00:00",
            "--board",
            "hidden",
        )
        == 0
    )
    assert (
        rrl(
            organizer,
            "phase",
            "update",
            "camp",
            "Dev",
            "--daily-limit",
            "none",
            "--rename",
            "Development",
        )
        == 0
    )
    capsys.readouterr()
    assert rrl(organizer, "phase", "list", "camp") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["phase", "opens", "closes"]
    assert lines[1].startswith("Development  2026-12-01T00:00:00Z") and lines[2].endswith("hidden")
    assert rrl(organizer, "phase", "delete", "camp", "Development") == 0
    assert list(camp.phases.values_list("name", "daily_limit")) == [("Test", None)]
    assert rrl(participant, "phase", "list", "camp") == 1
    assert "You do not organise Camp" in capsys.readouterr().err

    bad = tmp_path / "topics.tsv"
    bad.write_text("n1\tfirst\nn2\n")
    assert rrl(organizer, "needs", "camp", str(bad)) == 1
    assert "topics.tsv:2: expected need_id<TAB>title" in capsys.readouterr().err
    assert rrl(organizer, "needs", "camp", str(DEMO / "needs.tsv")) == 0
    assert "Loaded 4 needs into camp." in capsys.readouterr().out
    with django_capture_on_commit_callbacks(execute=False):
        assert rrl(organizer, "judgments", "camp", str(DEMO / "qrels.txt"), "--note", "v1") == 0
    out = capsys.readouterr().out
    assert "Judgments v1 of camp:" in out and "0 runs queued for rescoring" in out
    assert camp.judgments.get().note == "v1"
    with django_capture_on_commit_callbacks(execute=False):
        assert rrl(organizer, "rescore", "camp") == 0
    assert "0 runs of camp queued for rescoring." in capsys.readouterr().out


def test_rrl_sets_the_reveal_the_final_needs_and_pseudonyms(rrl, organizer, library, capsys):
    library.organizers.add(organizer)
    reveal = ["--reveal-at", "2026-12-20T12:00", "--final-needs", "all", "--anonymous"]
    assert rrl(organizer, "benchmark", "update", "library", *reveal) == 0, capsys.readouterr()
    library.refresh_from_db()
    assert library.reveal_at == dt.datetime(2026, 12, 20, 12, tzinfo=dt.UTC)
    assert (library.final_needs, library.anonymous) == ("all", True)
    capsys.readouterr()
    assert rrl(organizer, "--json", "benchmark", "update", "library", "--title", "Lib") == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["reveal_at"], shown["final_needs"], shown["anonymous"]) == (
        "2026-12-20T12:00:00Z",
        "all",
        True,
    )
    assert rrl(organizer, "benchmark", "update", "library", "--reveal-at", "soon") == 1
    assert "reveal_at: " in capsys.readouterr().err
    assert rrl(organizer, "benchmark", "update", "library", "--reveal-at", "none",
               "--no-anonymous") == 0  # fmt: skip
    library.refresh_from_db()
    assert (library.reveal_at, library.anonymous, library.final_needs) == (None, False, "all")
