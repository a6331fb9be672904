"""Organizers in the admin: their own benchmarks only, files validated, runs managed."""

from __future__ import annotations

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Benchmark, InformationNeed, Judgments, Submission
from tests import DEMO


def benchmark_form(**overrides) -> dict:
    data = {
        "slug": "robust",
        "title": "Robust",
        "description": "",
        "primary_measure": "map",
        "relevance_level": 1,
        "max_depth": 1000,
        "is_open": "on",
        "daily_limit": 5,
        "published": "on",
        "phases-TOTAL_FORMS": 0,  # the phases inline, empty
        "phases-INITIAL_FORMS": 0,
    }
    data.update(overrides)
    return data


@pytest.fixture
def other_benchmark(db, django_user_model) -> Benchmark:
    owner = django_user_model.objects.create_user("oscar", is_staff=True)
    benchmark = Benchmark.objects.create(slug="theirs", title="Theirs")
    benchmark.organizers.add(owner)
    return benchmark


def test_an_organizer_creates_a_benchmark_with_needs_and_judgments(client, organizer):
    client.force_login(organizer)
    data = benchmark_form(
        needs_file=SimpleUploadedFile("needs.tsv", (DEMO / "needs.tsv").read_bytes()),
        qrels_file=SimpleUploadedFile("qrels.txt", (DEMO / "qrels.txt").read_bytes()),
    )
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    benchmark = Benchmark.objects.get(slug="robust")
    assert benchmark.is_organised_by(organizer)
    assert InformationNeed.objects.filter(benchmark=benchmark).count() == 4
    assert benchmark.current_judgments.version == 1
    assert benchmark.current_judgments.num_relevant == 23
    assert benchmark.current_judgments.need_ids == [
        "atwood",
        "cs-foundations",
        "russian-novels",
        "stage-plays",
    ]


def test_a_max_depth_of_zero_is_refused(client, organizer):
    """-M 0 keeps no document of any ranking: every run would score 0 without a word."""
    client.force_login(organizer)
    response = client.post("/admin/leaderboard/benchmark/add/", benchmark_form(max_depth=0))
    assert response.status_code == 200
    assert "greater than or equal to 1" in response.content.decode()
    assert not Benchmark.objects.exists()


def test_a_bad_qrels_file_is_refused_with_its_line_and_nothing_is_stored(client, organizer):
    client.force_login(organizer)
    data = benchmark_form(qrels_file=SimpleUploadedFile("q.txt", b"n1 0 d1 1\nn1 0 d2 high\n"))
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 200
    assert "q.txt:2:" in response.content.decode()
    assert not Benchmark.objects.exists() and not Judgments.objects.exists()
    data = benchmark_form(qrels_file=SimpleUploadedFile("q.txt", b""))
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 200 and "q.txt:1: empty file" in response.content.decode()
    assert not Benchmark.objects.exists() and not Judgments.objects.exists()


def test_judgments_that_are_no_next_version_are_a_form_error_and_nothing_is_stored(
    client, organizer, library
):
    """The judgments checks (a need the needs file does not list, no pair relevant, a
    private need left out) run on the form, against the benchmark as the post leaves it:
    the file's line and reason on the form, never a server error, and nothing saved."""
    client.force_login(organizer)
    needs = SimpleUploadedFile("needs.tsv", b"301\tTopic 301\n302\tTopic 302\n")
    qrels = SimpleUploadedFile("q.txt", b"301 0 d1 1\n302 0 d2 1\n303 0 d3 1\n")
    data = benchmark_form(needs_file=needs, qrels_file=qrels)
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 200
    assert "q.txt:3: need &#x27;303&#x27; is not a need of Robust" in response.content.decode()
    assert not Benchmark.objects.filter(slug="robust").exists()
    assert not InformationNeed.objects.filter(need_id="301").exists()

    library.organizers.add(organizer)
    library.set_split(["atwood"])
    url = f"/admin/leaderboard/benchmark/{library.pk}/change/"
    for name, content, refusal in (
        ("pool.qrels", b"atwood 0 d1 -1\nstage-plays 0 d2 -1\n", "no pair is judged relevant"),
        ("v2.txt", b"stage-plays 0 d2 1\n", "does not judge the private need(s) atwood"),
    ):
        data = benchmark_form(
            slug="library",
            title="Library",
            qrels_file=SimpleUploadedFile(name, content),
            daily_limit=7,
            private_need_ids="atwood",
        )
        response = client.post(url, data)
        assert response.status_code == 200
        assert f"{name}: {refusal}" in response.content.decode()
    library.refresh_from_db()
    assert library.daily_limit == 3 and library.private_needs == ["atwood"]
    assert library.latest_judgments.version == 1
    # the split this post sets is the one the file is checked against
    data = benchmark_form(
        slug="library",
        title="Library",
        qrels_file=SimpleUploadedFile("v2.txt", b"stage-plays 0 d2 1\n"),
        private_need_ids="",
    )
    assert client.post(url, data).status_code == 302
    library.refresh_from_db()
    assert not library.has_split and library.latest_judgments.version == 2


