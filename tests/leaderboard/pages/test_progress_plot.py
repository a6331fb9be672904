"""The benchmark page's progress plot: runs by submission time, the best so far."""

from __future__ import annotations

import datetime as dt

from django.urls import reverse

from leaderboard.pages.board_plots import Point, progress_figure, running_best
from tests.leaderboard import pages_data as data
from tests.leaderboard.pages.test_pages import frame_of
from tests.leaderboard.pages_data import add_run

library, demo_user = data.library, data.demo_user

DAY = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


def point(day: int, value: float, name: str, baseline: bool = False) -> Point:
    return Point(DAY + dt.timedelta(days=day), value, name, baseline)


def test_the_running_best_keeps_each_new_record_in_time_order():
    points = [point(3, 0.30, "c"), point(0, 0.20, "a"), point(1, 0.25, "b"), point(2, 0.25, "t")]
    points += [point(4, 0.10, "worse"), point(5, 0.31, "d", baseline=True)]
    assert [p.run_name for p in running_best(points)] == ["a", "b", "c", "d"]


def test_the_figure_draws_runs_baselines_and_the_step_line():
    figure = progress_figure(
        [point(0, 0.2, "a"), point(2, 0.4, "b"), point(1, 0.1, "base", True)], "AP"
    )
    assert 'data-plot="progress"' in figure
    assert figure.count('class="baseline"') == 1
    assert "Best AP over time: 0.4000" in figure
    assert "set by: 2026-03-01 a 0.2000; 2026-03-03 b 0.4000." in figure
    assert "2026-03-01</text>" in figure and "2026-03-03</text>" in figure
    assert progress_figure([point(0, 0.2, "alone")], "AP") is None


def test_the_benchmark_page_shows_the_plot_for_the_ranking_measure(client, library, demo_user):
    url = reverse("leaderboard", args=["library"])
    page = client.get(url).content.decode()
    assert 'id="progress-h"' in page and "Best AP over time" in page
    frame = frame_of({"map": [0.9, 0.9, 0.9, 0.9], "P_10": [0.1, 0.1, 0.1, 0.1]})
    frame.index = ["cs-foundations", "stage-plays", "atwood", "russian-novels"]
    add_run(library, demo_user, "record", frame)
    page = client.get(url, {"measure": "P_10"}).content.decode()
    assert "Best P@10 over time" in page
    assert "Best AP over time: 0.9000" in client.get(url).content.decode()
