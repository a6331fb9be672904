"""A split campaign scored through the real pipeline, for the permission test of private
scores (tests/leaderboard/test_private_scores.py).

Twelve needs, four of them private; qrels and five runs of three participants drawn from
a fixed seed, written to files and scored by ``score_submission`` (every pair compared,
the health computed, as the workers do). ``secrets`` lists every number a reader who may
not see the private needs must never be shown: the private part's and the whole version's
summary values and the private needs' per-need values, as pages print them (four
decimals), as a CSV does (six) and as JSON writes them (``repr``), and the private
part's and whole version's tests and health to every digit, less any that a public
value also prints.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model

from evaluation.significance import PAIR_KEYS
from leaderboard.models import (
    Benchmark,
    BenchmarkHealth,
    Comparison,
    Profile,
    Result,
    Submission,
)
from leaderboard.pipeline import tasks
from leaderboard.pipeline.loading import load_judgments, load_needs
from tests.leaderboard.pipeline.test_tasks import make_run

NEEDS = [f"q{i:02d}" for i in range(1, 13)]
PRIVATE = ["q03", "q06", "q09", "q12"]
RUNS = {
    "alice": ["alice-bm25", "alice-dense"],
    "bob": ["bob-rm3", "bob-splade"],
    "carol": ["carol-lm"],
}
PRIMARY = "ndcg_cut_10"
SHOWN = ["map", "P_10", "recip_rank"]
REVEAL = dt.datetime(2031, 3, 1, 12, tzinfo=dt.UTC)
BEFORE = REVEAL - dt.timedelta(days=2)
AFTER = REVEAL + dt.timedelta(days=1)
DOCS = 40  # judged documents per need; as many unjudged ones are retrieved too


def qrels_text(rng: np.random.Generator) -> str:
    lines = []
    for need in NEEDS:
        grades = rng.choice([0, 1, 2], size=DOCS, p=[0.75, 0.2, 0.05])
        grades[rng.integers(DOCS)] = 2  # every need has a relevant document
        lines += [f"{need} 0 {need}-d{j:03d} {g}" for j, g in enumerate(grades)]
    return "\n".join(lines) + "\n"


def run_text(rng: np.random.Generator, name: str, grades: dict[str, np.ndarray]) -> str:
    """60 documents per need, scored by relevance times a run's skill plus noise."""
    skill = rng.uniform(0.2, 1.2)
    lines = []
    for need in NEEDS:
        docs = [f"{need}-d{j:03d}" for j in range(2 * DOCS)]
        gains = np.concatenate([grades[need], np.zeros(DOCS)])
        picked = rng.choice(2 * DOCS, size=60, replace=False)
        scores = gains[picked] * skill + rng.normal(0, 1.0, 60)
        order = np.argsort(-scores)
        for rank, i in enumerate(order, 1):
            lines.append(f"{need} Q0 {docs[picked[i]]} {rank} {scores[i]:.6f} {name}")
    return "\n".join(lines) + "\n"


@dataclass
class Campaign:
    benchmark: Benchmark
    users: dict[str, Any]
    runs: dict[str, Submission]
    secrets: dict[str, str] = field(default_factory=dict)  # text -> what it is
    mails: list = field(default_factory=list)
    media_root: str = ""  # where the runs' files are stored

    def run(self, name: str) -> Submission:
        return self.runs[name]

    def value(self, name: str, part: str, measure: str = PRIMARY) -> float:
        return Result.objects.get(
            submission=self.runs[name], judgments__part=part, judgments__version=1
        ).summary[measure]


def texts(value: float) -> tuple[str, ...]:
    """How a page (four decimals), a CSV (six) and a JSON answer (every digit) print
    ``value``."""
    return f"{value:.4f}", f"{value:.6f}", repr(float(value))


def is_score(column: str) -> bool:
    return not column.startswith("num_")


def numbers_in(data) -> Iterator[float]:
    """Every float in a stored JSON value (the health's statistics)."""
    if isinstance(data, dict):
        data = list(data.values())
    if isinstance(data, list):
        for item in data:
            yield from numbers_in(item)
    elif isinstance(data, float):
        yield data


def public_numbers(benchmark: Benchmark) -> Iterator[float]:
    """Every number the public part gives a page: its results, its runs' tests (raw and
    Holm-corrected p-values, intervals, effects) and its health."""
    part = benchmark.judgments.get(part="public")
    for result in Result.objects.filter(judgments=part):
        yield from result.summary.values()
        yield from result.per_need_frame().to_numpy().ravel().tolist()
    for comparison in Comparison.objects.filter(judgments=part):
        for key in PAIR_KEYS:
            value = getattr(comparison, key)
            if value is None:
                continue
            yield float(value)
            if key.endswith("_p"):
                yield from (min(1.0, value * k) for k in range(2, len(NEEDS)))
    for health in BenchmarkHealth.objects.filter(judgments=part):
        yield from numbers_in(health.data)


