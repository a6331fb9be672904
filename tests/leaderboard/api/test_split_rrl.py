"""``rrl split`` against the real API, in-process (httpx's WSGI transport): an organizer
lists, draws, shows and clears the private needs; anyone else is told there is nothing."""

from __future__ import annotations

import json

import pytest

from leaderboard.models.splits import draw_private
from rrl import client as rrl_client
from tests.leaderboard.api.test_campaign_rrl import rrl  # noqa: F401 (the fixture)

NEEDS = ["atwood", "cs-foundations", "russian-novels", "stage-plays"]


@pytest.fixture
def organised(library, organizer):
    library.organizers.add(organizer)
    return library


def test_rrl_split_sets_shows_and_clears(rrl, organised, organizer, capsys):  # noqa: F811
    assert rrl(organizer, "split", "library", "stage-plays", "atwood") == 0
    out = capsys.readouterr().out
    assert "2 private and 2 public needs" in out and "private: atwood stage-plays" in out
    assert rrl(organizer, "split", "library", "--fraction", "0.25", "--seed", "3") == 0
    assert "drawn as 0.25 with seed 3" in capsys.readouterr().out
    assert rrl(organizer, "--json", "split", "library") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["private_needs"] == draw_private(NEEDS, 0.25, 3) and shown["seed"] == 3
    assert rrl(organizer, "split", "library", "--clear") == 0
    assert "0 private and 4 public needs" in capsys.readouterr().out
    organised.refresh_from_db()
    assert not organised.has_split


def test_rrl_split_errors(rrl, organised, organizer, participant, capsys):  # noqa: F811
    assert rrl(organizer, "split", "library", "nosuch") == 1
    assert "nosuch" in capsys.readouterr().err
    assert rrl(organizer, "split", "library", "atwood", "--fraction", "0.5") == 2
    assert rrl(organizer, "split", "library", "--seed", "4") == 2
    capsys.readouterr()
    assert rrl(participant, "split", "library") == 1
    assert "atwood" not in capsys.readouterr().err
    with pytest.raises(ValueError, match="either"):
        rrl_client.Client("http://testserver").set_split("library")
