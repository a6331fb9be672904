"""The benchmarks page and the leaderboard, through the test client."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from leaderboard.models import Comparison, Submission
from leaderboard.reading.boards import competition_ranks
from tests.leaderboard import pages_data as data
from tests.leaderboard.pages_data import add_run, make_benchmark, store_comparisons

# Fixtures shared by the page tests (tests/leaderboard/conftest.py is the platform's).
library, demo_user, reader = data.library, data.demo_user, data.reader

pytestmark = pytest.mark.django_db


def run_names(html: str) -> list[str]:
    """Run names in table order, from the leaderboard's row headers."""
    body = html.split('id="board"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<th scope="row"><a href="/submissions/\d+/"[^>]*>([^<]+)</a>', body)


def ranks(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr[^>]*>\s*<td class="num rank">([^<]+)</td>', body)


def test_competition_ranks_share_equal_values_and_skip():
    assert competition_ranks([0.9, 0.8, 0.8, 0.7, None]) == [1, 2, 2, 4, None]
    # Equal to four decimals (what the table shows) is a tie.
    assert competition_ranks([0.50001, 0.50004, 0.4]) == [1, 1, 3]
    assert competition_ranks([]) == []


def test_home_lists_benchmarks_needs_runs_and_leader(client, library):
    response = client.get(reverse("home"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Library" in html
    row = html.split("Library</a>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["4", "2"]  # needs, runs
    assert "system-B" in row and "0.7397" in row


def test_leaderboard_demo_b_above_a(client, library):
    response = client.get(reverse("leaderboard", args=["library"]))
    assert response.status_code == 200
    html = response.content.decode()
    assert run_names(html) == ["system-B", "system-A"]
    assert ranks(html) == ["1", "2"]
    assert "0.7397" in html and "0.4733" in html
    assert 'badge baseline">baseline' in html  # A is the baseline
    # Every seed measure has a column, each a link that re-ranks.
    for measure in ("map", "P_5", "P_10", "recip_rank", "Rprec"):
        assert f'href="/benchmarks/library/?measure={measure}"' in html


def test_leaderboard_by_another_measure(client, library):
    # P@5 of A: 0.4, 0.6, 0.4, 0 -> 0.35; of B: 0.8, 0.6, 0.4, 0.2 -> 0.5
    html = client.get(reverse("leaderboard", args=["library"]), {"measure": "P_5"}).content.decode()
    assert run_names(html) == ["system-B", "system-A"]
    assert 'aria-sort="descending"><a href="/benchmarks/library/?measure=P_5"' in html
    # recip_rank: A 1, 1, 1, 0 -> 0.75; B 1, 1, 1, 1 -> 1
    html = client.get(
        reverse("leaderboard", args=["library"]), {"measure": "recip_rank"}
    ).content.decode()
    assert run_names(html) == ["system-B", "system-A"]


def test_a_count_measure_is_not_a_ranking(client, library):
    # num_rel_ret (A retrieves more relevant books) is a count, not a score.
    for url in (
        reverse("leaderboard", args=["library"]),
        reverse("leaderboard_export", args=["library", "csv"]),
        reverse("leaderboard_export", args=["library", "json"]),
    ):
        for name in ("num_rel_ret", "NumRet", "num_q"):
            response = client.get(url, {"measure": name})
            assert response.status_code == 400, (url, name)
            assert "is a count" in response.content.decode()
    # The API answers the same question the same way (its JSON 400), never a 500.
    response = client.get(reverse("api_benchmark", args=["library"]), {"measure": "num_ret"})
    assert response.status_code == 400 and "is a count" in response.json()["error"]


def test_unknown_measure_is_a_problem_page_naming_close_matches(client, library):
    # Never another ranking in its place; the reader is told what exists.
    response = client.get(reverse("leaderboard", args=["library"]), {"measure": "<script>"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "There is no measure" in html and "&lt;script&gt;" in html and "<script>" not in html
    response = client.get(reverse("leaderboard", args=["library"]), {"measure": "ndcg10"})
    assert response.status_code == 400
    assert "Did you mean nDCG@10" in response.content.decode()


def test_a_catalog_measure_no_run_has_falls_back_with_a_message(client, library):
    # RR@3 is in the catalog but not stored unless the benchmark names it.
    response = client.get(reverse("leaderboard", args=["library"]), {"measure": "RR@3"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "No run has a value for “RR@3”" in html
    assert run_names(html) == ["system-B", "system-A"]


def test_unknown_benchmark_is_404(client, db):
    assert client.get(reverse("leaderboard", args=["nope"])).status_code == 404


def frame_of(values: dict[str, list[float]]) -> pd.DataFrame:
    frame = pd.DataFrame(values, index=[f"n{i}" for i in range(len(next(iter(values.values()))))])
    frame.index.name = "need_id"
    return frame


@pytest.fixture
def tied_board(db, demo_user):
    """Ties in score, a run without a value, and significance with a known answer."""
    benchmark = make_benchmark("ties", {f"n{i}": f"need {i}" for i in range(12)})
    rng = np.random.default_rng(7)
    leader = rng.uniform(0.6, 0.9, 12)
    runs = {
        "leader": leader,
        # Far below the leader on every need: significant under any correction.
        "weak": leader - 0.5,
        # Indistinguishable from the leader: +-0.01 noise around it.
        "close": leader + np.where(np.arange(12) % 2 == 0, 0.01, -0.011),
        # Same mean as "close" to four decimals: shares its rank.
        "twin": leader + np.where(np.arange(12) % 2 == 0, -0.011, 0.01),
    }
    for name, values in runs.items():
        add_run(benchmark, demo_user, name, frame_of({"map": values, "P_10": values}))
    # A run without a map value (only P_10), listed last on map.
    add_run(
        benchmark,
        demo_user,
        "nomap",
        frame_of({"P_10": leader}),
        summary={"P_10": float(leader.mean())},
    )
    store_comparisons(benchmark.__class__.objects.get(pk=benchmark.pk), measures=("map",))
    return benchmark


def test_ties_share_a_rank_and_valueless_runs_come_last(client, tied_board):
    html = client.get(reverse("leaderboard", args=["ties"])).content.decode()
    names = run_names(html)
    assert names[0] == "leader" and names[-2:] == ["weak", "nomap"]
    assert set(names[1:3]) == {"close", "twin"}
    assert ranks(html) == ["1", "2", "2", "4", "—"]


def test_significance_marks_against_the_leader(client, tied_board):
    html = client.get(reverse("leaderboard", args=["ties"])).content.decode()
    rows = {
        name: html.split(f">{name}</a>", 1)[1].split("</tr>", 1)[0]
        for name in ("leader", "weak", "close", "twin")
    }
    assert "#1" in rows["leader"]
    assert "significantly below #1" in rows["weak"]
    assert "statistically tied with #1" in rows["close"]
    assert "statistically tied with #1" in rows["twin"]
    assert "Holm-corrected over the 3 comparisons" in html
    assert "paired t-test" in html and "α = 0.05" in html
    tied = html.split('class="tied-summary"', 1)[1].split("</p>", 1)[0]
    assert "close" in tied and "twin" in tied and "weak" not in tied


def test_holm_decides_a_borderline_mark(client, db, demo_user):
    """Raw p of 0.02, 0.03 and 0.04 against the leader: all below alpha raw, but Holm
    multiplies the smallest by 3 (0.06) so none is significant; the known answer."""
    benchmark = make_benchmark("holm", {"n0": "", "n1": ""})
    frame = frame_of({"map": [0.5, 0.5]})
    leader = add_run(benchmark, demo_user, "top", frame_of({"map": [0.9, 0.9]}))
    others = [add_run(benchmark, demo_user, f"r{i}", frame) for i in range(3)]
    for run, p in zip(others, [0.02, 0.03, 0.04], strict=True):
        Comparison.objects.create(
            submission_a=leader, submission_b=run, judgments=benchmark.current_judgments,
            measure="map", n=2, mean_diff=0.4, wins=2, ties=0, losses=0, t_p=p,
            wilcoxon_p=0.5, randomization_p=0.5,
        )  # fmt: skip
    html = client.get(reverse("leaderboard", args=["holm"])).content.decode()
    assert html.split("<tbody>")[1].split("</tbody>")[0].count("statistically tied with #1") == 3
    assert "significantly below" not in html.split("<tbody>")[1].split("</tbody>")[0]
    # With two runs only 0.02 and 0.03 -> 0.04 and 0.04: both significant.
    others[2].delete()
    html = client.get(reverse("leaderboard", args=["holm"])).content.decode()
    assert html.split("<tbody>")[1].split("</tbody>")[0].count("significantly below #1") == 2


def test_significance_computed_on_the_fly_for_other_measures(client, tied_board):
    html = client.get(reverse("leaderboard", args=["ties"]), {"measure": "P_10"}).content.decode()
    weak = html.split(">weak</a>", 1)[1].split("</tr>", 1)[0]
    assert "significantly below #1" in weak


def test_hidden_and_withdrawn_runs_only_for_owner_and_organizers(
    client, library, demo_user, reader, django_user_model
):
    hidden = Submission.objects.get(run_name="system-B")
    hidden.is_hidden = True
    hidden.save()
    url = reverse("leaderboard", args=["library"])
    assert run_names(client.get(url).content.decode()) == ["system-A"]
    client.force_login(reader)
    assert run_names(client.get(url).content.decode()) == ["system-A"]
    assert client.get(reverse("submission", args=[hidden.pk])).status_code == 404
    client.force_login(demo_user)
    html = client.get(url).content.decode()
    assert run_names(html) == ["system-B", "system-A"] and "badge hidden" in html
    organizer = django_user_model.objects.create_user("org", password="pw-org-12345")
    library.organizers.add(organizer)
    client.force_login(organizer)
    assert run_names(client.get(url).content.decode()) == ["system-B", "system-A"]
    assert client.get(reverse("submission", args=[hidden.pk])).status_code == 200
    Submission.objects.filter(pk=hidden.pk).update(
        is_hidden=False, status=Submission.Status.WITHDRAWN
    )
    client.logout()
    assert run_names(client.get(url).content.decode()) == ["system-A"]
    assert client.get(reverse("submission", args=[hidden.pk])).status_code == 404


def test_pick_form_redirects_to_the_comparison(client, library):
    a, b = (Submission.objects.get(run_name=n).pk for n in ("system-A", "system-B"))
    html = client.get(reverse("leaderboard", args=["library"])).content.decode()
    assert 'action="/benchmarks/library/compare/"' in html
    response = client.get(reverse("compare_pick", args=["library"]), {"a": a, "b": b})
    assert response.status_code == 302
    assert response["Location"] == reverse("compare", args=["library", a, b])
    for bad in ({"a": a, "b": a}, {"a": "x", "b": b}, {}):
        assert client.get(reverse("compare_pick", args=["library"]), bad).status_code == 400


def test_leaderboard_queries_stay_constant(
    client, library, demo_user, django_assert_max_num_queries
):
    url = reverse("leaderboard", args=["library"])
    # the phases: one query; the lens: the versions to choose from; the validators
    # (Last-Modified): three
    with django_assert_max_num_queries(11):
        client.get(url)
    frame = frame_of({"map": [0.1, 0.2, 0.3, 0.4], "P_10": [0.1, 0.2, 0.3, 0.4]})
    frame.index = ["cs-foundations", "stage-plays", "atwood", "russian-novels"]
    for i in range(30):
        add_run(library, demo_user, f"extra-{i}", frame, is_baseline=i % 5 == 0)
    client.force_login(demo_user)
    with django_assert_max_num_queries(14):  # + session, user, and whether they organise it
        response = client.get(url)
    assert len(run_names(response.content.decode())) == 32


def test_odd_inputs_never_give_a_server_error(client, library, db):
    huge = 10**30
    a = Submission.objects.get(run_name="system-A").pk
    urls = [
        f"/submissions/{huge}/",
        f"/submissions/{huge}/per-need.csv",
        f"/benchmarks/library/compare/{a}/{huge}/",
        f"/benchmarks/library/compare/{huge}/{a}/comparison.json",
        f"/submissions/{huge}/status/",
        reverse("leaderboard_export", args=["nope", "csv"]),
        reverse("significance", args=["nope"]),
    ]
    for url in urls:
        assert client.get(url).status_code == 404, url
    pick = reverse("compare_pick", args=["library"])
    assert client.get(pick, {"a": huge, "b": a}).status_code == 400
    assert client.get(pick, {"a": 10**17, "b": a}).status_code == 302
    # A benchmark with no judgments yet and no runs: every page renders, exports are empty.
    make_benchmark("empty", {"n1": "need"}).__class__.objects.filter(slug="empty").update(
        current_judgments=None
    )
    for url in (
        reverse("home"),
        reverse("leaderboard", args=["empty"]),
        reverse("significance", args=["empty"]),
        reverse("leaderboard_export", args=["empty", "csv"]),
        reverse("leaderboard_export", args=["empty", "json"]),
    ):
        assert client.get(url).status_code == 200, url
    for params in ({"measure": ""}, {"measure": "x" * 500}, {"correction": "tukey"}):
        assert client.get(reverse("significance", args=["library"]), params).status_code == 200
