"""Coverage: a run that answers none of the judged needs is refused at upload; one that
answers some is warned; no page fails on a run with missing needs. A run
deeper than the benchmark's depth is warned with the number of needs cut."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.models import ApiToken, Submission
from leaderboard.pipeline.scoring import score
from tests import DEMO

RUN_B = (DEMO / "run-B.txt").read_bytes()
# system-B's lines for one of the library's four judged needs only
ONE_NEED = b"".join(line for line in RUN_B.splitlines(True) if line.startswith(b"atwood "))
NO_NEED = b"q1 Q0 d1 1 2.5 other\nq1 Q0 d2 2 1.5 other\nq2 Q0 d1 1 0.5 other\n"
NONE_MESSAGE = (
    "answers none of the 4 judged needs of this benchmark "
    "(its needs: atwood, cs-foundations, russian-novels, stage-plays)"
)
PARTIAL = "answers 1 of 4 judged needs; the other 3 score 0"


def post_run(client, content: bytes, name: str = "run.txt", **fields):
    return client.post(
        "/benchmarks/library/submit/", {"file": SimpleUploadedFile(name, content), **fields}
    )


def stored_and_scored(benchmark, user, name: str, content: bytes) -> Submission:
    """A run scored without the upload form (an older upload, or a run scored against
    judgments that no longer share its needs): what the pages must still show."""
    submission = Submission.objects.create(
        benchmark=benchmark,
        participant=user,
        run_name=name,
        file=ContentFile(content, name=f"{name}.txt"),
        status=Submission.Status.RUNNING,
    )
    assert score(submission, benchmark.latest_judgments) is not None
    submission.refresh_from_db()
    return submission


def pages_of(run: Submission, other: Submission) -> list[str]:
    slug = run.benchmark.slug
    return [
        reverse("submission", args=[run.pk]),
        reverse("submission_csv", args=[run.pk]),
        reverse("leaderboard", args=[slug]),
        reverse("compare", args=[slug, run.pk, other.pk]),
        reverse("compare", args=[slug, other.pk, run.pk]),
        reverse("compare_json", args=[slug, run.pk, other.pk]),
        reverse("significance", args=[slug]),
        f"/benchmarks/{slug}/leaderboard.csv",
        f"/benchmarks/{slug}/leaderboard.json",
        reverse("api_submission", args=[run.pk]),
        reverse("api_per_need", args=[run.pk]),
    ]


@pytest.mark.parametrize("content", [NO_NEED, ONE_NEED], ids=["no-need", "one-need"])
def test_no_page_fails_on_a_run_with_missing_needs(
    client, library, participant, django_capture_on_commit_callbacks, content
):
    with django_capture_on_commit_callbacks(execute=True):
        other = stored_and_scored(library, participant, "system-B", RUN_B)
        run = stored_and_scored(library, participant, "partial", content)
    assert run.status == "scored"
    client.force_login(participant)
    for url in pages_of(run, other):
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:300])
    html = client.get(reverse("submission", args=[run.pk])).content.decode()
    if content is NO_NEED:
        assert "answers 0 of 4 judged needs; the other 4 score 0" in html
    else:
        assert PARTIAL in html


def test_a_run_answering_no_judged_need_is_refused_by_the_form(client, library, participant):
    client.force_login(participant)
    response = post_run(client, NO_NEED)
    assert response.status_code == 400
    assert f"run.txt {NONE_MESSAGE}" in response.content.decode()
    assert not Submission.objects.exists()


def test_a_run_whose_first_judged_need_comes_late_is_accepted(client, library, participant):
    """The check reads a plain file only until a line answers a judged need: here past
    its first 1,000 lines and its first megabyte, so both are read on, then it stops."""
    unjudged = b"".join(b"q%d Q0 doc-%07d 1 %d.5 other\n" % (i // 500, i, i) for i in range(40_000))
    client.force_login(participant)
    for name, content in (("late.txt", unjudged + ONE_NEED), ("none.txt", unjudged)):
        response = post_run(client, content, name=name, run_name=name.split(".")[0])
        expected = 302 if name == "late.txt" else 400
        assert response.status_code == expected, response.content[:300]
    assert list(Submission.objects.values_list("run_name", flat=True)) == ["late"]


def test_a_run_answering_no_judged_need_is_refused_by_the_api(client, library, participant):
    _, raw = ApiToken.issue(participant, "test")
    response = client.post(
        "/api/benchmarks/library/submissions/",
        {"file": SimpleUploadedFile("run.txt.gz", __import__("gzip").compress(NO_NEED))},
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 400, response.content
    assert f"run.txt.gz {NONE_MESSAGE}" in str(response.json())
    assert not Submission.objects.exists()


def test_a_run_answering_some_needs_is_warned_everywhere(
    client, library, participant, django_capture_on_commit_callbacks
):
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_run(client, ONE_NEED, run_name="one-need")
    run = Submission.objects.get()
    assert response.status_code == 302 and run.status == "scored", run.failure_reason
    assert PARTIAL in run.warnings[-1]
    assert PARTIAL in client.get(response["Location"]).content.decode()  # the run page
    # My runs counts them and links to the run page's list
    my_runs = client.get("/accounts/runs/").content.decode()
    assert f'href="/submissions/{run.pk}/#warnings"' in my_runs and ">1 warning</a>" in my_runs
    _, raw = ApiToken.issue(participant, "test")
    body = client.get(
        f"/api/submissions/{run.pk}/", headers={"Authorization": f"Bearer {raw}"}
    ).json()
    assert any(PARTIAL in warning for warning in body["warnings"])


def test_a_run_answering_every_need_has_no_coverage_warning(
    client, library, participant, django_capture_on_commit_callbacks
):
    client.force_login(participant)
    with django_capture_on_commit_callbacks(execute=True):
        post_run(client, RUN_B)
    run = Submission.objects.get()
    assert run.status == "scored"
    assert not any("judged needs" in warning for warning in run.warnings)


def test_a_run_with_a_header_line_is_named_by_its_first_data_line_and_warned(
    client, library, participant, django_capture_on_commit_callbacks
):
    client.force_login(participant)
    content = b"qid Q0 docno rank score tag\n" + RUN_B
    with django_capture_on_commit_callbacks(execute=True):
        response = post_run(client, content, "run-B.txt")
    run = Submission.objects.get()
    assert response.status_code == 302 and run.status == "scored", run.failure_reason
    assert run.run_name == "system-B"  # not "tag", the header's
    assert round(run.current_result().summary["map"], 3) == 0.740
    header = "run-B.txt: line 1 looks like a header ('qid Q0 docno rank score tag'); skipped"
    assert header in run.warnings
    assert header.replace("'", "&#x27;") in client.get(response["Location"]).content.decode()
    bad = RUN_B + b"qid Q0 docno rank score tag\n"
    response = post_run(client, bad, "late.txt", run_name="late")
    assert response.status_code == 400
    line = len(RUN_B.splitlines()) + 1
    assert f"late.txt:{line}: score &#x27;score&#x27; is not a number" in response.content.decode()


def deep_run(depths: dict[str, int]) -> bytes:
    """A run ranking ``depths[need]`` documents for each need, the judged ones first."""
    qrels = (DEMO / "qrels.txt").read_text().split("\n")
    lines = []
    for need, depth in depths.items():
        judged = [row.split()[2] for row in qrels if row.startswith(f"{need} ")]
        docs = judged + [f"{need}-filler-{i:05d}" for i in range(depth - len(judged))]
        lines += [f"{need} Q0 {doc} {i + 1} {depth - i} deep\n" for i, doc in enumerate(docs)]
    return "".join(lines).encode()


NEEDS = ("atwood", "cs-foundations", "russian-novels", "stage-plays")
DEPTH = "{} had more than 1,000 documents; ranks past 1,000 were ignored, as `trec_eval -M 1000`"


def shown_everywhere(client, live_server, run: Submission, user, monkeypatch, tmp_path):
    """The run page's text, the API's ``warnings`` and ``rrl status``'s output."""
    from rrl import cli

    page = client.get(reverse("submission", args=[run.pk])).content.decode()
    _, raw = ApiToken.issue(user, "test")
    api = client.get(f"/api/submissions/{run.pk}/", headers={"Authorization": f"Bearer {raw}"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("RRL_URL", live_server.url)
    monkeypatch.setenv("RRL_TOKEN", raw)
    return page, api.json()["warnings"], cli.main(["status", str(run.pk)])


@pytest.mark.django_db(transaction=True)
def test_a_run_deeper_than_the_benchmark_is_warned_with_the_count(
    client, live_server, library, participant, monkeypatch, tmp_path, capsys
):
    assert library.max_depth == 1000
    depths = {"atwood": 1200, "cs-foundations": 1001, "russian-novels": 1000, "stage-plays": 40}
    run = stored_and_scored(library, participant, "deep", deep_run(depths))
    warning = DEPTH.format("2 needs")
    assert warning in run.warnings
    page, api, status = shown_everywhere(
        client, live_server, run, participant, monkeypatch, tmp_path
    )
    assert warning in page
    assert warning in api
    assert status == 0
    assert f"warning: {warning}" in capsys.readouterr().out
    # the scores are trec_eval -M 1000's: the cut needs rank exactly 1,000 documents
    per_need = run.current_result().per_need_frame()
    assert (
        per_need.loc["atwood", "num_ret"] == 1000 and per_need.loc["stage-plays", "num_ret"] == 40
    )


@pytest.mark.django_db(transaction=True)
def test_a_run_within_the_depth_has_no_depth_warning(
    client, live_server, library, participant, monkeypatch, tmp_path, capsys
):
    run = stored_and_scored(library, participant, "shallow", deep_run(dict.fromkeys(NEEDS, 1000)))
    assert not any("documents; ranks past" in warning for warning in run.warnings)
    page, api, status = shown_everywhere(
        client, live_server, run, participant, monkeypatch, tmp_path
    )
    assert "ranks past" not in page and not api
    assert status == 0 and "warning:" not in capsys.readouterr().out


def test_one_deep_need_is_one_need_and_a_benchmark_without_depth_warns_of_none():
    from leaderboard.pipeline.coverage import depth_warnings, lines_per_need

    codes = np.array([0, 0, 0, -1, 1, 2, 2], np.int32)
    assert lines_per_need(codes, 4).tolist() == [3, 1, 2, 0]
    assert depth_warnings(lines_per_need(codes, 4), 2) == [
        "1 need had more than 2 documents; ranks past 2 were ignored, as `trec_eval -M 2`"
    ]
    assert depth_warnings(lines_per_need(codes, 4), 3) == []
    assert depth_warnings(lines_per_need(codes, 4), None) == []
