"""Settings come from the environment; production settings pass `check --deploy`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from leaderboard.environment import BASE_DIR, database_from_url
from tests import ROOT, image_environment


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_database_url_postgres_with_host_port_and_password():
    db = database_from_url("postgres://user:p%40ss@db.example:6543/leaderboard")
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "leaderboard",
        "user",
        "p@ss",
        "db.example",
        "6543",
    )


def test_database_url_postgres_socket_and_sqlite_paths():
    assert database_from_url("postgres:///lb?host=/run/postgresql")["HOST"] == "/run/postgresql"
    assert database_from_url("sqlite:///db.sqlite3")["NAME"] == str(BASE_DIR / "db.sqlite3")
    assert database_from_url("sqlite:////tmp/x.db")["NAME"] == "/tmp/x.db"


def test_unknown_database_scheme_is_refused():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="mysql"):
        database_from_url("mysql://root@localhost/x")


def test_the_settings_are_read_in_a_minute():
    """settings.py stays a list of settings: at most 300 lines, no function of its own
    (helpers and URL parsers live in leaderboard/environment.py)."""
    source = (ROOT / "leaderboard" / "settings.py").read_text()
    lines = source.count("\n")
    assert lines <= 300, f"leaderboard/settings.py has {lines} lines"
    assert not re.search(r"^(?:def|class) ", source, re.M), (
        "helpers go in leaderboard/environment.py"
    )


def test_production_settings_pass_check_deploy_without_warnings():
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY="k" * 20 + "-production-secret-for-tests-0123456789abcdef",
        ALLOWED_HOSTS="leaderboard.example.org",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_production_without_secret_key_refuses_to_start():
    result = run_manage("check", DEBUG="0", ALLOWED_HOSTS="example.org")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_without_allowed_hosts_refuses_to_start():
    """Not a site that starts and answers every request 400 (DisallowedHost)."""
    result = run_manage("check", DEBUG="0", SECRET_KEY="k" * 60, ALLOWED_HOSTS=" , ")
    assert result.returncode != 0
    assert "ImproperlyConfigured: ALLOWED_HOSTS must be set when DEBUG is off" in result.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"API_RATE_TOKEN": "lots"}, "API_RATE_TOKEN must be requests/period"),
        ({"API_RATE_LOGIN": "0/hour"}, "API_RATE_LOGIN must be requests/period"),
        ({"API_RATE_ANONYMOUS": "5/fortnight"}, "API_RATE_ANONYMOUS must be requests/period"),
        ({"IDEMPOTENCY_KEY_HOURS": "0"}, "IDEMPOTENCY_KEY_HOURS must be at least 1"),
    ],
)
def test_bad_api_rates_refuse_to_start(env, said):
    result = run_manage("check", **env)
    assert result.returncode != 0 and said in result.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"MAX_UPLOAD_MB": "0"}, "ImproperlyConfigured: MAX_UPLOAD_MB must be at least 1, got 0"),
        ({"UPLOAD_GRACE_SECONDS": "-300"}, "UPLOAD_GRACE_SECONDS must be at least 0, got -300"),
        ({"TRUSTED_PROXY_COUNT": "-1"}, "TRUSTED_PROXY_COUNT must be at least 0, got -1"),
        ({"SECURE_HSTS_SECONDS": "-1"}, "SECURE_HSTS_SECONDS must be at least 0, got -1"),
        ({"CONN_MAX_AGE": "-60"}, "CONN_MAX_AGE must be at least 0, got -60"),
        ({"SECURE_COOKIES": "ture"}, "SECURE_COOKIES must be 1, true, yes or on, or 0,"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL must be one of CRITICAL, ERROR, WARNING, INFO, DEBUG"),
    ],
)
def test_a_setting_out_of_its_range_refuses_to_start_naming_itself(env, said):
    """Not accepted (a negative grace closing phases early, a typo turning secure cookies
    off), nor refused under another name (MAX_UPLOAD_MB=0 was blamed on
    MAX_UNCOMPRESSED_MB), nor a bare "Unable to configure root logger"."""
    result = run_manage("check", **env)
    assert result.returncode != 0 and said in result.stderr, result.stderr[-500:]


def test_every_environment_variable_is_in_env_example():
    source = (ROOT / "leaderboard" / "settings.py").read_text()
    read = set(re.findall(r'(?:env_\w+|queue_name)\("([A-Z_]+)"', source))
    listed = set(re.findall(r"^([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read, "no settings found"
    assert read <= listed, f"missing from .env.example: {sorted(read - listed)}"


def test_the_blanks_of_env_example_take_the_documented_defaults():
    """``cp .env.example .env`` leaves ``STATIC_ROOT=``, ``MEDIA_ROOT=``, ``DATABASE_URL=``
    and ``CELERY_RESULT_BACKEND=`` blank (docker compose's ``env_file`` sets them to "").
    Blank is the default: not the working directory (whitenoise then served the whole
    project under /static/ and every page failed on the missing manifest), not a refused
    database URL, not a result backend left out."""
    env_file = (ROOT / ".env.example").read_text()
    env = dict(re.findall(r"^([A-Z_]+)=(.*)$", env_file, re.M))
    assert env["STATIC_ROOT"] == env["MEDIA_ROOT"] == env["DATABASE_URL"] == ""
    clean = {k: v for k, v in os.environ.items() if k not in env}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='leaderboard.settings';"
            " django.setup(); from django.conf import settings as s;"
            " print(s.STATIC_ROOT, s.MEDIA_ROOT, s.DATABASES['default']['NAME'],"
            " s.CELERY_RESULT_BACKEND)",
        ],
        cwd=ROOT,
        env={**clean, **env, "CELERY_BROKER_URL": "redis://redis:6379/0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == [
        str(BASE_DIR / "staticfiles"),
        str(BASE_DIR / "media"),
        str(BASE_DIR / "db.sqlite3"),
        "redis://redis:6379/0",
    ], result.stderr


def test_env_example_leaves_the_derived_defaults_blank():
    """Settings whose default follows another (2 x TASK_TIME_LIMIT, 4 x MAX_UPLOAD_MB)
    are blank in .env.example: a copy that pinned today's value would stop following
    TASK_TIME_LIMIT once the operator raised it."""
    env = dict(re.findall(r"^([A-Z_]+)=(.*)$", (ROOT / ".env.example").read_text(), re.M))
    derived = ("STUCK_AFTER_SECONDS", "CELERY_VISIBILITY_TIMEOUT", "MAX_UNCOMPRESSED_MB")
    assert {name: env[name] for name in derived} == dict.fromkeys(derived, "")


def test_the_production_steps_say_to_trust_the_tls_proxy():
    """docker-compose's web sits behind a TLS-terminating proxy: with .env.example's
    TRUST_X_FORWARDED_PROTO=0 and the HTTPS redirect on, every request came back as a
    redirect to itself. Each place that says what to set in .env says it."""
    for path in ("README.md", "docs/scaling.md", "docker-compose.yml"):
        text = (ROOT / path).read_text()
        steps = text[text.index("cp .env.example .env") :][:400]
        assert "TRUST_X_FORWARDED_PROTO=1" in steps, path


def test_without_a_broker_tasks_run_in_process():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='leaderboard.settings'; django.setup();"
            "from leaderboard.celery import app; print(app.conf.task_always_eager, app.conf.task_acks_late,"
            " app.conf.worker_prefetch_multiplier, app.conf.task_reject_on_worker_lost,"
            " app.conf.task_serializer, app.conf.broker_transport_options['visibility_timeout'] > app.conf.task_time_limit)",
        ],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == ["True", "True", "1", "True", "json", "True"], result.stderr


def test_docker_compose_describes_the_production_path():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "redis", "web", "worker"} <= set(services)
    assert services["postgres"]["image"].startswith("postgres")
    assert "healthcheck" in services["postgres"]
    assert any("/var/lib/postgresql/data" in v for v in services["postgres"]["volumes"])
    assert services["redis"]["image"].startswith("redis")
    web = services["web"]
    assert "migrate" in web["command"] and "gunicorn leaderboard.wsgi" in web["command"]
    worker = services["worker"]
    assert worker["command"][:4] == ["celery", "-A", "leaderboard", "worker"]
    for name in ("web", "worker"):
        service = services[name]
        assert service["env_file"] == ".env"
        assert service["environment"]["CELERY_BROKER_URL"].startswith("redis://redis")
        assert service["environment"]["DATABASE_URL"].startswith("postgres://")
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "ports" not in worker, "workers scale with --scale worker=N, so no fixed ports"
    assert "pgdata" in compose["volumes"]


def test_docker_compose_shares_files_through_minio_not_a_volume():
    """Web and workers may run on different hosts: files go through MinIO's bucket."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    minio = services["minio"]
    assert minio["image"].startswith("minio/minio")
    assert minio["command"][:2] == ["server", "/data"]
    assert "miniodata:/data" in minio["volumes"] and "miniodata" in compose["volumes"]
    assert "healthcheck" in minio
    bucket = services["bucket"]  # the one-shot that creates the bucket at start-up
    assert bucket["image"].startswith("minio/mc")
    assert bucket["depends_on"]["minio"]["condition"] == "service_healthy"
    assert "mc mb --ignore-existing" in " ".join(bucket["command"])
    assert bucket["restart"] == "no"
    for name in ("web", "worker", "beat"):
        service = services[name]
        assert not service.get("volumes"), f"{name} shares no media volume"
        env = service["environment"]
        assert "MEDIA_ROOT" not in env
        assert env["AWS_STORAGE_BUCKET_NAME"] and env["AWS_S3_ENDPOINT_URL"] == "http://minio:9000"
        assert env["AWS_ACCESS_KEY_ID"] and env["AWS_SECRET_ACCESS_KEY"]
        assert service["depends_on"]["bucket"]["condition"] == "service_completed_successfully"
    assert "media" not in compose["volumes"]


def test_celery_beat_runs_the_sweep_every_few_minutes(settings):
    from leaderboard.pipeline import tasks

    entry = settings.CELERY_BEAT_SCHEDULE["sweep-stuck-submissions"]
    assert entry["task"] == tasks.sweep_stuck.name
    assert 0 < entry["schedule"] <= 600


def test_celery_beat_runs_the_outbox_every_half_minute_or_less(settings):
    from leaderboard.pipeline import tasks

    entry = settings.CELERY_BEAT_SCHEDULE["send-unsent-submissions"]
    assert entry["task"] == tasks.send_unsent.name
    assert 0 < entry["schedule"] <= 30


def test_the_image_gives_its_processes_one_blas_thread_and_a_kept_heap():
    env = image_environment()
    assert env["OPENBLAS_NUM_THREADS"] == "1"
    assert env["ARROW_DEFAULT_MEMORY_POOL"] == "system"
    # glibc ignores a tunable it does not know without a word: ask its loader what it took
    loader = next(Path("/lib64").glob("ld-linux-*.so.2"))
    listed = subprocess.run(
        [str(loader), "--list-tunables"],
        env={"GLIBC_TUNABLES": env["GLIBC_TUNABLES"]},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    taken = dict(re.findall(r"^glibc\.malloc\.(\w+): (0x[0-9a-f]+|0)\b", listed, re.M))
    assert int(taken["mmap_max"], 16) == 0  # no array mapped apart from the heap
    assert int(taken["trim_threshold"], 16) >= 4 << 30  # a worker's largest run kept
    # docker compose runs the image: nothing there sets these otherwise
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        overridden = set(env) & set(service.get("environment") or {})
        assert not overridden, f"{name} overrides the image's {overridden}"


def test_docker_image_collects_static_files_with_production_settings():
    dockerfile = (ROOT / "Dockerfile").read_text()
    collect = next(line for line in dockerfile.splitlines() if "DEBUG=" in line)
    assert "DEBUG=0" in collect, "whitenoise's manifest storage needs collectstatic with DEBUG off"
    assert "collectstatic" in dockerfile
    assert ".venv" in (ROOT / ".dockerignore").read_text().split()


def test_docker_image_installs_every_package_of_the_project():
    """``pip install .`` in the image installs the packages present then: each package
    pyproject.toml names is copied in before it (rrl too: the engine reads runs held in
    Python through ``rrl.trec``, and the image's ``rrl`` script imports ``rrl.cli``)."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    before = dockerfile[: dockerfile.index("RUN pip install")]
    included = re.search(r"^include = \[(.*)\]", (ROOT / "pyproject.toml").read_text(), re.M)
    packages = [name.strip('" *') for name in included[1].split(",")]
    assert packages == ["evaluation", "leaderboard", "rrl"], packages
    missing = [name for name in packages if f"COPY {name} ./{name}" not in before]
    assert not missing, f"the Dockerfile installs the project without {missing}"


def test_collectstatic_with_production_settings_builds_the_manifest(tmp_path):
    result = run_manage(
        "collectstatic",
        "--noinput",
        DEBUG="0",
        SECRET_KEY="s" * 60,
        ALLOWED_HOSTS="example.org",
        STATIC_ROOT=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "staticfiles.json").exists()
    assert list(tmp_path.glob("css/site.*.css"))


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``python -c code`` from the project's root with exactly ``env``."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def celery_limits(**env: str) -> subprocess.CompletedProcess:
    """Import the settings in a fresh process with ``env``; print the Celery time limits."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='leaderboard.settings';"
            " django.setup(); from leaderboard.celery import app;"
            " print(app.conf.task_time_limit, app.conf.task_soft_time_limit)",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("limit", "soft"), [("1800", "1740"), ("600", "540"), ("60", "54"), ("10", "9")]
)
def test_the_soft_time_limit_comes_before_the_hard_one(limit, soft):
    result = celery_limits(TASK_TIME_LIMIT=limit)
    assert result.stdout.split() == [limit, soft], result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TASK_TIME_LIMIT": "9"}, "TASK_TIME_LIMIT must be at least 10 seconds, got 9"),
        ({"TASK_TIME_LIMIT": "0"}, "TASK_TIME_LIMIT must be at least 10 seconds, got 0"),
        ({"TASK_TIME_LIMIT": "-60"}, "TASK_TIME_LIMIT must be at least 10 seconds, got -60"),
        ({"TASK_TIME_LIMIT": "soon"}, "TASK_TIME_LIMIT must be an integer, got 'soon'"),
        ({"LEASE_SECONDS": "1"}, "LEASE_SECONDS must be at least 3 seconds, got 1"),
        ({"OUTBOX_INTERVAL_SECONDS": "0"}, "OUTBOX_INTERVAL_SECONDS must be at least 1, got 0"),
        ({"MAX_SCORING_ATTEMPTS": "0"}, "MAX_SCORING_ATTEMPTS must be at least 1, got 0"),
        (
            {"CELERY_SCORE_QUEUE": "jobs", "CELERY_COMPARE_QUEUE": "jobs"},
            "CELERY_SCORE_QUEUE and CELERY_COMPARE_QUEUE must differ (both 'jobs')",
        ),
        (
            {"CELERY_COMPARE_QUEUE": "a,b"},
            "CELERY_COMPARE_QUEUE must be a queue name of letters, digits and . _ : - "
            "(at most 100), got 'a,b'",
        ),
    ],
)
def test_bad_time_settings_refuse_to_start_with_a_clear_message(env, message):
    result = celery_limits(**env)
    assert result.returncode != 0
    assert f"ImproperlyConfigured: {message}" in result.stderr


