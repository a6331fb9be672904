"""Stored files: the storage layer between the platform and wherever files live.

Runs and judgments live in Django's default storage: ``MEDIA_ROOT`` on local disk, or an
S3-compatible bucket (django-storages) when ``AWS_STORAGE_BUCKET_NAME`` is set. Nothing
outside this module asks a stored file for its local path: readers get one from
``local_copy`` (the file itself on local disk; a temporary copy streamed from the
bucket, deleted afterwards, on failure too), writers go through ``save`` and
``discard``, and presigned uploads never confirmed are swept by
``discard_expired_uploads``. A deleted row's files (``pipeline/discarding.py``) go
through ``delete_unused``: those no row names any more are deleted, from a bucket a
thousand keys a request (``delete_files``). A file store that does not answer raises
``StorageUnavailable`` (worth retrying), a missing file ``FileNotFoundError`` (not
worth it).

Also here: the content hash that names a run or a judgments file, the hash of a file's
content once gunzipped (``content_sha256_of``), and the size a file may expand to (``MAX_UNCOMPRESSED_MB``), which every read of an uploaded file passes to
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
from django.core.files.storage import Storage, default_storage
from django.db import models
from django.db.models.fields.files import FieldFile
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

from evaluation.trec.sources import Decoded
from leaderboard.models import PendingUpload, Submission

log = logging.getLogger(__name__)

# What boto3 raises when the bucket does not answer or refuses (connection refused,
# timeouts, 5xx after botocore's own retries, access denied). A missing object is not
# among them: django-storages turns a 404 into FileNotFoundError.
STORE_ERRORS = (BotoCoreError, ClientError)
# The most keys one S3 DeleteObjects request takes.
DELETE_BATCH = 1000


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


def content_sha256_of(stream: BinaryIO, name: str) -> str:
    """SHA-256 (hex) of a seekable stream's content, gunzipped if it is gzipped: a file
    plain and gzipped (at any level) has one. Read from its start and rewound after;
    ``TrecFormatError`` naming ``name`` for broken gzip data or content past
    :func:`max_uncompressed_bytes`."""
    stream.seek(0)
    try:
        content = Decoded(stream, name, max_uncompressed_bytes())
        return sha256_of(iter(lambda: content.read(1 << 20), b""))[0]
    finally:
        stream.seek(0)


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


def holders() -> list[tuple[type[models.Model], list[str]]]:
    """Every model of the platform with stored files, and its ``FileField``s."""
    config = apps.get_app_config("leaderboard")
    return [(model, fields) for model in config.get_models() if (fields := _file_fields(model))]


def stored_names(row: models.Model) -> list[str]:
    """The stored files a row names, all in the default storage: each of its
    ``FileField``s that holds one, and a presigned upload's object."""
    if isinstance(row, PendingUpload):
        return [row.key] if row.key else []
    return [name for field in _file_fields(type(row)) if (name := getattr(row, field).name)]


def names_in_use(names: Iterable[str]) -> set[str]:
    """Those of ``names`` a row's ``FileField`` still holds: a judgments part holds its
    version's file, and a confirmed presigned upload's run the upload's object.

    A presigned upload's ``key`` holds nothing here: the upload's row outlives its run
    (its ``submission`` set to null), and must not keep the deleted run's object."""
    names = set(names)
    used: set[str] = set()
    for model, fields in holders():
        named = functools.reduce(
            lambda q, field: q | models.Q(**{f"{field}__in": names}), fields, models.Q()
        )
        for row in model._base_manager.filter(named).values_list(*fields):
            used.update(row)
    return used & names


def delete_files(storage: Storage, names: list[str]) -> None:
    """Delete these stored files; one already gone is no error.

    From a bucket in DeleteObjects requests of up to ``DELETE_BATCH`` keys (10,000 files
    are 10 requests, not 10,000); from any other storage one by one. Raises
    ``StorageUnavailable`` when the store does not answer (at once) or refused some
    files (once the rest were tried); those that went are gone, so trying all of them
    again deletes the rest.
    """
    refused: list[str] = []
    if isinstance(storage, S3Storage):
        for start in range(0, len(names), DELETE_BATCH):
            batch = names[start : start + DELETE_BATCH]
            # the keys as the storage's own delete() makes them (its location prefix)
            keys = [{"Key": storage._normalize_name(clean_name(name))} for name in batch]
            with unavailable_as_error(f"deleting {len(batch)} files"):
                answer = storage.bucket.delete_objects(Delete={"Objects": keys, "Quiet": True})
            refused += [f"{e['Key']} ({e.get('Code')})" for e in answer.get("Errors", [])]
    else:
        for name in names:
            try:
                storage.delete(name)
            except (*STORE_ERRORS, OSError) as error:
                refused.append(f"{name} ({error})")
    if refused:
        log.warning("file store: could not delete %s", _listed(refused))
        raise StorageUnavailable(f"the file store did not delete {len(refused)} files")


def delete_unused(names: list[str]) -> int:
    """Delete those of ``names`` (default storage) that no row names; how many.

    Checked here, just before the files go, not when their rows went: the name of a
    deleted run's presigned upload can become a run again (confirmed once more) until
    the object is gone. Raises ``StorageUnavailable`` as ``delete_files`` does."""
    used = names_in_use(names)
    unused = [name for name in dict.fromkeys(names) if name not in used]
    delete_files(default_storage, unused)
    return len(unused)


def discard_unused(names: list[str]) -> None:
    """``delete_unused``, best effort: a store that does not answer is logged."""
    try:
        delete_unused(names)
    except StorageUnavailable:
        log.warning(
            "file store: deleting %d files did not finish; the rest are orphans now", len(names)
        )


def _listed(names: list[str], shown: int = 20) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more
