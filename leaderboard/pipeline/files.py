"""Stored files: the storage layer between the platform and wherever files live.

Runs and judgments live in Django's default storage: ``MEDIA_ROOT`` on local disk, or an
S3-compatible bucket (django-storages) when ``AWS_STORAGE_BUCKET_NAME`` is set. Nothing
outside this module asks a stored file for its local path: readers get one from
``local_copy`` (the file itself on local disk; a temporary copy streamed from the
bucket, deleted afterwards, on failure too), writers go through ``save`` and
``discard``, and presigned uploads never confirmed are swept by
``discard_expired_uploads``. A deleted row's files go with it (``discard_with_rows``):
once the deletion commits, each of them that no other row names is discarded. A file
store that does not answer raises ``StorageUnavailable`` (worth retrying), a missing
file ``FileNotFoundError`` (not worth it).

Also here: the content hash that names a run or a judgments file, and the size a file
may expand to (``MAX_UNCOMPRESSED_MB``), which every read of an uploaded file passes to
the engine's readers.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from botocore.exceptions import BotoCoreError, ClientError
from django.apps import apps
from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage
from django.db import models, transaction
from django.db.models.fields.files import FieldFile
from django.db.models.signals import post_delete

from leaderboard.models import PendingUpload, Submission

log = logging.getLogger(__name__)

# What boto3 raises when the bucket does not answer or refuses (connection refused,
# timeouts, 5xx after botocore's own retries, access denied). A missing object is not
# among them: django-storages turns a 404 into FileNotFoundError.
STORE_ERRORS = (BotoCoreError, ClientError)


class StorageUnavailable(Exception):
    """The file store did not answer or refused the request; nothing was stored.

    Not an ``OSError`` on purpose: a scoring task retries it (the store is likely back
    in a moment) instead of failing the run as it does for a bad or missing file.
    """


@contextlib.contextmanager
def unavailable_as_error(action: str) -> Iterator[None]:
    """Turn the object store's connection and service errors into ``StorageUnavailable``."""
    try:
        yield
    except STORE_ERRORS as error:
        log.warning("file store: %s failed: %s", action, error)
        raise StorageUnavailable(f"the file store did not answer ({action})") from error


def max_uncompressed_bytes() -> int:
    """The engine readers' ``max_bytes``: what a file may expand to once gunzipped."""
    return settings.MAX_UNCOMPRESSED_MB << 20


