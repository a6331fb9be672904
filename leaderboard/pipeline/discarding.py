"""A deleted row's stored files go with it, off the request.

Connected when the app is ready (``discard_with_rows``): whichever way a row with files
goes (a ``delete()``, a QuerySet's, a cascade from its benchmark or its participant),
its files' names are held until the deletion commits, and then handed to the
``discard_files`` task (``tasks.send_discard``), which deletes those no row names any
more. A rolled-back deletion sends nothing. The request only sends: deleting a benchmark
with thousands of runs does not wait on the file store.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.core.files.storage import default_storage
from django.db import models, transaction
from django.db.models.signals import post_delete

from leaderboard.models import PendingUpload
from leaderboard.pipeline import files, tasks


def _row_deleted(sender, instance: models.Model, using: str, origin=None, **kwargs) -> None:
    """Hold the row's file names for ``tasks.send_discard`` until the deletion commits:
    sent then, after the whole cascade, and never when it is rolled back. The rows one
    ``delete()`` takes (``origin``) are sent together: their names join its callback
    while that is the transaction's last, in the same savepoints (so it runs, or is
    dropped, exactly as a new one would be)."""
    names = files.stored_names(instance)
    if not names:
        return
    connection = transaction.get_connection(using)
    if connection.in_atomic_block and connection.run_on_commit:
        savepoints, last, _ = connection.run_on_commit[-1]
        if (
            origin is not None
            and getattr(last, "origin", None) is origin
            and savepoints == set(connection.savepoint_ids)
        ):
            last.names.extend(names)
            return

    def discard_deleted_files() -> None:  # a function: Django logs a robust one by name
        tasks.send_discard(discard_deleted_files.names)

    discard_deleted_files.origin = origin
    discard_deleted_files.names = names
    transaction.on_commit(discard_deleted_files, using=using, robust=True)


def discard_with_rows() -> None:
    """Delete a row's stored files when the row is deleted, however, once the deletion
    commits and only those no other row names (``files.delete_unused``, in a task)."""
    for model, fields in files.holders():
        for name in fields:  # the task gets names alone: it deletes from the default storage
            if model._meta.get_field(name).storage is not default_storage:
                raise ImproperlyConfigured(
                    f"{model._meta.label}.{name}: not in the default storage"
                )
    for model in [PendingUpload, *(model for model, _ in files.holders())]:
        post_delete.connect(
            _row_deleted, sender=model, weak=False, dispatch_uid=f"discard-{model._meta.label}"
        )
