"""``rrl pool build --wait`` and ``rrl pool export`` against the live server, the pool built
by a real Celery worker on Redis and PostgreSQL."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile

from evaluation.trec import read_qrels
from leaderboard.models import ApiToken, Pool, Submission
from rrl import cli
from tests.leaderboard.api.test_rrl_end_to_end import worker  # noqa: F401 (the fixture)
from tests.leaderboard.reading.test_run_results import generated_run

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_rrl_builds_a_pool_on_a_real_worker_and_exports_it(
    live_server, library, participant, other_participant, organizer, worker,  # noqa: F811
    monkeypatch, tmp_path, capsys,
):  # fmt: skip
    library.organizers.add(organizer)
    for i, user in enumerate([participant, participant, other_participant]):
        run = Submission(benchmark=library, participant=user, run_name=f"run{i}", status="scored")
        run.file.save(f"run{i}.txt", ContentFile(generated_run(20 + i, f"run{i}")), save=True)
    _, raw = ApiToken.issue(organizer, "rrl")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("RRL_TOKEN", raw)
    site = ["--url", live_server.url]
    assert cli.main([*site, "pool", "build", "library", "--depth", "5", "--runs-per-team", "1",
                     "--wait"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    pool = Pool.objects.get()
    assert pool.status == "built" and pool.task_id and pool.task_id != "eager"
    assert f"Pool {pool.pk} of library: built" in out
    # alice's latest (run1) and bob's run2: one each, no team: each their own
    assert sorted(r["run"] for r in pool.stats["runs"]) == ["run1", "run2"]
    target = tmp_path / "to-judge.qrels"
    assert cli.main([*site, "pool", "export", "library", "-o", str(target)]) == 0
    assert target.read_bytes() == pool.file.open("rb").read()
    exported = read_qrels(target.read_bytes())
    assert len(exported) == pool.stats["to_judge"] > 0
