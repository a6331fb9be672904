"""``rrl summary``: the organizers' campaign summary as tables (and ``--json``), through
the real API in-process; a participant is refused with the API's 404."""

from __future__ import annotations

import json

from tests.leaderboard.api.test_campaign_rrl import rrl  # noqa: F401 (the fixture)
from tests.leaderboard.reading.test_summaries import tiny  # noqa: F401 (the fixture)


def test_rrl_summary_prints_the_tables(tiny, rrl, organizer, participant, capsys):  # noqa: F811
    assert rrl(organizer, "summary", "tiny") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Phase Test"
    assert lines[1].split() == ["team", "submitted", "scored", "failed", "final"]
    assert lines[2].split() == ["carol", "2", "1", "1", "1"]  # by name, case aside
    assert lines[3].split() == ["Lab", "2", "2", "0", "1"]
    assert lines[4].split() == ["All", "4", "3", "1", "2"]
    assert "Runs outside any phase" in lines
    assert any(line.startswith("Pool ") and "8 pairs, 5 to judge" in line for line in lines)
    assert ["2", "1", "4.0", "7"] in [line.split() for line in lines]
    judged = {line.split()[1]: line.split()[3:] for line in lines if line.split()[1:2] == ["A"]}
    assert judged["A"] == ["0.400", "0.417"]
    assert rrl(organizer, "--json", "summary", "tiny") == 0
    assert json.loads(capsys.readouterr().out)["pool"]["size_total"] == 8
    assert rrl(participant, "summary", "tiny") == 1
    assert "No such page" in capsys.readouterr().err