def test_a_refused_judgments_line_is_the_file_s_own_line(client, organizer):
    """Blank and comment lines are no qrels rows, but an error names the line of the file
    as an editor numbers it; a need id longer than the platform stores is refused at its
    line, in the needs file or the qrels, never a server error."""
    client.force_login(organizer)
    needs = SimpleUploadedFile("needs.tsv", b"301\tTopic 301\n302\tTopic 302\n")
    qrels = SimpleUploadedFile("q.txt", b"# assessed\n301 0 d1 1\n\n302 0 d2 1\n\n999 0 d3 1\n")
    response = client.post(
        "/admin/leaderboard/benchmark/add/", benchmark_form(needs_file=needs, qrels_file=qrels)
    )
    assert response.status_code == 200
    assert "q.txt:6: need &#x27;999&#x27; is not a need of Robust" in response.content.decode()
    long = b"n" * 101
    qrels = SimpleUploadedFile("q.txt", b"301 0 d1 1\n\n" + long + b" 0 d2 1\n")
    response = client.post("/admin/leaderboard/benchmark/add/", benchmark_form(qrels_file=qrels))
    assert response.status_code == 200
    assert "q.txt:3: need id of 101 characters (at most 100)" in response.content.decode()
    needs = SimpleUploadedFile("needs.tsv", b"301\tTopic\n" + long + b"\tLong\n")
    response = client.post("/admin/leaderboard/benchmark/add/", benchmark_form(needs_file=needs))
    assert response.status_code == 200
    assert "needs.tsv:2: need id of 101 characters (at most 100)" in response.content.decode()
    assert not Benchmark.objects.exists() and not InformationNeed.objects.exists()


def test_the_same_judgments_file_again_says_so(client, organizer, demo):
    """Uploading the latest version's very file stores nothing and queues nothing: the
    message says so instead of announcing the version as loaded."""
    demo.organizers.add(organizer)
    client.force_login(organizer)
    url = f"/admin/leaderboard/benchmark/{demo.pk}/change/"
    qrels = SimpleUploadedFile("again.txt", (DEMO / "qrels.txt").read_bytes())
    data = benchmark_form(slug="library", title=demo.title, qrels_file=qrels, interpolation="exact")
    response = client.post(url, data, follow=True).content.decode()
    assert "Judgments v1 are again.txt already (the same judgments): no new version" in response
    assert "runs queued" not in response
    assert set(demo.submissions.values_list("status", flat=True)) == {"scored"}
    # The same lines gzipped are the same judgments: no version, nothing rescored.
    gzipped = gzip.compress((DEMO / "qrels.txt").read_bytes(), compresslevel=1)
    qrels = SimpleUploadedFile("again.txt.gz", gzipped)
    data = benchmark_form(slug="library", title=demo.title, qrels_file=qrels, interpolation="exact")
    response = client.post(url, data, follow=True).content.decode()
    assert "Judgments v1 are again.txt.gz already (the same judgments)" in response
    assert "runs queued" not in response and demo.judgments.count() == 1
    assert set(demo.submissions.values_list("status", flat=True)) == {"scored"}
    qrels = (DEMO / "qrels.txt").read_bytes() + b"atwood 0 extra-doc 1\n"
    data = benchmark_form(
        slug="library", title=demo.title, qrels_file=SimpleUploadedFile("v2.txt", qrels)
    )
    response = client.post(url, data, follow=True).content.decode()
    assert "Judgments v2: 97 judgments of 4 needs; 2 runs queued for rescoring." in response


