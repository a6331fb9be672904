"""``rrl.Client``: the platform's API from Python, on ``httpx``.

>>> client = rrl.Client("https://leaderboard.example.org")      # doctest: +SKIP
>>> client.login("alice", "secret")                              # doctest: +SKIP
>>> run = client.submit("robust04", frame, name="bm25", wait=True)  # doctest: +SKIP
>>> run["summary"]["map"]                                        # doctest: +SKIP

- **Runs in any shape.** ``submit`` takes whatever :mod:`rrl.trec` takes (a TREC file,
  plain or gzip; a DataFrame; a ``{query: {doc: score}}`` dict; a ranx ``Run``; ir_measures
  ``ScoredDoc``s) and sends it as gzipped TREC text.
- **Straight to the bucket when the site has one.** ``submit`` first asks for a presigned
  upload (``POST /api/benchmarks/<slug>/uploads/``), PUTs the bytes there and confirms;
  a 501 (files on the site's disk), or a site without that route, falls back to the
  multipart submit (which answers a 404 for an unknown benchmark itself).
- **Safe to retry.** Each ``submit`` call makes one ``Idempotency-Key`` and sends it again
  on its retries (a connection error, a 502/503/504, a 409 "still being answered"), so
  a lost answer never makes a second run.
- **Errors carry the server's JSON.** Every refusal is an :class:`ApiError` with the
  status, the ``error`` message (``file:line: reason`` for a bad run file) and the
  ``details``; a 409 is a :class:`Conflict` whose ``existing`` names the run already
  there; a run that failed while being scored is :class:`RunFailed` (``wait=True``).

Over 400 lines: one method per endpoint a participant or organizer scripts (submit,
read, campaign, organizer), each a few lines on the one HTTP and retry core; splitting
the class by audience would split that core too.
"""

from __future__ import annotations

import io
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from rrl.trec import run_gzip

__all__ = ["ApiError", "Client", "Conflict", "RunFailed"]

RETRIED = {502, 503, 504}
DONE = {"scored", "failed", "withdrawn"}
CHUNK = 64 * 1024

# progress(stage, done, total): "upload" with bytes sent of the total, then the run's
# status while waiting ("queued", "running", then "scored" or "failed") with 0, 0.
Progress = Callable[[str, int, int], None]


class ApiError(Exception):
    """The server refused: ``status``, its ``error`` message and ``details``."""

    def __init__(self, status: int, error: str, details: dict | None = None) -> None:
        super().__init__(f"{status}: {error}")
        self.status, self.error, self.details = status, error, details or {}


class Conflict(ApiError):
    """A 409: a run with this name, or this very file, is already there (``existing``:
    its ``run_name`` and, when the caller may see it, its ``id`` and ``url``)."""

    @property
    def existing(self) -> dict:
        return self.details.get("existing", {})

    def __str__(self) -> str:
        url = self.existing.get("url")
        return f"{super().__str__()} (existing run: {url})" if url else super().__str__()


class RunFailed(Exception):
    """The run was stored but scoring failed; ``reason`` is ``file:line: reason``."""

    def __init__(self, run: dict) -> None:
        self.run = run
        self.reason = run.get("failure_reason") or "scoring failed"
        super().__init__(self.reason)


