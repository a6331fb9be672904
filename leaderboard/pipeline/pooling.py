"""Build a stored pool: read the phase's final runs, pool them with the engine, store the
statistics and the assessors' file (``leaderboard.models.pooling.Pool``).

The engine (:mod:`evaluation.pooling`) does the pooling; this module only loads what it
needs from the database and the file store and saves what it gives. A team is keyed by
the team's id (or, for a participant without a team, the user's), so two teams never
merge because of a name; the statistics carry the names the pages show.

The assessors' judgments come back through the usual path: an organizer uploads the
next judgments version (the admin's "Judgments" or ``POST /api/benchmarks/<slug>/judgments/``),
and every run is rescored against it.
"""

from __future__ import annotations

import logging

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from evaluation.pooling import PoolRun, assessor_file, assessor_pairs, build_pool, top_of
from leaderboard.models import Pool, final_runs
from leaderboard.pipeline.files import save
from leaderboard.pipeline.scoring import load_qrels, read_submission

log = logging.getLogger(__name__)


def build(pool: Pool, task_id: str) -> bool:
    """Build ``pool`` (claimed by ``task_id``) and store it; False when the task no longer
    holds it (nothing is stored then). Raises ``TrecFormatError`` for a run file that
    cannot be read and ``ValueError`` for settings the engine refuses."""
    finals = final_runs(pool.benchmark, pool.phase)
    runs, ids, names = [], {}, {}
    for final in finals:
        if final.priority > pool.runs_per_team:  # priorities are 1..N within each team
            continue
        key = f"{final.team[0]}:{final.team[1]}"
        names[key] = final.team_name
        run = final.submission
        ids[run.run_name] = run.pk
        whole = read_submission(run)
        # only its top depth is kept while the next run is read
        runs.append(PoolRun(run.run_name, key, final.priority, top_of(whole, pool.depth)))
    built = build_pool(runs, pool.depth, pool.runs_per_team)
    judgments = pool.benchmark.latest_judgments
    to_judge = assessor_pairs(built, load_qrels(judgments).frame if judgments else None, pool.seed)
    per_need = to_judge.groupby("need_id", sort=False).size()
    stats = {
        "runs_offered": len(finals),
        "pairs": len(built.pairs),
        "to_judge": len(to_judge),
        "needs": [
            {"need_id": need, "pool": int(size), "to_judge": int(per_need.get(need, 0))}
            for need, size in built.sizes.items()
        ],
        "runs": [
            {
                "id": ids[row.run],
                "run": row.run,
                "team": names[row.team],
                "priority": int(row.priority),
                "contributed": int(row.contributed),
                "unique": int(row.unique),
            }
            for row in built.runs.itertuples()
        ],
        "teams": [
            {
                "team": names[row.team],
                "runs": int(row.runs),
                "contributed": int(row.contributed),
                "unique": int(row.unique),
            }
            for row in built.teams.itertuples()
        ],
    }
    with transaction.atomic():
        held = Pool.objects.select_for_update().filter(
            pk=pool.pk, status=Pool.Status.RUNNING, task_id=task_id
        )
        if not held.exists():
            return False
        save(pool.file, pool.export_name(), ContentFile(assessor_file(to_judge)))
        held.update(
            status=Pool.Status.BUILT,
            stats=stats,
            judgments=judgments,
            file=pool.file.name,
            finished=timezone.now(),
        )
    log.info("pool %s: %d pairs, %d to judge", pool.pk, len(built.pairs), len(to_judge))
    return True


def fail(pool: Pool, task_id: str, reason: str) -> None:
    Pool.objects.filter(pk=pool.pk, status=Pool.Status.RUNNING, task_id=task_id).update(
        status=Pool.Status.FAILED, failure_reason=reason, finished=timezone.now()
    )