def test_an_organizer_sees_only_their_benchmarks(client, organizer, other_benchmark):
    mine = Benchmark.objects.create(slug="mine", title="Mine")
    mine.organizers.add(organizer)
    client.force_login(organizer)
    listing = client.get("/admin/leaderboard/benchmark/").content.decode()
    assert "Mine" in listing and "Theirs" not in listing
    assert client.get(f"/admin/leaderboard/benchmark/{other_benchmark.pk}/change/").status_code in {
        302,
        403,
        404,
    }
    response = client.post(
        f"/admin/leaderboard/benchmark/{other_benchmark.pk}/change/",
        benchmark_form(slug="theirs", title="Hijacked"),
    )
    assert response.status_code in {302, 403, 404}
    other_benchmark.refresh_from_db()
    assert other_benchmark.title == "Theirs"


def test_a_participant_cannot_use_the_admin(client, participant):
    client.force_login(participant)
    response = client.get("/admin/leaderboard/benchmark/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_organizer_actions_on_runs(client, organizer, demo, other_benchmark):
    demo.organizers.add(organizer)
    client.force_login(organizer)
    runs = Submission.objects.filter(benchmark=demo)
    ids = [str(pk) for pk in runs.values_list("pk", flat=True)]
    listing = client.get("/admin/leaderboard/submission/").content.decode()
    assert "system-A" in listing
    for action in ("hide", "mark_baseline"):
        response = client.post(
            "/admin/leaderboard/submission/", {"action": action, "_selected_action": ids}
        )
        assert response.status_code == 302
    assert set(runs.values_list("is_hidden", "is_baseline")) == {(True, True)}
    client.post(
        "/admin/leaderboard/submission/", {"action": "withdraw", "_selected_action": ids[:1]}
    )
    withdrawn = Submission.objects.get(pk=ids[0])
    assert withdrawn.status == "withdrawn" and withdrawn.withdrawn_at is not None


def test_withdrawing_the_last_run_not_rescored_in_the_admin_lets_new_judgments_in(
    client, organizer, demo, django_capture_on_commit_callbacks
):
    """The organizer withdraws the one run the new version still waits for (its scoring
    task will keep nothing): the boards switch to the new version then, as on the
    participant's own withdrawal."""
    import io

    from leaderboard.pipeline.loading import load_judgments
    from leaderboard.pipeline.scoring import run_scoring
    from tests import DEMO

    demo.organizers.add(organizer)
    client.force_login(organizer)
    first, last = demo.submissions.order_by("pk")
    qrels = (DEMO / "qrels.txt").read_bytes() + b"atwood 0 extra-doc 1\n"
    with django_capture_on_commit_callbacks(execute=False):  # rescoring queued, not run
        v2 = load_judgments(demo, io.BytesIO(qrels), "qrels-v2.txt")
    assert run_scoring(first.pk, "rescore").status == "scored"
    demo.refresh_from_db()
    assert demo.current_judgments_id != v2.pk  # the last run holds it back
    client.post(
        "/admin/leaderboard/submission/", {"action": "withdraw", "_selected_action": [last.pk]}
    )
    demo.refresh_from_db()
    assert demo.current_judgments_id == v2.pk


def test_deleting_the_current_judgments_puts_the_latest_left_in_their_place(
    client, organizer, demo, django_capture_on_commit_callbacks
):
    """The boards read the current version: deleting it in the admin makes the latest
    version left current when every run has it, else rescores the runs against it."""
    import io

    from leaderboard.pipeline.loading import load_judgments
    from tests import DEMO

    demo.organizers.add(organizer)
    client.force_login(organizer)
    v1 = demo.current_judgments
    qrels = (DEMO / "qrels.txt").read_bytes()
    with django_capture_on_commit_callbacks(execute=True):
        v2 = load_judgments(demo, io.BytesIO(qrels + b"atwood 0 extra-doc 1\n"), "v2.txt")
    demo.refresh_from_db()
    assert demo.current_judgments_id == v2.pk
    client.post(f"/admin/leaderboard/judgments/{v2.pk}/delete/", {"post": "yes"})
    demo.refresh_from_db()
    assert demo.current_judgments_id == v1.pk

    with django_capture_on_commit_callbacks(execute=True):
        v3 = load_judgments(demo, io.BytesIO(qrels + b"atwood 0 other-doc 1\n"), "v3.txt")
    late = demo.submissions.order_by("pk").last()
    late.results.filter(judgments=v1).delete()  # as a run submitted once v3 was current
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            "/admin/leaderboard/judgments/",
            {"action": "delete_selected", "_selected_action": [v3.pk], "post": "yes"},
            follow=True,
        )
    assert "runs queued for rescoring against v1" in response.content.decode()
    late.refresh_from_db()
    assert late.status == "queued"


