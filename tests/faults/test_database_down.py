"""PostgreSQL stopped under a running site: every page, the API, uploads, a log-in and the
probe answer 503 (``Retry-After``, the message; JSON under /api/), never 500, and the log gets
one line per request; once it is back the same web process serves again. Before that,
the cache's Redis stopped: pages and the API still render.

The database and the Redis that get stopped are this test's own
(``tests/faults/services``), never the machine's shared ones; the site is gunicorn with
``DEBUG=0``, as in production.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import httpx
import psycopg
import pytest

from tests.faults.services import PostgresCluster, RedisServer, answers, wait_until
from tests.leaderboard.workers import ROOT, free_port

DEMO = ROOT / "leaderboard" / "demo"
RUN_B = (DEMO / "run-B.txt").read_bytes()
DOWN = "The site's database is not answering; try again in a few minutes."

SEED = textwrap.dedent(
    """
    import sys, django
    django.setup()
    from django.core.management import call_command
    from django.contrib.auth import get_user_model
    from django.test import Client
    from leaderboard.models import ApiToken, Benchmark
    from leaderboard.pipeline.loading import load_judgments, load_needs

    call_command("migrate", verbosity=0)
    demo = sys.argv[1]
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
    benchmark = Benchmark.objects.create(slug="library", title="Library")
    with open(f"{demo}/needs.tsv", "rb") as needs:
        load_needs(benchmark, needs, "needs.tsv")
    with open(f"{demo}/qrels.txt", "rb") as qrels:
        load_judgments(benchmark, qrels, "qrels.txt")
    client = Client()
    client.force_login(user)
    print(ApiToken.issue(user, "faults")[1], client.cookies["sessionid"].value)
    """
)

PAGES = ["/", "/benchmarks/library/", "/benchmarks/library/leaderboard.csv", "/accounts/runs/"]
API = ["/api/benchmarks/", "/api/benchmarks/library/", "/api/submissions/"]


def _csrf(page: httpx.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


@pytest.mark.long
def test_pages_api_and_uploads_answer_503_while_postgres_is_down(tmp_path):
    cluster = PostgresCluster()
    cache = RedisServer(tmp_path / "redis.log")
    web = None
    log_path = tmp_path / "web.log"
    try:
        cluster.start()
        cache.start()
        with psycopg.connect(cluster.url("postgres"), autocommit=True) as admin:
            admin.execute("CREATE DATABASE site")
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.faults.production_settings",
            "DEBUG": "0",
            "SECRET_KEY": "faults-" + "x" * 50,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_COOKIES": "0",
            "DATABASE_URL": cluster.url("site"),
            "CACHE_URL": cache.url,
            "CELERY_BROKER_URL": "",
            "MEDIA_ROOT": str(tmp_path / "media"),
            "HEALTH_CACHE_SECONDS": "0",
        }
        seed = subprocess.run(
            [sys.executable, "-c", SEED, str(DEMO)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert seed.returncode == 0, seed.stderr
        raw_token, session = seed.stdout.split()
        port = free_port()
        with open(log_path, "wb") as log:
            web = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "leaderboard.wsgi", "-w", "1",
                 "-b", f"127.0.0.1:{port}"],
                cwd=ROOT, env={**env, "CONN_MAX_AGE": "60"}, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        wait_until(lambda: answers(port), 30, "gunicorn to listen")
        site = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        token = {"Authorization": f"Bearer {raw_token}"}
        site.cookies.set("sessionid", session)
        for path in PAGES + API:
            assert site.get(path, headers=token).status_code == 200, path

        # The cache's Redis down: pages and the API render all the same.
        cache.stop()
        for path in PAGES + API:
            assert site.get(path, headers=token).status_code == 200, path
        form = site.get("/benchmarks/library/submit/")
        assert form.status_code == 200
        csrf = _csrf(form)
        cache.start()

        cluster.stop("fast")
        logged = log_path.stat().st_size
        for path in PAGES + ["/benchmarks/library/submit/", "/admin/"]:
            page = site.get(path)
            assert page.status_code == 503, (path, page.status_code)
            assert page.headers["Retry-After"] == "60"
            assert page.headers["Content-Type"].startswith("text/html")
            assert DOWN in page.text
        for path in API:
            api = site.get(path, headers=token)
            assert api.status_code == 503, (path, api.status_code)
            assert api.headers["Retry-After"] == "60"
            assert api.json() == {"error": DOWN, "details": {"retry_after": 60}}
        upload = site.post(
            "/benchmarks/library/submit/",
            data={"run_name": "form", "csrfmiddlewaretoken": csrf},
            files={"file": ("form.txt", RUN_B)},
        )
        assert upload.status_code == 503 and DOWN in upload.text
        api_upload = site.post(
            "/api/benchmarks/library/submissions/",
            data={"run_name": "api"},
            files={"file": ("api.txt", RUN_B)},
            headers=token,
        )
        assert api_upload.status_code == 503 and api_upload.json()["error"] == DOWN
        login = site.post(
            "/accounts/login/",
            data={"username": "alice", "password": "pw-alice-123", "csrfmiddlewaretoken": csrf},
        )
        assert login.status_code == 503 and DOWN in login.text
        # The probe says which service is down, to the public and to the operator alike.
        for headers in ({}, {"X-Forwarded-For": "203.0.113.9"}):
            probe = site.get("/health/", headers=headers)
            assert probe.status_code == 503
            assert probe.json()["status"] == "failing"
            assert probe.json()["checks"]["database"]["ok"] is False
        requests = len(PAGES) + 2 + len(API) + 3  # and the two uploads, the log-in
        with open(log_path, encoding="utf-8", errors="replace") as log:
            log.seek(logged)
            lines = log.read().splitlines()
        down = [line for line in lines if "the database is not answering" in line]
        assert len(down) == requests, lines
        assert all("Connection refused" in line for line in down), down
        assert not [line for line in lines if "Traceback" in line or "Internal Server" in line]
        print(f"\npostgres down, one line per request in the log: {down[0]}")

        cluster.start()  # the same web process, its persistent connection broken
        for path in PAGES + API:
            assert site.get(path, headers=token).status_code == 200, path
        upload = site.post(
            "/benchmarks/library/submit/",
            data={"run_name": "form", "csrfmiddlewaretoken": csrf},
            files={"file": ("form.txt", RUN_B)},
        )
        assert upload.status_code == 302
        assert re.fullmatch(r"/submissions/\d+/", upload.headers["Location"])
    finally:
        if web is not None and web.poll() is None:
            web.terminate()
            web.wait(timeout=20)
        cache.stop()
        cluster.remove()
