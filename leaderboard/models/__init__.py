"""The platform's data: benchmarks, needs and judgments; runs, their results and the
comparisons between them; API tokens and idempotency keys. One module per group, re-exported here so that
``from leaderboard.models import Submission`` works everywhere.

- ``benchmarks``: ``Benchmark``, ``InformationNeed``, ``Judgments`` (versioned qrels).
- ``submissions``: ``Submission`` (a run and its status) and the run-name rules, put
  together from ``queueing`` (claim, lease, requeue, fail: the conditional updates the
  tasks rely on), ``visibility`` (who sees a run and its scores: ``visible_to``,
  ``scores_visible_to``; a run's owners are its participant and its team's members) and
  ``hiding`` (hiding a run and showing it again).
- ``results``: ``Result`` (scores per judgments version), ``MeasureVector``, ``Comparison``.
- ``tokens``: ``ApiToken``.
- ``health``: ``BenchmarkHealth`` (power, discriminative power, pool bias; stored JSON),
  ``PoolRanks`` (a result's judged documents and their ranks, for pool bias).
- ``idempotency``: ``IdempotencyKey`` (a submit's first answer, replayed to retries).
- ``people``: ``Profile`` (display name, team, run mail) and ``Team``.
- ``uploads``: ``PendingUpload`` (a presigned upload straight to the bucket).
- ``phases``: ``Phase`` (a campaign's dates and limits) and ``window`` (does it take a run now).
- ``pooling``: ``Pool`` (a pool for assessors: its runs, depth, statistics, export).
- ``finals``: ``final_runs`` (each team's final runs in priority order), ``set_final_runs``.

May import Django, numpy and pandas; nothing else of ``leaderboard`` (a model never
imports a task, a page or the pipeline: sending work to Celery belongs to
``leaderboard.pipeline``). Inside the package, modules import each other by their own
path (never through this ``__init__``), in one direction: results -> submissions <-
benchmarks, and submissions -> its mixins (``visibility`` -> people).
"""

from leaderboard.models.benchmarks import (
    TESTED_MEASURES,
    Benchmark,
    BenchmarkQuerySet,
    InformationNeed,
    Judgments,
    judgments_path,
)
from leaderboard.models.finals import FinalRun, final_runs, set_final_runs
from leaderboard.models.health import BenchmarkHealth, PoolRanks
from leaderboard.models.idempotency import IdempotencyKey
from leaderboard.models.people import Profile, Team
from leaderboard.models.phases import Phase, PhaseQuerySet, Window
from leaderboard.models.pooling import Pool
from leaderboard.models.results import (
    Comparison,
    ComparisonQuerySet,
    MeasureVector,
    Result,
    ResultQuerySet,
)
from leaderboard.models.submissions import (
    RUN_NAME_RE,
    Submission,
    SubmissionQuerySet,
    run_name_validator,
    submission_path,
    utc_day_start,
)
from leaderboard.models.tokens import ApiToken
from leaderboard.models.uploads import PendingUpload, PendingUploadQuerySet

__all__ = [
    "RUN_NAME_RE",
    "TESTED_MEASURES",
    "ApiToken",
    "Benchmark",
    "BenchmarkHealth",
    "BenchmarkQuerySet",
    "Comparison",
    "FinalRun",
    "IdempotencyKey",
    "ComparisonQuerySet",
    "InformationNeed",
    "PoolRanks",
    "Judgments",
    "MeasureVector",
    "PendingUpload",
    "PendingUploadQuerySet",
    "Phase",
    "PhaseQuerySet",
    "Pool",
    "Profile",
    "Result",
    "ResultQuerySet",
    "Submission",
    "SubmissionQuerySet",
    "Team",
    "final_runs",
    "judgments_path",  # 0001_initial names leaderboard.models.judgments_path
    "run_name_validator",
    "set_final_runs",
    "submission_path",  # and leaderboard.models.submission_path
    "utc_day_start",
    "Window",
]
