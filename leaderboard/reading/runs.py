"""One run's per-need table, as the run page shows it: the benchmark's own measures first."""

from __future__ import annotations

import pandas as pd

from leaderboard.models import Benchmark
from leaderboard.reading.boards import NEED_COLUMNS


def need_columns(benchmark: Benchmark, available) -> list[str]:
    """The per-need table's measures: the benchmark's primary, then its shown measures
    (``Benchmark.menu_measures``), then the seed's (AP, P@5, P@10, RR, Rprec, NumRel,
    NumRelRet); those the run has per-need values of, each once."""
    present = set(available)
    wanted = [*benchmark.menu_measures(), *NEED_COLUMNS]
    return [m for m in dict.fromkeys(wanted) if m in present]


def per_need_table(benchmark: Benchmark, frame: pd.DataFrame) -> tuple[list[str], pd.DataFrame]:
    """(columns, rows) of the run page's per-need table: ``need_columns`` of
    ``Result.per_need_frame()``, the needs sorted by the primary measure, best first,
    equal values in need id order (by need id alone when the run has no per-need values
    of the primary)."""
    columns = need_columns(benchmark, frame.columns)
    table = frame[columns].sort_index(kind="stable")
    primary = benchmark.menu_measures()[0]
    if primary in table.columns:
        table = table.sort_values(primary, ascending=False, kind="stable")
    return columns, table