def sha256_of(chunks: Iterable[bytes]) -> tuple[str, int]:
    """SHA-256 (hex) and size in bytes of a file given as chunks."""
    digest = hashlib.sha256()
    size = 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def chunks_of(stream: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    """A seekable stream read in chunks from its start, and rewound after."""
    stream.seek(0)
    while chunk := stream.read(size):
        yield chunk
    stream.seek(0)


def _local_path(storage: Storage, name: str) -> str | None:
    """The file's own path when the storage keeps files on this host's disk, else None."""
    try:
        return storage.path(name)
    except NotImplementedError:  # a remote storage (S3) has no local path
        return None


def download(storage: Storage, name: str, into: BinaryIO) -> int:
    """Stream the stored file ``name`` into the binary file ``into``; its size in bytes.

    From a bucket, boto3 writes the object straight into ``into`` (in parallel ranges
    for a large one), never holding it in memory; from any other storage the file is
    copied a megabyte at a time.
    """
    with unavailable_as_error(f"reading {name}"), storage.open(name, "rb") as remote:
        obj = getattr(remote, "obj", None)  # django-storages' S3File: the boto3 object
        if obj is not None:
            obj.download_fileobj(into, Config=storage.transfer_config)
        else:
            shutil.copyfileobj(remote, into, 1 << 20)
    into.flush()
    size = into.tell()
    log.info("fetched %s from the file store (%d bytes)", name, size)
    return size


@contextlib.contextmanager
def local_copy(stored: FieldFile | tuple[Storage, str]) -> Iterator[str]:
    """A path on this host holding a stored file's bytes, for the engine's readers.

    On local disk that is the stored file itself (no copy). From a bucket, the file is
    streamed into a temporary file (in ``FILE_UPLOAD_TEMP_DIR`` or the system's), which
    is deleted when the block ends, whether it ends well or not. Raises
    ``FileNotFoundError`` for a file that is not there and ``StorageUnavailable`` when
    the store does not answer.
    """
    storage, name = (stored.storage, stored.name) if isinstance(stored, FieldFile) else stored
    path = _local_path(storage, name)
    if path is not None:
        yield path
        return
    suffix = ".gz" if name.lower().endswith(".gz") else ""
    with tempfile.NamedTemporaryFile(
        prefix="lb-fetch-", suffix=suffix, dir=settings.FILE_UPLOAD_TEMP_DIR
    ) as local:
        download(storage, name, local)
        yield local.name


def save(stored: FieldFile, name: str, content: File) -> None:
    """``stored.save(name, content, save=False)``; ``StorageUnavailable`` if the store
    does not answer (a partly sent multipart upload is aborted by boto3: nothing stays)."""
    with unavailable_as_error(f"storing {name}"):
        stored.save(name, content, save=False)


def discard(storage: Storage, name: str) -> None:
    """Delete a stored file, best effort: used to leave no orphan when what it belonged
    to was not stored after all; a store that does not answer is logged, not raised."""
    if not name:
        return
    try:
        storage.delete(name)
    except (*STORE_ERRORS, OSError) as error:
        log.warning("file store: could not delete %s (%s); it is an orphan now", name, error)


def discard_expired_uploads(now=None) -> int:
    """Delete every presigned upload never confirmed whose URL has expired: its object
    (if the client PUT one) and its row. Beat runs it hourly; returns how many."""
    expired = list(PendingUpload.objects.expired(now))
    storage = Submission._meta.get_field("file").storage
    for pending in expired:
        discard(storage, pending.key)
        pending.delete()
    if expired:
        log.info("discarded %d expired presigned uploads", len(expired))
    return len(expired)


def _file_fields(model: type[models.Model]) -> list[str]:
    return [f.name for f in model._meta.concrete_fields if isinstance(f, models.FileField)]


def _holders() -> list[tuple[type[models.Model], list[str]]]:
    """Every model of the platform with stored files, and its ``FileField``s."""
    config = apps.get_app_config("leaderboard")
    return [(model, fields) for model in config.get_models() if (fields := _file_fields(model))]


def stored_files(row: models.Model) -> list[tuple[Storage, str]]:
    """The stored files a row names: each of its ``FileField``s that holds one, and a
    presigned upload's object."""
    if isinstance(row, PendingUpload):
        return [(Submission._meta.get_field("file").storage, row.key)] if row.key else []
    return [
        (field.storage, getattr(row, field.name).name)
        for field in (row._meta.get_field(name) for name in _file_fields(type(row)))
        if getattr(row, field.name).name
    ]


def names_in_use(names: Iterable[str]) -> set[str]:
    """Those of ``names`` a row's ``FileField`` still holds: a judgments part holds its
    version's file, and a confirmed presigned upload's run the upload's object.

    A presigned upload's ``key`` holds nothing here: the upload's row outlives its run
    (its ``submission`` set to null), and must not keep the deleted run's object."""
    names = set(names)
    used: set[str] = set()
    for model, fields in _holders():
        named = functools.reduce(
            lambda q, field: q | models.Q(**{f"{field}__in": names}), fields, models.Q()
        )
        for row in model._base_manager.filter(named).values_list(*fields):
            used.update(row)
    return used & names


def discard_unused(files: list[tuple[Storage, str]]) -> None:
    """``discard`` each stored file that no row names any more."""
    used = names_in_use(name for _, name in files)
    for storage, name in files:
        if name not in used:
            discard(storage, name)


def _row_deleted(sender, instance: models.Model, using: str, origin=None, **kwargs) -> None:
    """Queue the row's files for ``discard_unused`` once the deletion commits: checked
    then, after the whole cascade (a judgments version's parts go with it), and never
    when it is rolled back. The rows one ``delete()`` takes (``origin``) are checked
    together: their files join its callback while that is the transaction's last, in
    the same savepoints (so it runs, or is dropped, exactly as a new one would be)."""
    files = stored_files(instance)
    if not files:
        return
    connection = transaction.get_connection(using)
    if connection.in_atomic_block and connection.run_on_commit:
        savepoints, last, _ = connection.run_on_commit[-1]
        if (
            origin is not None
            and getattr(last, "origin", None) is origin
            and savepoints == set(connection.savepoint_ids)
        ):
            last.files.extend(files)
            return

    def discard_deleted_files() -> None:  # a function: Django logs a robust one by name
        discard_unused(discard_deleted_files.files)

    discard_deleted_files.origin = origin
    discard_deleted_files.files = files
    transaction.on_commit(discard_deleted_files, using=using, robust=True)


def discard_with_rows() -> None:
    """Delete a row's stored files when the row is deleted, however (a ``delete()``, a
    QuerySet's, a cascade), once the deletion commits and only those no other row
    names; best effort (``discard``). Connected when the app is ready."""
    for model in [PendingUpload, *(model for model, _ in _holders())]:
        post_delete.connect(
            _row_deleted, sender=model, weak=False, dispatch_uid=f"discard-{model._meta.label}"
        )
