"""What the ``rrl`` commands print: tables, JSON, refusals (stdout for results, stderr
for what went wrong)."""

from __future__ import annotations

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
