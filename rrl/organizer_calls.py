"""The organizers' endpoints of :class:`rrl.Client`: pools, the campaign's summary, the
public/private split, benchmarks and their phases, needs, judgments, rescoring.

Each needs a full token of an organizer of the benchmark (staff to create one); the
``rrl`` commands that call them are in :mod:`rrl.organizing`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from rrl.session import Session

__all__ = ["OrganizerCalls"]


class OrganizerCalls(Session):
    """The organizers' endpoints, on the HTTP core; :class:`rrl.Client` inherits them."""

    def build_pool(
        self, benchmark: str, depth: int, runs_per_team: int, phase: str | None = None
    ) -> dict:
        """Queue a pool of the final runs (organizers); the answer is the queued pool."""
        body: dict[str, Any] = {"depth": int(depth), "runs_per_team": int(runs_per_team)}
        if phase:
            body["phase"] = phase
        return self._json("POST", f"/api/benchmarks/{benchmark}/pools/", json=body)

    def pool(self, benchmark: str, pool_id: int | None = None) -> dict:
        """One pool (default: the newest), with its statistics once built."""
        if pool_id is None:
            pools = self._json("GET", f"/api/benchmarks/{benchmark}/pools/")
            if not pools:
                raise ValueError(f"{benchmark} has no pool yet")
            return pools[0]
        return self._json("GET", f"/api/benchmarks/{benchmark}/pools/{int(pool_id)}/")

    def wait_pool(self, benchmark: str, pool_id: int, timeout: float = 600, poll: float = 1):
        """The pool once built or failed."""
        deadline = time.monotonic() + timeout
        while True:
            pool = self.pool(benchmark, pool_id)
            if pool["status"] in ("built", "failed"):
                return pool
            if time.monotonic() > deadline:
                raise TimeoutError(f"pool {pool_id} is still {pool['status']}")
            time.sleep(poll)

    def summary(self, benchmark: str) -> dict:
        """Runs per team and participant, the latest pool, Judged@10/100 (organizers)."""
        return self._json("GET", f"/api/benchmarks/{benchmark}/summary/")

    def export_pool(
        self, benchmark: str, pool_id: int, path: str | os.PathLike | None = None
    ) -> Path:
        """The pool's pairs to judge (``need_id 0 doc_id -1`` lines), written to ``path``."""
        url = f"/api/benchmarks/{benchmark}/pools/{int(pool_id)}/export/"
        target = Path(path if path is not None else f"{benchmark}-pool-{int(pool_id)}.qrels")
        target.write_bytes(self._request("GET", url).content)
        return target

    def split(self, benchmark: str) -> dict:
        """The benchmark's private needs (``["private_needs"]``) and how they were drawn
        (organizers only: a 404 for anyone else)."""
        return self._json("GET", f"/api/benchmarks/{benchmark}/split/")

    def set_split(
        self,
        benchmark: str,
        private_needs: list[str] | None = None,
        *,
        fraction: float | None = None,
        seed: int | None = None,
    ) -> dict:
        """Set the private needs: listed (``[]`` clears the split), or ``fraction`` of the
        judged needs drawn with ``seed`` (drawn by the site when None, and stored)."""
        if (private_needs is None) == (fraction is None):
            raise ValueError("give either private_needs or fraction")
        body: dict[str, Any] = {}
        if private_needs is not None:
            body["private_needs"] = [str(need) for need in private_needs]
        else:
            body["fraction"] = float(fraction)
            if seed is not None:
                body["seed"] = int(seed)
        return self._json("PUT", f"/api/benchmarks/{benchmark}/split/", json=body)

    def create_benchmark(
        self, slug: str, title: str, *, ir_datasets: str | None = None, **fields: Any
    ) -> dict:
        """Create a benchmark (staff tokens only); with ``ir_datasets`` (an ir_datasets
        id) its queries become the needs and its qrels the judgments. ``fields``: the
        API's other benchmark fields (``primary_measure``, ``daily_limit``, ...)."""
        body = {"slug": slug, "title": title, **fields}
        if ir_datasets:
            body["ir_datasets"] = ir_datasets
        return self._json("POST", "/api/benchmarks/", json=body)

    def update_benchmark(self, slug: str, **fields: Any) -> dict:
        """Change a benchmark's settings (organizers): the API's field names (``title``,
        ``primary_measure``, ``shown_measures``, ``daily_limit``, ``open``, ...); the
        answer says how many runs were queued for ``rescoring`` and ``testing``."""
        return self._json("PATCH", f"/api/benchmarks/{slug}/", json=fields)

    def phases(self, benchmark: str) -> list[dict]:
        """The benchmark's phases with their ids, limits and board (organizers)."""
        return self._json("GET", f"/api/benchmarks/{benchmark}/phases/")

    def add_phase(self, benchmark: str, name: str, opens: str, closes: str, **fields) -> dict:
        """A new phase; ``opens`` and ``closes`` in ISO 8601 (UTC without an offset)."""
        body = {"name": name, "opens": opens, "closes": closes, **fields}
        return self._json("POST", f"/api/benchmarks/{benchmark}/phases/", json=body)

    def update_phase(self, benchmark: str, phase: str | int, **fields: Any) -> dict:
        """Change the phase named (or numbered) ``phase``; a field left out keeps its value."""
        path = f"/api/benchmarks/{benchmark}/phases/{self._phase_id(benchmark, phase)}/"
        return self._json("PATCH", path, json=fields)

    def delete_phase(self, benchmark: str, phase: str | int) -> None:
        path = f"/api/benchmarks/{benchmark}/phases/{self._phase_id(benchmark, phase)}/"
        self._request("DELETE", path)

    def _phase_id(self, benchmark: str, phase: str | int) -> int:
        if isinstance(phase, int):
            return phase
        for found in self.phases(benchmark):
            if found["name"] == phase:
                return found["id"]
        raise ValueError(f"{benchmark} has no phase named {phase}")

    def load_needs(self, benchmark: str, path: str | os.PathLike) -> dict:
        """Add or update the needs from a TSV or TREC topics file (plain or gzip)."""
        return self._upload(f"/api/benchmarks/{benchmark}/needs/", path, {})

    def load_judgments(self, benchmark: str, path: str | os.PathLike, note: str = "") -> dict:
        """A qrels file as the next judgments version: the answer's ``version``, and
        ``queued``, the runs queued for rescoring (``created`` false: the same file again)."""
        return self._upload(f"/api/benchmarks/{benchmark}/judgments/", path, {"note": note})

    def rescore(self, benchmark: str) -> dict:
        """Queue every live run for rescoring against the latest judgments."""
        return self._json("POST", f"/api/benchmarks/{benchmark}/rescore/")

    def _upload(self, url: str, path: str | os.PathLike, fields: dict) -> dict:
        name = os.path.basename(os.fspath(path))
        with open(path, "rb") as stream:
            files = {"file": (name, stream, "application/octet-stream")}
            return self._json("POST", url, data={k: v for k, v in fields.items() if v}, files=files)
