"""What the ``rrl`` commands print: tables, JSON, refusals, a run's scores and warnings,
the campaign's phase, upload and scoring progress (stdout for results, stderr for what
went wrong and for progress)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any


def fail(message: str, code: int = 1) -> int:
    print(f"rrl: {message}", file=sys.stderr)
    return code


def print_table(header: tuple, rows: list[tuple]) -> None:
    cells = [tuple(str(c) for c in header), *[tuple(str(c) for c in row) for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def print_json(data: Any) -> int:
    print(json.dumps(data, indent=2))
    return 0


def _when(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp)


def utc(stamp: str) -> str:
    """An API time (ISO 8601) as a person reads it, in UTC to the minute."""
    return _when(stamp).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def phase_line(benchmark: dict, now: dt.datetime | None = None) -> str:
    """A campaign's phase: the open one (the server's ``current_phase``) and when it
    closes, else the next and when it opens, else the last and when it closed; empty
    on a benchmark without phases."""
    phases = benchmark.get("phases") or []
    current = next((p for p in phases if p["name"] == benchmark.get("current_phase")), None)
    if current is not None:
        return f"Phase {current['name']} is open until {utc(current['closes'])}."
    now = now or dt.datetime.now(dt.UTC)
    upcoming = [p for p in phases if _when(p["opens"]) > now]
    if upcoming:
        first = min(upcoming, key=lambda p: _when(p["opens"]))
        return f"Submissions are closed; phase {first['name']} opens at {utc(first['opens'])}."
    if phases:
        last = max(phases, key=lambda p: _when(p["closes"]))
        return f"Submissions are closed: phase {last['name']} closed at {utc(last['closes'])}."
    return ""


def print_phase(benchmark: dict) -> None:
    line = phase_line(benchmark)
    if line:
        print(line)


def judgments_line(version, needs) -> str:
    """Which judgments the scores below are on: "Judgments v2, public needs"."""
    if version is None:
        return "No judgments yet."
    return f"Judgments v{version}, {needs or 'all'} needs"


class Progress:
    """Upload and scoring progress on stderr, plain text."""

    def __init__(self) -> None:
        self.shown = -1

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "upload":
            percent = 100 * done // total if total else 100
            if percent != self.shown:
                self.shown = percent
                end = "\n" if done >= total else ""
                print(f"\ruploading: {percent:3d}% of {total:,} bytes", end=end, file=sys.stderr)
        else:
            print(f"scoring: {stage}", file=sys.stderr)
        sys.stderr.flush()


def number(value: Any) -> str:
    return "" if value is None else f"{value:.4f}"


def measure_label(answer: dict, measure: str) -> str:
    """The name the server's pages show for ``measure`` (``nDCG@10`` for ``ndcg_cut_10``):
    the answer's ``labels``; the name itself from a server that sends none."""
    return (answer.get("labels") or {}).get(measure, measure)


def print_summary(run: dict, measures: list[str]) -> None:
    summary = run.get("summary") or {}
    names = [m for m in dict.fromkeys(measures) if m in summary] or sorted(summary)
    labels = [measure_label(run, name) for name in names]
    width = max((len(label) for label in labels), default=0)
    for name, label in zip(names, labels, strict=True):
        print(f"  {label:<{width}}  {number(summary[name])}")


def print_warnings(run: dict) -> None:
    """Scoring's warnings (needs not answered, ranks past the depth): on stdout with the
    scores they qualify."""
    for warning in run.get("warnings") or []:
        print(f"warning: {warning}")