def test_docker_compose_scales_workers_and_checks_health():
    """``--scale worker=N`` works (no fixed name or port on any worker); dedicated
    workers consume the score or the compare queue; web's healthcheck asks /health/,
    each worker's pings that worker."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert "/health/" in " ".join(services["web"]["healthcheck"]["test"])
    for name in ("worker", "score-worker", "compare-worker"):
        worker = services[name]
        assert "container_name" not in worker and "ports" not in worker, name
        assert "inspect ping -d celery@$$HOSTNAME" in worker["healthcheck"]["test"][-1]
    assert "-Q" not in services["worker"]["command"]  # every queue
    assert "-Q ${CELERY_SCORE_QUEUE:-score}," in services["score-worker"]["command"]
    assert "-Q ${CELERY_COMPARE_QUEUE:-compare}," in services["compare-worker"]["command"]
    assert services["score-worker"]["profiles"] == ["queues"]


def test_gunicorn_preloads_the_application_and_the_healthcheck_asks_from_loopback():
    """The web process loads the application before it forks (``--preload``) in both the
    image's command and docker compose's; the healthcheck asks /health/ from loopback,
    which gets the full check (broker, storage, workers)."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    web = services["web"]["command"]
    assert re.search(r"gunicorn leaderboard\.wsgi .*--preload", web), web
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = next(line for line in dockerfile.splitlines() if line.startswith("CMD "))
    assert cmd.startswith('CMD ["gunicorn", "leaderboard.wsgi"') and '"--preload"' in cmd
    assert "http://127.0.0.1:8000/health/" in services["web"]["healthcheck"]["test"][-1]


