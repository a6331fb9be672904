"""Migration 0005: existing benchmarks keep working, their primary measure canonicalised."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("leaderboard", "0005_benchmark_judged_threshold")]
AFTER = [("leaderboard", "0006_benchmark_measures")]


def test_existing_primary_measures_are_stored_as_catalog_columns():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("leaderboard", "Benchmark")
    for slug, measure in (("a", "ndcg@10"), ("b", "P.10"), ("c", "map"), ("d", "free text")):
        old.objects.create(slug=slug, title=slug, primary_measure=measure)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("leaderboard", "Benchmark")
    stored = dict(new.objects.values_list("slug", "primary_measure"))
    assert stored == {"a": "ndcg_cut_10", "b": "P_10", "c": "map", "d": "free text"}
    fields = new.objects.values_list("interpolation", "significance_measures")
    assert {(mode, tuple(tested)) for mode, tested in fields} == {("exact", ("map",))}
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # leave the schema as found
