"""WSGI entry point (gunicorn leaderboard.wsgi, with ``--preload`` in the Dockerfile and
docker-compose.yml).

Everything a request needs is loaded here, when the process starts, not by the first
readers after a deploy: the Celery app finalized (its tasks built, which the first
upload's message would otherwise pay), every view with its libraries imported (the
URLconf: pandas, scipy, REST framework, the plots) and the project's templates compiled
into the cached loader. With ``--preload`` gunicorn does this once in its master and
forks the workers from it. Nothing here opens a database or broker connection, which a
forked worker must not share.
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
application = get_wsgi_application()

from django.conf import settings  # noqa: E402
from django.template.loader import get_template  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from leaderboard.celery import app as _celery  # noqa: E402

SUFFIXES = {".html", ".txt"}


def project_templates() -> list[str]:
    """Every template of the project's folder (pages, their includes and base.html:
    a page's parent and includes are only loaded when it is rendered)."""
    folder = settings.BASE_DIR / "templates"
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.suffix in SUFFIXES)


def warm_up() -> None:
    _celery.finalize(auto=True)
    get_resolver().url_patterns  # noqa: B018 (imports leaderboard.urls and every view)
    for name in project_templates():
        get_template(name)


warm_up()