class Client:
    """The API at ``url`` (the site's address), with a token or anonymous."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.retries, self.backoff = retries, backoff
        self._direct = True  # until the site says it has no presigned uploads
        self._http = httpx.Client(
            base_url=self.url, timeout=timeout, transport=transport, follow_redirects=True
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- Logging in ----------------------------------------------------------------

    def login(self, username: str, password: str, name: str = "rrl") -> str:
        """A new token for ``username`` (``POST /api/tokens/``); the client uses it from now."""
        body = {"username": username, "password": password, "name": name}
        self.token = self._json("POST", "/api/tokens/", json=body)["token"]
        return self.token

    # --- Submitting ----------------------------------------------------------------

    def submit(
        self,
        benchmark: str,
        run: Any,
        *,
        name: str | None = None,
        description: str = "",
        wait: bool = False,
        poll: float = 1.0,
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> dict:
        """Submit ``run`` to ``benchmark`` (its slug); the run as the API answers it.

        ``name``: the run's name (and its tag for a run held in Python); by default the
        file's tag. ``wait``: poll until scored (``RunFailed`` if scoring failed, the
        scored run otherwise), for at most ``timeout`` seconds (``TimeoutError``).
        """
        tag = None if isinstance(run, str | bytes | os.PathLike) else name
        data = run_gzip(run, tag)
        file_name = _file_name(run, name)
        fields = {"description": description, **({"run_name": name} if name else {})}
        key = str(uuid.uuid4())  # one per call, reused by its retries
        created = self._presigned(benchmark, data, file_name, fields, key, progress)
        if created is None:
            created = self._multipart(benchmark, data, file_name, fields, key, progress)
        return self.wait(created["id"], poll, timeout, progress) if wait else created

    def _presigned(self, benchmark, data, file_name, fields, key, progress) -> dict | None:
        if not self._direct:
            return None
        try:
            upload = self._json(
                "POST",
                f"/api/benchmarks/{benchmark}/uploads/",
                json={"file_name": file_name, "size": len(data), **fields},
            )
        except ApiError as error:
            if error.status in (404, 405, 501):  # no bucket here, or a site without the route
                self._direct = error.status == 404  # a 404 may be the benchmark's alone
                return None
            raise
        self._retrying(
            lambda: self._check(
                httpx.request(
                    upload["method"],
                    upload["url"],
                    content=_chunks(data, progress),
                    headers=upload["headers"],
                    timeout=self._http.timeout,
                )
            ),
            key,
        )
        return self._json("POST", f"/api/uploads/{upload['token']}/confirm/")

    def _multipart(self, benchmark, data, file_name, fields, key, progress) -> dict:
        def send() -> httpx.Response:
            files = {"file": (file_name, _Reading(data, progress), "application/gzip")}
            return self._request(
                "POST",
                f"/api/benchmarks/{benchmark}/submissions/",
                data={k: v for k, v in fields.items() if v},
                files=files,
                headers={"Idempotency-Key": key},
                retry=False,
            )

        return self._retrying(send, key).json()

    def wait(
        self,
        run_id: int,
        poll: float = 1.0,
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> dict:
        """Poll the run until it is scored (returned) or failed (``RunFailed``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        while True:
            run = self.status(run_id)
            if progress and run["status"] != last:
                progress(run["status"], 0, 0)
            last = run["status"]
            if run["status"] == "failed":
                raise RunFailed(run)
            if run["status"] in DONE:
                return run
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} is still {run['status']} after {timeout} s")
            time.sleep(poll)

    # --- Reading -------------------------------------------------------------------

    def status(self, run_id: int) -> dict:
        """One run: its status, ``failure_reason`` and ``summary`` (every measure)."""
        return self._json("GET", f"/api/submissions/{int(run_id)}/")

    def runs(
        self, benchmark: str | None = None, status: str | None = None, mine: bool = True
    ) -> list[dict]:
        """The caller's runs (``mine=False``: every run the caller may see), newest first;
        every page."""
        params = {"mine": "true" if mine else "false", "page_size": "200"}
        params.update({k: v for k, v in (("benchmark", benchmark), ("status", status)) if v})
        found: list[dict] = []
        page: str | None = "/api/submissions/"
        while page:
            body = self._json("GET", page, params=params)
            found.extend(body["submissions"])
            page, params = body.get("next"), None  # "next" carries the query string
        return found

    def board(
        self,
        benchmark: str,
        measure: str | None = None,
        judgments: int | None = None,
        needs: str | None = None,
    ) -> dict:
        """The benchmark and its leaderboard (``["leaderboard"]["runs"]``, ranked), at the
        judgments version ``judgments`` (default: the current one) on ``needs`` ("public",
        "private" or "all"; default: what the board shows the caller)."""
        params = _measure(measure, judgments, needs)
        return self._json("GET", f"/api/benchmarks/{benchmark}/", params=params)

    def compare(
        self,
        benchmark: str,
        a: int,
        b: int,
        measure: str | None = None,
        judgments: int | None = None,
        needs: str | None = None,
    ) -> dict:
        """Two runs compared on ``measure`` (the benchmark's primary measure by default):
        per-need differences and the paired tests. A measure the runs have no per-need
        values of is an ``ApiError`` (400) whose ``details["measures"]`` lists theirs.
        ``judgments`` and ``needs`` as for ``board``."""
        path = f"/api/benchmarks/{benchmark}/compare/{int(a)}/{int(b)}/"
        return self._json("GET", path, params=_measure(measure, judgments, needs))

    def download(
        self, benchmark: str, format: str = "csv", path: str | os.PathLike | None = None
    ) -> Path:
        """The leaderboard as ``leaderboard.csv`` or ``.json``, written to ``path``."""
        if format not in ("csv", "json"):
            raise ValueError("format is 'csv' or 'json'")
        response = self._request("GET", f"/api/benchmarks/{benchmark}/leaderboard.{format}")
        target = Path(path if path is not None else f"{benchmark}-leaderboard.{format}")
        target.write_bytes(response.content)
        return target

    # --- Campaigns --------------------------------------------------------------------

    def final_runs(self, benchmark: str, phase: str | None = None) -> dict:
        """The caller's team's final runs (``["runs"]``, in priority order) in ``phase``
        (default: the phase open now)."""
        params = {"phase": phase} if phase else None
        return self._json("GET", f"/api/benchmarks/{benchmark}/final-runs/", params=params)

    def set_final_runs(self, benchmark: str, run_ids: list[int], phase: str | None = None) -> dict:
        """Mark ``run_ids`` (priority order) as the team's final runs; [] clears the marks."""
        body: dict[str, Any] = {"runs": [int(i) for i in run_ids]}
        if phase:
            body["phase"] = phase
        return self._json("PUT", f"/api/benchmarks/{benchmark}/final-runs/", json=body)

    def results(
        self,
        run_id: int,
        measure: str | None = None,
        judgments: int | None = None,
        needs: str | None = None,
    ) -> dict:
        """A run's per-need values beside the best, median and worst of the field
        (``judgments`` and ``needs`` as for ``board``)."""
        path = f"/api/submissions/{int(run_id)}/results/"
        return self._json("GET", path, params=_measure(measure, judgments, needs))

    # --- Organizers ---------------------------------------------------------------------

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

    # --- The owner's operations ------------------------------------------------------

    def withdraw(self, run_id: int) -> dict:
        """Withdraw one's own run, for good."""
        return self._json("POST", f"/api/submissions/{int(run_id)}/withdraw/")

    def hide(self, run_id: int, hidden: bool = True) -> dict:
        action = "hide" if hidden else "unhide"
        return self._json("POST", f"/api/submissions/{int(run_id)}/{action}/")

    def edit(self, run_id: int, **fields: str) -> dict:
        """Change ``description``, ``paper_url`` or ``code_url`` of one's own run."""
        return self._json("PATCH", f"/api/submissions/{int(run_id)}/", json=fields)

    # --- HTTP ---------------------------------------------------------------------

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._request(method, path, **kwargs).json()

    def _request(self, method: str, path: str, *, retry: bool = True, **kwargs) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"

        def send() -> httpx.Response:
            return self._check(self._http.request(method, path, headers=headers, **kwargs))

        return self._retrying(send) if retry and method in ("GET", "PATCH") else send()

    def _retrying(self, send: Callable[[], httpx.Response], key: str | None = None):
        """``send`` again after a connection error or a passing 5xx; with an idempotency
        ``key`` also after a 409 saying the first request is still being answered."""
        for attempt in range(self.retries + 1):
            try:
                return send()
            except (httpx.TransportError, ApiError) as error:
                again = isinstance(error, httpx.TransportError) or error.status in RETRIED
                if key and isinstance(error, ApiError) and error.status == 409:
                    again = "Idempotency-Key" in error.error
                if not again or attempt == self.retries:
                    raise
                time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")

    def _check(self, response: httpx.Response) -> httpx.Response:
        if response.is_success:
            return response
        try:
            body = response.json()
            error, details = body["error"], body.get("details", {})
        except (ValueError, KeyError, TypeError):
            error, details = response.text[:500] or response.reason_phrase, {}
        kind = Conflict if response.status_code == 409 else ApiError
        raise kind(response.status_code, error, details)


def _file_name(run: Any, name: str | None) -> str:
    if isinstance(run, str | os.PathLike):
        return os.path.basename(os.fspath(run)) or "run"
    return f"{name or 'run'}.txt.gz"


def _measure(measure: str | None, judgments: int | None = None, needs: str | None = None) -> dict:
    """The query of a reading: the measure, the judgments version and the needs asked."""
    asked = {"measure": measure, "judgments": judgments, "needs": needs}
    return {name: value for name, value in asked.items() if value}


def _chunks(data: bytes, progress: Progress | None) -> Iterator[bytes]:
    for start in range(0, len(data), CHUNK):
        chunk = data[start : start + CHUNK]
        yield chunk
        if progress:
            progress("upload", start + len(chunk), len(data))


class _Reading(io.BytesIO):
    """The bytes as a file that reports how much of it was read (sent)."""

    def __init__(self, data: bytes, progress: Progress | None) -> None:
        super().__init__(data)
        self.total, self.progress = len(data), progress

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        if self.progress and chunk:
            self.progress("upload", self.tell(), self.total)
        return chunk
