"""Celery application.

With ``CELERY_BROKER_URL`` unset, settings turn on eager mode, so tasks run in-process
and the development site needs no broker at all.
"""

import os

from celery import Celery
from celery.signals import celeryd_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")

app = Celery("leaderboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Tasks live in leaderboard/pipeline/tasks.py (the background work), not leaderboard/tasks.py.
app.autodiscover_tasks(["leaderboard.pipeline"])


@celeryd_init.connect
def _workers_wait_out_a_hung_broker(conf, **kwargs) -> None:
    """No socket timeout on a worker's own broker connections (the connect timeout stays).

    The timeout keeps a web request from hanging on a hung Redis; a worker is better off
    waiting. kombu (5.7) forgets a message whose ack timed out without releasing its
    prefetch slot, so with a prefetch of one the worker would never fetch again; blocked
    instead, it acks and goes on once Redis answers. Its consumer connection is checked
    by kombu's own health check either way.
    """
    options = dict(conf.broker_transport_options or {})
    options.pop("socket_timeout", None)
    conf.broker_transport_options = options
