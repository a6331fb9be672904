"""Management commands: load_demo (idempotent), load_benchmark, score_pending, rescore."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import Benchmark, Comparison, InformationNeed, Submission
from tests import DEMO


def test_load_demo_gives_b_above_a_and_is_idempotent(demo):
    results = {
        s.run_name: round(s.current_result().summary["map"], 3)
        for s in Submission.objects.filter(benchmark=demo)
    }
    assert results == {"system-A": 0.473, "system-B": 0.740}
    facts = Benchmark.objects.get(slug="library-facts")
    rr = {
        s.run_name: round(s.current_result().summary["recip_rank"], 3)
        for s in facts.submissions.all()
    }
    assert sorted(rr.values()) == [0.479, 0.508]
    assert Comparison.objects.filter(judgments=demo.current_judgments, measure="map").count() == 1
    before = (Submission.objects.count(), Comparison.objects.count(), demo.judgments.count())
    call_command("load_demo", stdout=io.StringIO())
    assert (
        Submission.objects.count(),
        Comparison.objects.count(),
        demo.judgments.count(),
    ) == before


def test_load_benchmark_reports_progress_and_line_errors(db, tmp_path):
    out = io.StringIO()
    call_command(
        "load_benchmark",
        "lib",
        "--needs",
        str(DEMO / "needs.tsv"),
        "--qrels",
        str(DEMO / "qrels.txt"),
        stdout=out,
    )
    assert "4 needs" in out.getvalue() and "judgments v1" in out.getvalue()
    bad = tmp_path / "bad.txt"
    bad.write_text("n1 0 d1 1\nn1 0 d1 0\n")
    with pytest.raises(CommandError, match="bad.txt:2:"):
        call_command("load_benchmark", "lib", "--qrels", str(bad), stdout=io.StringIO())
    assert Benchmark.objects.get(slug="lib").judgments.count() == 1


def test_load_benchmark_with_bad_judgments_leaves_no_benchmark(db, tmp_path):
    bad = tmp_path / "qrels.txt"
    bad.write_text("n1 0 d1 1\nn1 0 d1 x\n")
    with pytest.raises(CommandError, match="qrels.txt:2:"):
        call_command(
            "load_benchmark",
            "half",
            "--needs",
            str(DEMO / "needs.tsv"),
            "--qrels",
            str(bad),
            stdout=io.StringIO(),
        )
    assert not Benchmark.objects.filter(slug="half").exists()
    assert not InformationNeed.objects.filter(benchmark__slug="half").exists()


def test_load_benchmark_refused_after_its_judgments_leaves_no_file_behind(db):
    """The judgments file is stored before a later step (here the split) is refused and
    the benchmark rolled back: the file goes too, no orphan in the store or bucket."""
    from django.core.files.storage import default_storage

    with pytest.raises(CommandError, match="zz9"):
        call_command(
            "load_benchmark",
            "orphan",
            "--needs",
            str(DEMO / "needs.tsv"),
            "--qrels",
            str(DEMO / "qrels.txt"),
            "--private-needs",
            "zz9",
            stdout=io.StringIO(),
        )
    assert not Benchmark.objects.filter(slug="orphan").exists()
    assert not default_storage.exists("judgments/orphan") or not any(
        default_storage.listdir("judgments/orphan")
    )


def test_load_benchmark_names_a_missing_file_and_creates_nothing(db, tmp_path):
    missing = tmp_path / "no-such-qrels.txt"
    with pytest.raises(CommandError, match=f"--qrels {missing}: no such file"):
        call_command(
            "load_benchmark",
            "gone",
            "--needs",
            str(DEMO / "needs.tsv"),
            "--qrels",
            str(missing),
            stdout=io.StringIO(),
        )
    assert not Benchmark.objects.filter(slug="gone").exists()


def test_load_benchmark_title_updates_an_existing_benchmark(db):
    call_command("load_benchmark", "lib", "--title", "Library", stdout=io.StringIO())
    call_command("load_benchmark", "lib", "--title", "The Library", stdout=io.StringIO())
    assert Benchmark.objects.get(slug="lib").title == "The Library"
    call_command("load_benchmark", "lib", stdout=io.StringIO())  # no --title: kept
    assert Benchmark.objects.get(slug="lib").title == "The Library"


def test_load_benchmark_takes_the_primary_measure_in_either_name_system(db):
    call_command("load_benchmark", "dl", "--primary-measure", "nDCG@10", stdout=io.StringIO())
    assert Benchmark.objects.get(slug="dl").primary_measure == "ndcg_cut_10"
    with pytest.raises(CommandError, match="--primary-measure: .*nDGC@10"):
        call_command("load_benchmark", "dl2", "--primary-measure", "nDGC@10", stdout=io.StringIO())
    assert not Benchmark.objects.filter(slug="dl2").exists()


def test_score_pending_and_rescore(demo, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        call_command("rescore", "library", stdout=io.StringIO())
    assert set(demo.submissions.values_list("status", flat=True)) == {"queued"}
    out = io.StringIO()
    call_command("score_pending", stdout=out)
    assert set(demo.submissions.values_list("status", flat=True)) == {"scored"}
    assert out.getvalue().splitlines()[-1] == "2 queued runs processed"
    with pytest.raises(CommandError):
        call_command("rescore", "nope")


def test_load_demo_prints_one_line_per_benchmark_and_no_warning(
    db, django_capture_on_commit_callbacks, capfd, caplog
):
    # The engine's FewNeedsWarning came out as "comparing.py:99: FewNeedsWarning
    # ... rows = compare_one_against_many(", which reads like a traceback.
    import warnings

    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with django_capture_on_commit_callbacks(execute=True):
            call_command("load_demo", stdout=out, stderr=err)
    assert [str(w.message) for w in caught] == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= 30] == []
    printed = capfd.readouterr()
    assert printed.err == "" and err.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["library", "library-facts"]
    assert all("4 needs, 2 scored runs" in line for line in lines)
    assert "cannot reach p < 0.05" in lines[0]  # the few-needs fact, said once in words
    for text in (out.getvalue(), printed.out):
        assert "Warning" not in text and ".py:" not in text and "Traceback" not in text


def test_load_benchmark_sets_phases_limits_measures_and_final_runs(db):
    out = io.StringIO()
    call_command(
        "load_benchmark",
        "camp",
        "--needs",
        str(DEMO / "needs.tsv"),
        "--shown-measures",
        "P@10, map",
        "--tested-measures",
        "RR@10",
        "--daily-limit",
        "4",
        "--final-runs",
        "2",
        "--max-depth",
        "100",
        "--phase",
        "Dev,2026-12-01T00:00Z,2026-12-10T00:00Z",
        "--phase",
        "Test,2026-12-10T00:00,2026-12-20T12:00,daily_limit=2,final_runs=1,board=hidden",
        stdout=out,
    )
    camp = Benchmark.objects.get(slug="camp")
    assert (camp.shown_measures, camp.significance_measures) == (
        ["P_10", "map"],
        ["recip_rank_cut_10"],
    )
    assert (camp.daily_limit, camp.final_runs, camp.max_depth) == (4, 2, 100)
    dev, test = camp.phases.order_by("opens")
    assert (dev.name, dev.closes) == ("Dev", dt.datetime(2026, 12, 10, tzinfo=dt.UTC))
    assert (test.opens, test.closes) == (
        dt.datetime(2026, 12, 10, tzinfo=dt.UTC),  # no offset: UTC
        dt.datetime(2026, 12, 20, 12, tzinfo=dt.UTC),
    )
    assert (test.daily_limit, test.final_runs, test.board) == (2, 1, "hidden")
    assert "phase Test (2026-12-10 00:00 UTC to 2026-12-20 12:00 UTC)" in out.getvalue()
    # Again with a phase of the same name: it changes; the other stays.
    call_command(
        "load_benchmark", "camp", "--phase", "Test,2026-12-10,2026-12-21", stdout=io.StringIO()
    )
    assert camp.phases.get(name="Test").closes == dt.datetime(2026, 12, 21, tzinfo=dt.UTC)
    assert camp.phases.count() == 2


@pytest.mark.parametrize(
    "phase, message",
    [
        (
            "Late,2026-12-05T00:00Z,2026-12-30T00:00Z",
            "--phase Late: This phase overlaps the phase Dev",
        ),
        ("Back,2027-01-05T00:00Z,2027-01-01T00:00Z", "--phase Back: closes: A phase must close"),
        ("Bad,tomorrow,2027-01-01T00:00Z", "--phase Bad: opens: Enter a valid date/time"),
        ("Two,2027-01-05", "give NAME,OPENS,CLOSES"),
        ("Odd,2027-01-05,2027-01-06,colour=blue", "'colour=blue' is not FIELD=VALUE"),
    ],
)
def test_load_benchmark_refuses_a_bad_phase_and_stores_nothing(db, tmp_path, phase, message):
    with pytest.raises(CommandError, match=message):
        call_command(
            "load_benchmark",
            "camp",
            "--needs",
            str(DEMO / "needs.tsv"),
            "--phase",
            "Dev,2026-12-01T00:00Z,2026-12-10T00:00Z",
            "--phase",
            phase,
            stdout=io.StringIO(),
        )
    assert not Benchmark.objects.filter(slug="camp").exists()
    assert not InformationNeed.objects.exists()
