"""Celery application.

With ``CELERY_BROKER_URL`` unset, settings turn on eager mode, so tasks run in-process
and the development site needs no broker at all. ``route`` (settings' ``task_routes``)
puts scoring and comparing on queues of their own.
"""

import os

from celery import Celery
from celery.signals import celeryd_init
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")

app = Celery("leaderboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Tasks live in leaderboard/pipeline/tasks.py (the background work), not leaderboard/tasks.py.
app.autodiscover_tasks(["leaderboard.pipeline"])


# Which setting names each task's queue; anything else (beat's sweep and outbox) goes to
# the default queue, CELERY_QUEUE.
QUEUE_SETTINGS = {
    "leaderboard.tasks.score_submission": "CELERY_SCORE_QUEUE",
    "leaderboard.tasks.compare_submission": "CELERY_COMPARE_QUEUE",
    "leaderboard.tasks.compute_health": "CELERY_COMPARE_QUEUE",  # after comparing
    "leaderboard.tasks.split_results": "CELERY_COMPARE_QUEUE",  # stored results, no run file
}


def route(name: str, args, kwargs, options, task=None, **rest) -> dict | None:
    """Celery's router (settings' ``CELERY_TASK_ROUTES``): scoring to the score queue,
    comparisons to the compare queue, so that a run's comparison fan-out (one task per
    scored run, each testing it against every other run) never queues ahead of the next
    run's scoring. Read from the settings at each send (Celery caches its routes; the
    tests point each at a queue of their own). ``None``: the default queue."""
    setting = QUEUE_SETTINGS.get(name)
    return {"queue": getattr(settings, setting)} if setting else None


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
