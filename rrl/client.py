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

The participants' endpoints are here; the organizers' (pools, the split, benchmarks,
phases, needs, judgments) in :mod:`rrl.organizer_calls`, and the HTTP and retry core
they share in :mod:`rrl.session`.
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

from rrl.organizer_calls import OrganizerCalls
from rrl.session import ApiError, Conflict
from rrl.trec import run_gzip

__all__ = ["ApiError", "Client", "Conflict", "RunFailed"]

DONE = {"scored", "failed", "withdrawn"}
CHUNK = 64 * 1024

# progress(stage, done, total): "upload" with bytes sent of the total, then the run's
# status while waiting ("queued", "running", then "scored" or "failed") with 0, 0.
Progress = Callable[[str, int, int], None]


class RunFailed(Exception):
    """The run was stored but scoring failed; ``reason`` is ``file:line: reason``."""

    def __init__(self, run: dict) -> None:
        self.run = run
        self.reason = run.get("failure_reason") or "scoring failed"
        super().__init__(self.reason)


class Client(OrganizerCalls):
    """The API at ``url`` (the site's address), with a token or anonymous: every endpoint a
    participant scripts, and the organizers' (:class:`~rrl.organizer_calls.OrganizerCalls`),
    on the HTTP core of :class:`~rrl.session.Session`."""

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

        started = f"{key}.start"  # a retry after a lost answer gets the same upload

        def start() -> httpx.Response:
            return self._request(
                "POST",
                f"/api/benchmarks/{benchmark}/uploads/",
                json={"file_name": file_name, "size": len(data), **fields},
                headers={"Idempotency-Key": started},
                retry=False,
            )

        try:
            upload = self._retrying(start, started).json()
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
        confirm = f"/api/uploads/{upload['token']}/confirm/"  # twice gives the same run
        return self._retrying(lambda: self._request("POST", confirm, retry=False)).json()

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
