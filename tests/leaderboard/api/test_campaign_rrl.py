"""``rrl``'s campaign commands against the real API, in-process: the client's HTTP goes
to the Django application through httpx's WSGI transport (same database, no server)."""

from __future__ import annotations

import datetime as dt
import functools

import httpx
import pytest
import time_machine

from leaderboard.models import ApiToken, Phase, Submission
from leaderboard.wsgi import application
from rrl import cli, client
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
        assert "chosen" in capsys.readouterr().out
    assert [r.final_priority for r in Submission.objects.order_by("run_name")] == [2, 1]
    with time_machine.travel(CLOSES + dt.timedelta(hours=1), tick=False):
        assert rrl(participant, "final", str(a.pk)) == 1
        assert "closed at 2026-07-20 12:00 UTC" in capsys.readouterr().err