def test_each_action_says_what_it_did(client, organizer, demo):
    """An action's message counts what changed and what was left as it was; opening a
    benchmark with phases, none open now, says that runs are still refused."""
    from leaderboard.models import Phase

    demo.organizers.add(organizer)
    client.force_login(organizer)
    ids = [str(pk) for pk in demo.submissions.order_by("pk").values_list("pk", flat=True)]

    def act(url: str, action: str, selected: list) -> str:
        response = client.post(url, {"action": action, "_selected_action": selected}, follow=True)
        return response.content.decode()

    runs = "/admin/leaderboard/submission/"
    assert "Unmarked 1 run as baseline." in act(runs, "unmark_baseline", ids)
    assert "Marked 2 runs as baseline." in act(runs, "mark_baseline", ids)
    assert "Hid 1 run." in act(runs, "hide", ids[:1])
    assert "Hid 1 run (1 left as it was)." in act(runs, "hide", ids)
    assert "Withdrew 1 run." in act(runs, "withdraw", ids[:1])
    assert "Showed 1 run (1 left as it was)." in act(runs, "unhide", ids)
    benchmarks = "/admin/leaderboard/benchmark/"
    assert "Closed 1 benchmark for submissions." in act(benchmarks, "close_submissions", [demo.pk])
    Phase.objects.create(
        benchmark=demo, name="Test", opens="2020-01-01T00:00Z", closes="2020-02-01T00:00Z"
    )
    opened = act(benchmarks, "open_submissions", [demo.pk])
    assert "Opened 1 benchmark for submissions." in opened
    assert "the phase Test closed at 2020-02-01 00:00 UTC" in opened


def test_renaming_a_run_to_a_name_another_run_holds_is_a_form_error(client, organizer, demo):
    demo.organizers.add(organizer)
    client.force_login(organizer)
    first, second = demo.submissions.order_by("pk")
    data = {"run_name": second.run_name, "description": "", "paper_url": "", "code_url": ""}
    url = f"/admin/leaderboard/submission/{first.pk}/change/"
    response = client.post(url, data)
    assert response.status_code == 200
    assert f"A run named &#x27;{second.run_name}&#x27; already exists" in response.content.decode()
    Submission.objects.filter(pk=second.pk).withdraw()  # a withdrawn run holds no name
    assert client.post(url, data).status_code == 302
    first.refresh_from_db()
    assert first.run_name == second.run_name


def test_rescore_all_action_requeues_and_rescores(
    client, organizer, demo, django_capture_on_commit_callbacks
):
    demo.organizers.add(organizer)
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/leaderboard/benchmark/",
            {"action": "rescore_all", "_selected_action": [str(demo.pk)]},
        )
    assert response.status_code == 302
    runs = Submission.objects.filter(benchmark=demo)
    assert set(runs.values_list("status", flat=True)) == {"scored"}
    assert set(runs.values_list("attempts", flat=True)) == {1}


def test_api_tokens_are_for_superusers_only_and_never_shown_raw(
    client, organizer, django_user_model
):
    from leaderboard.models import ApiToken

    _, raw = ApiToken.issue(organizer, "laptop")
    client.force_login(organizer)
    assert client.get("/admin/leaderboard/apitoken/").status_code == 403
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    listing = client.get("/admin/leaderboard/apitoken/")
    assert listing.status_code == 200 and "laptop" in listing.content.decode()
    assert raw not in listing.content.decode()