def collect_secrets(benchmark: Benchmark) -> dict[str, str]:
    """Text -> what it is: every stored score of the private part and the whole version
    as a CSV and JSON write it, and those of the board's measures as pages print them. Four
    decimals of every stored measure would be a quarter of all four-decimal numbers,
    bound to meet a p-value by chance; every digit is not."""
    shown = set(benchmark.menu_measures())
    public: set[str] = set()
    for value in public_numbers(benchmark):
        public.update(texts(value))
    hidden: dict[str, str] = {}

    def add(value: float, measure: str, what: str) -> None:
        page, csv, json = texts(value)
        if measure in shown:
            hidden[page] = what
        hidden[csv] = hidden[json] = what

    results = Result.objects.filter(judgments__benchmark=benchmark).exclude(
        judgments__part="public"
    )
    for result in results.select_related("judgments", "submission"):
        part, run = result.judgments.part or "whole", result.submission.run_name
        for measure, value in result.summary.items():
            if is_score(measure):
                add(value, measure, f"{run} {part} {measure}")
        frame = result.per_need_frame()
        for need, row in frame[frame.index.isin(PRIVATE)].iterrows():
            for measure, value in row.items():
                if is_score(measure):
                    add(value, measure, f"{run} {need} {measure}")
    # The private part's and the whole version's tests and health, every digit.
    for comparison in Comparison.objects.filter(judgments__benchmark=benchmark).exclude(
        judgments__part="public"
    ):
        for key in PAIR_KEYS:
            value = getattr(comparison, key)
            if isinstance(value, float) and len(repr(value)) > 8:
                hidden[repr(value)] = f"a test's {key} on {comparison.judgments.part or 'all'}"
    for health in BenchmarkHealth.objects.filter(benchmark=benchmark).exclude(
        judgments__part="public"
    ):
        for value in numbers_in(health.data):
            if len(repr(value)) > 8:
                hidden[repr(value)] = f"the health of {health.judgments.part or 'all'}"
    # A repr too short to be told from other digits (0.3, 1.0) is no evidence.
    return {t: what for t, what in hidden.items() if t not in public and len(t) >= 6}


def found_in(secrets: dict[str, str], text: str) -> list[str]:
    """The secrets ``text`` shows, each as a whole number (0.38333 is not 0.383333)."""
    numbers = set(re.findall(r"\d+\.\d+(?:e-?\d+)?", text))
    return [f"{t} ({what})" for t, what in secrets.items() if t in numbers]


def build(mailoutbox, capture) -> Campaign:
    """The campaign, scored before its reveal; ``capture`` is pytest-django's
    ``django_capture_on_commit_callbacks`` (the comparisons and the health run)."""
    rng = np.random.default_rng(20310301)
    users = get_user_model().objects
    people = {
        name: users.create_user(name, email=f"{name}@example.org", password=None)
        for name in ("alice", "bob", "carol", "eve", "olga")
    }
    for name, person in people.items():
        Profile.of(person)
        Profile.objects.filter(user=person).update(display_name=f"{name.title()} Q.")
    benchmark = Benchmark.objects.create(
        slug="split-campaign",
        title="Split Campaign",
        primary_measure=PRIMARY,
        shown_measures=SHOWN,
        significance_measures=["map"],
        daily_limit=10,
        reveal_at=REVEAL,
    )
    benchmark.organizers.add(people["olga"])
    needs = "".join(f"{need}\tinformation need {need}\n" for need in NEEDS)
    load_needs(benchmark, io.BytesIO(needs.encode()), "needs.tsv")
    qrels = qrels_text(rng)
    grades = {need: np.zeros(DOCS) for need in NEEDS}
    for line in qrels.splitlines():
        need, _, doc, grade = line.split()
        grades[need][int(doc.rsplit("-d", 1)[1])] = float(grade)
    load_judgments(benchmark, io.BytesIO(qrels.encode()), "qrels.txt")
    benchmark.refresh_from_db()
    assert benchmark.set_split(PRIVATE)
    runs = {}
    with capture(execute=True):
        for owner, names in RUNS.items():
            for name in names:
                run = make_run(benchmark, people[owner], name, run_text(rng, name, grades).encode())
                runs[name] = run
                assert tasks.score_submission.apply(args=[run.pk]).get() == "scored"
    benchmark.refresh_from_db()
    runs = {name: Submission.objects.get(pk=run.pk) for name, run in runs.items()}
    campaign = Campaign(benchmark, people, runs, collect_secrets(benchmark), list(mailoutbox))
    for name in runs:
        for measure in (PRIMARY, *SHOWN):
            public = campaign.value(name, "public", measure)
            assert campaign.value(name, "private", measure) != public, (name, measure)
            assert campaign.value(name, "", measure) != public, (name, measure)
    return campaign