WARM_UP = """
import sys
import leaderboard.wsgi
from django.db import connections

loaded = set(sys.modules)
engine = __import__("django.template", fromlist=["engines"]).engines["django"].engine
cached = {key.split(":")[0] for key in engine.template_loaders[0].get_template_cache}

# What the first request would load: every view (the URLconf) and the pages' templates.
from django.template.loader import get_template
from django.urls import get_resolver
for pattern in get_resolver().url_patterns:
    pass
for name in leaderboard.wsgi.project_templates():
    get_template(name)
late = sorted(set(sys.modules) - loaded)
print("LATE", late)
print("CACHED", sorted(cached))
print("CONNECTED", any(c.connection is not None for c in connections.all()))
print("HAS", all(m in loaded for m in ("leaderboard.urls", "leaderboard.reading.boards",
      "leaderboard.api.views", "pandas", "scipy.stats", "rest_framework")))
"""


def test_importing_the_wsgi_module_loads_what_the_first_request_needs():
    """In a fresh process: after ``import leaderboard.wsgi`` the URLconf, every view and
    its libraries are imported and the pages' templates compiled, so resolving the URLs
    and loading the templates imports nothing more; and no database connection is open
    (gunicorn's --preload forks the workers from this process)."""
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DJANGO_SETTINGS_MODULE"}}
    result = subprocess.run(
        [sys.executable, "-c", WARM_UP],
        cwd=ROOT,
        env={**clean, "DEBUG": "0", "SECRET_KEY": "x" * 60, "ALLOWED_HOSTS": "localhost"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert lines["LATE"] == "[]"
    assert lines["HAS"] == "True"
    assert lines["CONNECTED"] == "False"
    pages = (
        "leaderboard/leaderboard.html",
        "leaderboard/submission.html",
        "base.html",
        "_status.html",
    )
    for page in pages:
        assert f"'{page}'" in lines["CACHED"], lines["CACHED"]


# --- Object storage --------------------------------------------------------


def storage_settings(**env: str) -> subprocess.CompletedProcess:
    """Import the settings in a fresh process with ``env``; print the default storage."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='leaderboard.settings';"
            " django.setup(); from django.core.files.storage import storages;"
            " s = storages['default']; print(type(s).__name__,"
            " getattr(s, 'bucket_name', '-'), getattr(s, 'endpoint_url', '-'))",
        ],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_a_bucket_files_stay_under_media_root():
    result = storage_settings()
    assert result.stdout.split() == ["FileSystemStorage", "-", "-"], result.stderr


def test_with_a_bucket_files_go_to_s3_through_django_storages():
    result = storage_settings(
        AWS_STORAGE_BUCKET_NAME="runs.example-org",
        AWS_S3_ENDPOINT_URL="http://minio:9000",
        AWS_ACCESS_KEY_ID="key",
        AWS_SECRET_ACCESS_KEY="secret",
    )
    assert result.stdout.split() == ["S3Storage", "runs.example-org", "http://minio:9000"], (
        result.stderr
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"AWS_STORAGE_BUCKET_NAME": "Runs_Bucket"},
            "AWS_STORAGE_BUCKET_NAME must be an S3 bucket name",
        ),
        (
            {"AWS_STORAGE_BUCKET_NAME": "runs", "AWS_S3_ENDPOINT_URL": "minio:9000"},
            "AWS_S3_ENDPOINT_URL must be an http(s) URL such as http://minio:9000, got 'minio:9000'",
        ),
        (
            {"AWS_STORAGE_BUCKET_NAME": "runs", "AWS_ACCESS_KEY_ID": "key"},
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together",
        ),
        ({"STORAGE_TIMEOUT_SECONDS": "0"}, "STORAGE_TIMEOUT_SECONDS must be at least 1 seconds"),
        ({"PRESIGNED_UPLOAD_SECONDS": "10"}, "PRESIGNED_UPLOAD_SECONDS must be at least 60"),
        ({"PRESIGNED_ENDPOINT_URL": "localhost:9000"}, "PRESIGNED_ENDPOINT_URL must be an http(s)"),
    ],
)
def test_bad_storage_settings_refuse_to_start_with_a_clear_message(env, message):
    result = storage_settings(**env)
    assert result.returncode != 0
    assert f"ImproperlyConfigured: {message}" in result.stderr


def test_the_web_process_builds_its_celery_tasks_when_it_starts():
    """leaderboard.wsgi finalizes the Celery app: the first upload's message does not."""
    result = run_python(
        "import leaderboard.wsgi; from leaderboard.celery import app;"
        " print(app.finalized, 'leaderboard.tasks.score_submission' in app.tasks)",
        {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    assert result.stdout.split() == ["True", "True"], result.stderr