def test_an_organizer_writes_rules_and_data_in_markdown(client, organizer):
    # The rules and the data description are the organizer's, in the admin.
    client.force_login(organizer)
    page = client.get("/admin/leaderboard/benchmark/add/").content.decode()
    assert 'name="rules"' in page and 'name="data_description"' in page
    data = benchmark_form(rules="# One run a day", data_description="- **4** needs")
    assert client.post("/admin/leaderboard/benchmark/add/", data).status_code == 302
    benchmark = Benchmark.objects.get(slug="robust")
    assert benchmark.rules == "# One run a day"
    assert benchmark.data_description == "- **4** needs"


# the phases inline's first row: a hidden-board Test phase
TEST_PHASE = {
    "phases-0-name": "Test",
    "phases-0-opens_0": "2026-07-10",
    "phases-0-opens_1": "00:00:00",
    "phases-0-closes_0": "2026-07-20",
    "phases-0-closes_1": "12:00:00",
    "phases-0-board": "hidden",
}


def test_an_organizer_sets_phases_on_the_benchmark_form(client, organizer):
    client.force_login(organizer)
    phase = {**TEST_PHASE, "phases-0-total_limit": 3}
    response = client.post(
        "/admin/leaderboard/benchmark/add/", {**benchmark_form(), **phase, "phases-TOTAL_FORMS": 1}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    (saved,) = Benchmark.objects.get(slug="robust").phases.all()
    assert (saved.name, saved.closes.isoformat(), saved.total_limit, saved.board) == (
        "Test",
        "2026-07-20T12:00:00+00:00",
        3,
        "hidden",
    )
    backwards = {**phase, "phases-0-closes_0": "2026-07-01"}
    response = client.post(
        "/admin/leaderboard/benchmark/add/",
        {**benchmark_form(slug="other"), **backwards, "phases-TOTAL_FORMS": 1},
    )
    assert response.status_code == 200
    assert "A phase must close after it opens." in response.content.decode()
    assert not Benchmark.objects.filter(slug="other").exists()


def test_phases_added_together_may_not_overlap(client, organizer):
    """Each phase is checked against the stored ones; two posted in one form are checked
    against each other too, and neither is stored."""
    client.force_login(organizer)
    second = {
        "phases-1-name": "Final",
        "phases-1-opens_0": "2026-07-15",
        "phases-1-opens_1": "00:00:00",
        "phases-1-closes_0": "2026-07-30",
        "phases-1-closes_1": "00:00:00",
        "phases-1-board": "public",
    }
    data = {**benchmark_form(), **TEST_PHASE, **second, "phases-TOTAL_FORMS": 2}
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 200
    assert (
        "The phases Test (2026-07-10 00:00 UTC to 2026-07-20 12:00 UTC) and Final "
        "(2026-07-15 00:00 UTC to 2026-07-30 00:00 UTC) overlap" in response.content.decode()
    )
    assert not Benchmark.objects.filter(slug="robust").exists()
    data["phases-1-opens_0"] = "2026-07-20"
    data["phases-1-opens_1"] = "12:00:00"  # from the close of the other: no overlap
    response = client.post("/admin/leaderboard/benchmark/add/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Benchmark.objects.get(slug="robust").phases.count() == 2


def test_the_boundary_between_two_phases_moves_in_one_save(client, organizer):
    """Both phases' new times are checked against each other, not against the stored
    times the same save replaces."""
    client.force_login(organizer)
    later = {
        "phases-1-name": "Final",
        "phases-1-opens_0": "2026-07-20",
        "phases-1-opens_1": "12:00:00",
        "phases-1-closes_0": "2026-07-30",
        "phases-1-closes_1": "00:00:00",
        "phases-1-board": "public",
    }
    data = {**benchmark_form(), **TEST_PHASE, **later, "phases-TOTAL_FORMS": 2}
    assert client.post("/admin/leaderboard/benchmark/add/", data).status_code == 302
    benchmark = Benchmark.objects.get(slug="robust")
    test, final = benchmark.phases.order_by("opens")
    moved = {
        **data,
        "phases-INITIAL_FORMS": 2,
        "phases-0-id": test.pk,
        "phases-0-benchmark": benchmark.pk,
        "phases-0-closes_0": "2026-07-15",
        "phases-1-id": final.pk,
        "phases-1-benchmark": benchmark.pk,
        "phases-1-opens_0": "2026-07-15",
    }
    response = client.post(f"/admin/leaderboard/benchmark/{benchmark.pk}/change/", moved)
    assert response.status_code == 302, response.content.decode()[:3000]
    final.refresh_from_db()
    assert final.opens.isoformat() == "2026-07-15T12:00:00+00:00"
    overlapping = {**moved, "phases-1-opens_0": "2026-07-14"}
    response = client.post(f"/admin/leaderboard/benchmark/{benchmark.pk}/change/", overlapping)
    assert (
        response.status_code == 200
        and "overlap: phases may not overlap" in response.content.decode()
    )


def test_a_reveal_before_a_hidden_phase_closes_is_warned_of(client, organizer):
    client.force_login(organizer)
    early = {"reveal_at_0": "2026-07-15", "reveal_at_1": "00:00:00"}
    data = {**benchmark_form(), **TEST_PHASE, **early, "phases-TOTAL_FORMS": 1}
    response = client.post("/admin/leaderboard/benchmark/add/", data, follow=True)
    assert (
        "The reveal at 2026-07-15 00:00 UTC comes before the phase Test closes at "
        "2026-07-20 12:00 UTC" in response.content.decode()
    )
    benchmark = Benchmark.objects.get(slug="robust")  # a warning: saved as posted
    assert benchmark.reveal_at.isoformat() == "2026-07-15T00:00:00+00:00"
    saved = benchmark.phases.get()
    later = {
        **data,
        "reveal_at_0": "2026-07-21",
        "phases-INITIAL_FORMS": 1,
        "phases-0-id": saved.pk,
        "phases-0-benchmark": benchmark.pk,
    }
    response = client.post(
        f"/admin/leaderboard/benchmark/{benchmark.pk}/change/", later, follow=True
    )
    assert "comes before the phase" not in response.content.decode()


def test_a_phase_that_still_hides_its_runs_is_not_deleted(client, organizer):
    """The inline's delete box on a hidden board holding a run, before the reveal: the
    form says why (the API's 409) and the phase stays."""
    from leaderboard.models import Phase, Submission

    client.force_login(organizer)
    phase = TEST_PHASE
    created = client.post(
        "/admin/leaderboard/benchmark/add/", {**benchmark_form(), **phase, "phases-TOTAL_FORMS": 1}
    )
    assert created.status_code == 302, created.content.decode()[:2000]
    benchmark = Benchmark.objects.get(slug="robust")
    saved = benchmark.phases.get()
    Submission.objects.create(
        benchmark=benchmark, participant=organizer, run_name="held", phase=saved, file="r.txt"
    )
    deleting = {
        **benchmark_form(),
        **phase,
        "phases-TOTAL_FORMS": 1,
        "phases-INITIAL_FORMS": 1,
        "phases-0-id": saved.pk,
        "phases-0-benchmark": benchmark.pk,
        "phases-0-DELETE": "on",
    }
    response = client.post(f"/admin/leaderboard/benchmark/{benchmark.pk}/change/", deleting)
    assert response.status_code == 200
    assert "The phase Test holds 1 run(s) whose scores are hidden" in response.content.decode()
    assert Phase.objects.filter(pk=saved.pk).exists()


def test_a_change_to_how_runs_are_scored_requeues_them_as_the_api_does(
    client, organizer, demo, django_capture_on_commit_callbacks
):
    demo.organizers.add(organizer)
    client.force_login(organizer)
    url = f"/admin/leaderboard/benchmark/{demo.pk}/change/"
    data = benchmark_form(slug="library", title=demo.title, relevance_level=2)
    refused = client.post(url, data)  # the demo's judgments are 0/1: every run would score 0
    assert refused.status_code == 200
    assert "No judgment of v1 reaches 2 (the highest is 1)" in refused.content.decode()
    assert set(demo.submissions.values_list("status", flat=True)) == {"scored"}
    data = benchmark_form(slug="library", title=demo.title, relevance_level=0)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(url, data, follow=True)
    assert "relevance_level changed: 2 runs queued for rescoring." in response.content.decode()
    assert set(demo.submissions.values_list("status", flat=True)) == {"queued"}
