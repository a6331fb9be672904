"""The upload form: validates a run before anything is stored."""

from __future__ import annotations

import gzip
import os
from concurrent.futures import ThreadPoolExecutor

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from evaluation.trec import MAX_LINE_LENGTH, TrecFormatError, run_header
from leaderboard.models import RUN_NAME_RE, Benchmark, Submission, run_name_validator
from leaderboard.models.submissions import RUN_NAME_RULE
from leaderboard.pipeline.coverage import none_answered
from leaderboard.pipeline.files import sha256_of
from leaderboard.uploads.handlers import check_upload, keep_parsed, parsed_file


def max_upload_bytes() -> int:
    return settings.MAX_UPLOAD_MB * 1024 * 1024


def first_tag(upload: UploadedFile) -> str:
    """The TREC tag (6th column) of the first non-blank line, if it makes a valid run name
    (a header on line 1, ``qid Q0 docno rank score tag``, is not that line).

    Lines are read no longer than the engine allows one (the file has passed
    ``check_run_head``, but nothing here should hold more than a line).
    """
    upload.seek(0)
    stream = gzip.GzipFile(fileobj=upload) if upload.read(2) == b"\x1f\x8b" else upload
    upload.seek(0)
    try:
        for number in range(1, 1001):
            line = stream.readline(MAX_LINE_LENGTH + 2)
            if not line:
                break
            if number == 1 and run_header(line) is not None:
                continue
            fields = line.decode("utf-8", "replace").split()
            if fields:
                tag = fields[5] if len(fields) >= 6 else ""
                return tag if RUN_NAME_RE.match(tag) else ""
    except (OSError, EOFError):
        return ""
    finally:
        upload.seek(0)
    return ""


def _spooled_path(upload: UploadedFile) -> str | None:
    """The path of the file on this host's disk holding the upload's bytes (Django's
    temporary file for a large upload, a presigned upload's local copy), or None (held
    in memory)."""
    try:
        return upload.temporary_file_path()
    except AttributeError:
        name = getattr(getattr(upload, "file", None), "name", None)
        return name if isinstance(name, str) and os.path.isfile(name) else None


def sha256_of_path(path: str) -> tuple[str, int]:
    """:func:`~leaderboard.pipeline.files.sha256_of` a file on disk."""
    with open(path, "rb") as handle:
        return sha256_of(iter(lambda: handle.read(1 << 20), b""))


RUN_NAME_TAKEN = "run_name_taken"  # the error code the API answers with a 409


class SubmissionForm(forms.Form):
    file = forms.FileField(
        label="Run file",
        allow_empty_file=True,  # the engine's check says it: "run.txt:1: empty file"
        help_text="TREC format: need_id Q0 doc_id rank score tag. Plain text or gzip.",
    )
    run_name = forms.CharField(
        max_length=40,
        required=False,
        validators=[run_name_validator],
        help_text="Letters, digits, '.', '_' or '-'; at most 40. Defaults to the run's tag.",
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)

    def __init__(self, *args, benchmark: Benchmark, **kwargs):
        super().__init__(*args, **kwargs)
        self.benchmark = benchmark
        self.digest: tuple[str, int] | None = None  # (SHA-256, size) once clean_file hashed it

    def clean_file(self) -> UploadedFile:
        upload: UploadedFile = self.cleaned_data["file"]
        if upload.size > max_upload_bytes():
            raise forms.ValidationError(
                f"The file is {upload.size / 1048576:.1f} MB; the limit is {settings.MAX_UPLOAD_MB} MB."
            )
        name = os.path.basename(upload.name or "run")
        path = _spooled_path(upload)
        # Hashed and checked as it arrived (uploads.handlers.HashingUploadHandler), or
        # else here, from the spooled file or the bytes in memory:
        received = getattr(upload, "digest", None)
        check = getattr(upload, "check", None)
        if check is None:
            with ThreadPoolExecutor(1) as pool:
                # A file on disk is hashed from a handle of its own on another thread
                # (hashlib lets the GIL go) while the check reads it: the SHA-256 the run
                # is stored under, without a second pass after the check.
                hashing = pool.submit(sha256_of_path, path) if path and not received else None
                upload.seek(0)
                parsed = parsed_file()
                try:
                    check = check_upload(upload, name, parsed)
                finally:
                    upload.seek(0)
                keep_parsed(upload, parsed, check)
                received = received or (hashing.result() if hashing else None)
        if isinstance(check, TrecFormatError):
            raise forms.ValidationError(str(check)) from check
        self.digest = received
        # what the run will be scored against (none for a benchmark not saved yet)
        judgments = self.benchmark.latest_judgments if self.benchmark.pk else None
        judged = judgments.need_ids if judgments is not None else []
        if judged and check.need_ids.isdisjoint(judged):
            # every score would be 0: nothing to rank, and surely the wrong file
            raise forms.ValidationError(none_answered(name, judged))
        return upload

    def clean(self) -> dict:
        cleaned = super().clean()
        upload = cleaned.get("file")
        if upload is None or "run_name" in self.errors:
            return cleaned
        run_name = cleaned.get("run_name") or first_tag(upload)
        upload.seek(0)
        if not run_name:
            self.add_error(
                "run_name",
                f"Give the run a name: its tag is not a valid run name ({RUN_NAME_RULE}).",
            )
            return cleaned
        if Submission.objects.for_benchmark(self.benchmark).holding_name(run_name).exists():
            message = f"A run named {run_name!r} already exists on this benchmark."
            self.add_error("run_name", forms.ValidationError(message, code=RUN_NAME_TAKEN))
        cleaned["run_name"] = run_name
        return cleaned


# --- The owner's forms (leaderboard.uploads.owners) ------------------------------------

DESCRIPTION_MAX = 2000


class RunDetailsForm(forms.ModelForm):
    """What the owner may change on a run: its description and two links (web addresses
    only, checked by the model fields' validators)."""

    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        max_length=DESCRIPTION_MAX,
        help_text=f"The method and its settings; at most {DESCRIPTION_MAX} characters.",
    )
    # "example.org/paper" means https://; the model's validator then allows http(s) only.
    paper_url = forms.URLField(
        label="Paper URL",
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="A paper or preprint describing the run (an http or https address).",
    )
    code_url = forms.URLField(
        label="Code URL",
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="Where the code that produced the run lives (an http or https address).",
    )

    class Meta:
        model = Submission
        fields = ["description", "paper_url", "code_url"]


class ConfirmForm(forms.Form):
    """One required checkbox: the confirmation step of hiding, showing and withdrawing
    a run, which works without JavaScript (the browser will not send the form unchecked,
    and the server refuses it unchecked all the same)."""

    confirm = forms.BooleanField(required=True)

    def __init__(self, *args, label: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["confirm"].label = label
        self.fields["confirm"].error_messages["required"] = "Tick the box to confirm."
