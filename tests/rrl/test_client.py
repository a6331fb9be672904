"""``rrl.Client`` against a fake transport (``httpx.MockTransport``): retries reuse one
Idempotency-Key per call, errors carry the server's JSON, pages are followed. The real
server, worker and bucket are in tests/leaderboard/api/test_rrl_end_to_end.py."""

from __future__ import annotations

import gzip
import subprocess
import sys

import httpx
import pytest

import rrl
from rrl.client import ApiError, Client, Conflict


def client_for(handler) -> Client:
    return Client("http://lb.test", "rrl_t", transport=httpx.MockTransport(handler), backoff=0)


def test_importing_rrl_does_not_import_httpx():
    code = "import sys, rrl, rrl.trec; assert 'httpx' not in sys.modules; rrl.Client; assert 'httpx' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_submit_retried_after_a_lost_answer_sends_the_same_key_and_new_calls_new_ones():
    keys: list[str] = []
    asked_for_uploads: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/uploads/"):
            asked_for_uploads.append(1)
            return httpx.Response(501, json={"error": "post the file", "details": {}})
        keys.append(request.headers["Idempotency-Key"])
        assert request.headers["Authorization"] == "Bearer rrl_t"
        body = request.read()
        assert gzip.compress(b"x")[:2] in body  # gzipped TREC text was sent
        if len(keys) == 1:
            raise httpx.ReadTimeout("the answer was lost")
        if len(keys) == 2:
            return httpx.Response(503, json={"error": "store down", "details": {}})
        return httpx.Response(201, json={"id": 7, "status": "queued"})

    client = client_for(handler)
    assert client.submit("lib", {"q1": {"d1": 1.0}}, name="r1")["id"] == 7
    assert len(keys) == 3 and len(set(keys)) == 1
    client.submit("lib", {"q1": {"d1": 1.0}}, name="r2")
    assert len(set(keys)) == 2
    assert asked_for_uploads == [1]  # after a 501 the client posts files straight away


def test_a_lost_answer_when_asking_for_or_confirming_a_direct_upload_is_asked_again(
    monkeypatch,
):
    """Starting a presigned upload and confirming it are sent again after a lost answer
    (a confirmation sent twice gives the same run), as the form upload is."""
    calls: list[str] = []
    keys: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        calls.append(f"{request.method} {request.url.host}{path}")
        if path.endswith("/uploads/"):
            keys.append(request.headers.get("Idempotency-Key"))
        if path.endswith("/uploads/") and calls.count(calls[-1]) == 1:
            raise httpx.ReadTimeout("the answer was lost")
        if path.endswith("/uploads/"):
            return httpx.Response(
                201,
                json={"method": "PUT", "url": "http://bucket.test/k", "headers": {}, "token": "t1"},
            )
        if request.url.host == "bucket.test":
            return httpx.Response(200)
        if path == "/api/uploads/t1/confirm/" and calls.count(calls[-1]) == 1:
            raise httpx.ConnectError("reset")
        return httpx.Response(201, json={"id": 9, "status": "queued"})

    def put(method, url, *, content, headers, timeout):  # the PUT goes to the bucket itself
        return handler(httpx.Request(method, url, headers=headers, content=b"".join(content)))

    monkeypatch.setattr(httpx, "request", put)
    client = client_for(handler)
    assert client.submit("lib", {"q1": {"d1": 1.0}}, name="r1")["id"] == 9
    assert calls == [
        "POST lb.test/api/benchmarks/lib/uploads/",
        "POST lb.test/api/benchmarks/lib/uploads/",
        "PUT bucket.test/k",
        "POST lb.test/api/uploads/t1/confirm/",
        "POST lb.test/api/uploads/t1/confirm/",
    ]
    # the retried start carries the first one's key: the site answers the same upload
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]


def test_errors_carry_the_servers_json_and_a_409_names_the_existing_run():
    existing = {"run_name": "bm25", "id": 3, "url": "http://lb.test/api/submissions/3/"}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/uploads/"):
            return httpx.Response(501, json={"error": "post the file", "details": {}})
        # the name, not a stray "bad" in the random boundary or the gzipped bytes
        if b"\r\n\r\nrefused-by-the-server\r\n" in request.read():
            return httpx.Response(400, json={"error": "run.txt:2: 5 columns", "details": {}})
        return httpx.Response(
            409, json={"error": "already there", "details": {"existing": existing}}
        )

    client = client_for(handler)
    with pytest.raises(Conflict) as conflict:
        client.submit("lib", b"q1 Q0 d1 1 1.0 t\n")
    assert conflict.value.existing == existing and "api/submissions/3/" in str(conflict.value)
    with pytest.raises(ApiError) as refused:
        client.submit("lib", b"q1 Q0 d1 1 1.0 t\n", name="refused-by-the-server")
    assert refused.value.status == 400 and refused.value.error == "run.txt:2: 5 columns"


def test_runs_follows_next_pages():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("page") == "2":
            return httpx.Response(200, json={"count": 3, "next": None, "submissions": [{"id": 1}]})
        assert request.url.params["mine"] == "true" and request.url.params["status"] == "scored"
        next_page = "http://lb.test/api/submissions/?mine=true&page=2&status=scored"
        return httpx.Response(
            200, json={"count": 3, "next": next_page, "submissions": [{"id": 3}, {"id": 2}]}
        )

    assert [r["id"] for r in client_for(handler).runs(status="scored")] == [3, 2, 1]


def test_the_package_exports_the_client():
    assert rrl.Client is Client and rrl.Conflict is Conflict
    with pytest.raises(AttributeError):
        rrl.Nothing  # noqa: B018


def test_the_upload_is_gzip_at_the_clients_level_and_unpacks_to_the_run(tmp_path):
    """What the server receives: the run's TREC text, gzipped at ``GZIP_LEVEL`` (1, zlib's
    fastest: the gzip header says so in its XFL byte), not at gzip's default 9."""
    from rrl.trec import GZIP_LEVEL, run_text

    run = {f"q{i}": {f"doc-{i}-{j}": float(j) for j in range(500)} for i in range(20)}
    text = run_text(run, "bm25").encode()
    sent: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/uploads/"):
            return httpx.Response(501, json={"error": "post the file", "details": {}})
        boundary = request.headers["Content-Type"].split("boundary=")[1].encode()
        for part in request.read().split(b"--" + boundary):
            if b'name="file"' in part:
                sent.append(part.split(b"\r\n\r\n", 1)[1].removesuffix(b"\r\n"))
        return httpx.Response(201, json={"id": 7, "status": "queued"})

    client_for(handler).submit("lib", run, name="bm25")
    (packed,) = sent
    assert GZIP_LEVEL == 1
    assert gzip.decompress(packed) == text
    assert packed[8] == 4  # XFL: "compressor used the fastest algorithm"
    assert packed == gzip.compress(text, compresslevel=GZIP_LEVEL, mtime=0)
    assert len(packed) != len(gzip.compress(text, compresslevel=9, mtime=0))
