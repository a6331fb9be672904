"""The organizers' forms in the admin: a benchmark's settings, its measures from the
engine's catalog, its needs and judgments files (checked by the engine before anything
is stored) or an ir_datasets id (read, and downloaded on first use, when the form is
checked: :mod:`leaderboard.pipeline.datasets`), its co-organizers by exact username, and
its phases. The organizers' API validates with the same forms. The measure fields are
:mod:`leaderboard.admin_measures`'.
"""

from __future__ import annotations

import io
import os
import secrets
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.forms.models import model_to_dict

from evaluation.measures import resolve
from evaluation.trec import TrecFormatError, read_needs, read_qrels
from leaderboard.admin_measures import MeasureListField, catalog_column, testable
from leaderboard.models import Benchmark, Phase
from leaderboard.models.splits import checked_private, draw_private
from leaderboard.pipeline.datasets import DatasetError, dataset_files
from leaderboard.pipeline.files import max_uncompressed_bytes
from leaderboard.pipeline.loading import check_version, unchanged
from leaderboard.pipeline.scoring import load_qrels


class BenchmarkForm(forms.ModelForm):
    shown_measures = MeasureListField(
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="The leaderboard's columns besides the primary measure, separated by commas, "
        "in either name system: nDCG@10, RR@10, P@10 or ndcg_cut_10, recip_rank_cut_10, P_10.",
    )
    significance_measures = MeasureListField(
        label="Tested measures",
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="Measures every pair of runs is tested on besides the primary measure "
        "(default AP). Changing them queues the missing tests at once.",
    )
    # an empty file is the reader's to refuse, by name ("qrels.txt:1: empty file")
    needs_file = forms.FileField(
        required=False,
        allow_empty_file=True,
        help_text="TSV need_id<TAB>title[<TAB>description] or TREC topics; gzip ok.",
    )
    qrels_file = forms.FileField(
        required=False,
        allow_empty_file=True,
        help_text="need_id iteration doc_id relevance. Each upload is a new judgments version; "
        "every run is rescored and the leaderboard switches when all are done.",
    )
    ir_datasets_id = forms.CharField(
        label="ir_datasets id",
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="Instead of the two files: a dataset of ir_datasets, e.g. "
        "msmarco-passage/trec-dl-2019/judged. Its queries become the needs, its qrels "
        "the next judgments version. A first use downloads it, which can take a while: "
        "for large ones use manage.py load_benchmark --ir-datasets.",
    )

    judged_threshold = forms.FloatField(
        label="Judged@10 threshold",
        required=False,  # left empty: the default
        min_value=0.0,
        max_value=1.0,
        initial=Benchmark._meta.get_field("judged_threshold").default,
        help_text=Benchmark._meta.get_field("judged_threshold").help_text,
    )

    pool_depth = forms.IntegerField(
        label="Pool depth",
        required=False,  # left empty (or not posted): kept as it is, 100 on a new benchmark
        min_value=1,
        initial=Benchmark._meta.get_field("pool_depth").default,
        help_text=Benchmark._meta.get_field("pool_depth").help_text,
    )

    private_need_ids = forms.CharField(
        label="Private needs",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Need ids of the latest judgments whose scores stay hidden until the "
        "reveal, separated by commas or spaces; at least one need stays public. Empty: no "
        "split. Runs already scored get their public and private scores in the background.",
    )
    draw_fraction = forms.FloatField(
        label="Or draw a fraction",
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Instead of listing them: this share of the judged needs drawn as private "
        "with the seed below (the list above is then what was drawn).",
    )
    draw_seed = forms.IntegerField(
        label="Seed of the draw",
        required=False,
        min_value=0,
        max_value=2**63 - 1,
        help_text="Empty: one is drawn and kept, so the split can be drawn again.",
    )

    class Meta:
        model = Benchmark
        fields = [
            "slug",
            "title",
            "description",
            "rules",
            "data_description",
            "primary_measure",
            "shown_measures",
            "significance_measures",
            "interpolation",
            "relevance_level",
            "max_depth",
            "judged_threshold",
            "pool_depth",
            "is_open",
            "daily_limit",
            "final_runs",
            "published",
            "final_needs",
            "reveal_at",
            "anonymous",
            "organizers",
        ]

    def _validate(self, field: str, reader):
        """The uploaded file of ``field`` as ``reader`` reads it, or None (no file, or a
        form error naming its line)."""
        upload = self.cleaned_data.get(field)
        if not upload:
            return None
        try:
            return reader(
                upload, name=os.path.basename(upload.name), max_bytes=max_uncompressed_bytes()
            )
        except TrecFormatError as error:
            self.add_error(field, str(error))
            return None
        finally:
            upload.seek(0)

    def _check_judgments(self, field: str, stream, name: str, needs, qrels) -> None:
        """``loading.check_version`` on the judgments about to be loaded, against the
        benchmark as this post leaves it (its needs with those of the needs file, its
        relevance level, its split), so that a refused file is a form error at its line and
        nothing of the post is saved. The latest version's judgments again
        (``loading.unchanged``) are loaded as nothing: not checked."""
        instance = self.instance
        latest = instance.latest_judgments if instance.pk else None
        if unchanged(latest, stream, name, judged=len(qrels)):
            return
        titled = dict(instance.needs.values_list("need_id", "title")) if instance.pk else {}
        if needs is not None:
            titled.update(
                zip(needs["need_id"].astype(str), needs["title"].astype(str), strict=True)
            )
        split = self.cleaned_data.get("split")
        if split is None:
            private = instance.private_needs or []
        elif split[0] is not None:
            private = split[0]
        else:
            private = draw_private(latest.need_ids, split[1], split[2])
        try:
            check_version(
                qrels,
                stream,
                name,
                needs=titled,
                private_needs=private,
                relevance_level=self.cleaned_data["relevance_level"],
                title=self.cleaned_data["title"],
            )
        except TrecFormatError as error:
            self.add_error(field, str(error))

    def _check_level(self, level: int) -> None:
        """A level no judgment of the latest version reaches: every run would score 0."""
        latest = self.instance.latest_judgments if self.instance.pk else None
        grades = load_qrels(latest).relevance if latest is not None else []
        if len(grades) and grades.max() < level:
            highest, version = grades.max(), latest.version
            message = f"No judgment of v{version} reaches {level} (the highest is {highest})"
            self.add_error("relevance_level", f"{message}: every run would score 0.")

    def clean_judged_threshold(self) -> float:
        value = self.cleaned_data.get("judged_threshold")
        return Benchmark._meta.get_field("judged_threshold").default if value is None else value

    def clean_pool_depth(self) -> int:
        value = self.cleaned_data.get("pool_depth")
        return self.instance.pool_depth if value is None else value

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["interpolation"].required = False
        self.fields["final_runs"].required = False
        self.fields["final_needs"].required = False
        self.fields["private_need_ids"].initial = ", ".join(self.instance.private_needs or [])
        self.fields["draw_fraction"].initial = self.instance.split_fraction
        self.fields["draw_seed"].initial = self.instance.split_seed

    def clean_final_needs(self) -> str:
        return self._kept("final_needs")

    def _clean_split(self, cleaned: dict) -> None:
        """``cleaned["split"]``: the arguments of ``Benchmark.set_split`` when the split
        fields changed (checked here against the latest judgments), else absent."""
        changed = set(self.changed_data)
        drawn = {"draw_fraction", "draw_seed"} & changed and cleaned.get("draw_fraction")
        if not drawn and "private_need_ids" not in changed:
            return
        latest = self.instance.latest_judgments if self.instance.pk else None
        needs = latest.need_ids if latest else []
        try:
            if drawn:
                if latest is None:
                    raise forms.ValidationError("Load judgments first: there is nothing to draw.")
                # drawn here when not given, so the judgments check sees the split saved
                seed = cleaned.get("draw_seed")
                seed = secrets.randbelow(2**63) if seed is None else seed
                draw_private(needs, cleaned["draw_fraction"], seed)
                cleaned["split"] = (None, cleaned["draw_fraction"], seed)
            else:
                ids = (cleaned.get("private_need_ids") or "").replace(",", " ").split()
                if ids and latest is None:
                    raise forms.ValidationError("Load judgments first: their needs are not known.")
                cleaned["split"] = (checked_private(needs, ids), None, None)
        except forms.ValidationError as error:
            field = "draw_fraction" if drawn else "private_need_ids"
            self.add_error(field, error.messages)

    def clean_final_runs(self) -> int:
        return self._kept("final_runs")

    def _kept(self, field: str):
        """The posted value, or the stored one (the default on a new benchmark) when the
        field was not posted: forms posted before the field existed change nothing."""
        value = self.cleaned_data.get(field)
        if value is None or value == "":
            return getattr(self.instance, field)
        return value

    def clean_shown_measures(self) -> list[str]:
        return self._kept("shown_measures")

    def clean_significance_measures(self) -> list[str]:
        kept = self._kept("significance_measures")
        untestable = [m for m in kept or () if not testable(m)]
        if untestable:
            raise forms.ValidationError(
                f"Not testable: {', '.join(untestable)} (a count, or no per-need values to "
                "pair); test runs on scores such as AP, P@10, nDCG@10."
            )
        return kept

    def clean_interpolation(self) -> str:
        return self._kept("interpolation")

    def clean_primary_measure(self) -> str:
        column = catalog_column(self.cleaned_data["primary_measure"])
        if resolve(column).is_count:
            raise forms.ValidationError(
                f"“{column}” is a count, not a score to rank runs by; choose a measure such "
                "as AP, P@10 or nDCG@10."
            )
        return column

    def clean(self) -> dict:
        cleaned = super().clean()
        needs = self._validate("needs_file", read_needs)
        qrels = self._validate("qrels_file", read_qrels)
        self._clean_split(cleaned)
        dataset_id = (cleaned.get("ir_datasets_id") or "").strip()
        if dataset_id and (cleaned.get("needs_file") or cleaned.get("qrels_file")):
            self.add_error("ir_datasets_id", "Give either an ir_datasets id or files, not both.")
        elif dataset_id and not self.errors:
            try:
                cleaned["ir_datasets_files"] = dataset_files(dataset_id)
            except DatasetError as error:
                self.add_error("ir_datasets_id", str(error))
        if qrels is not None and not self.errors:
            upload = cleaned["qrels_file"]
            self._check_judgments("qrels_file", upload, os.path.basename(upload.name), needs, qrels)
        elif not dataset_id and "relevance_level" in self.changed_data and not self.errors:
            self._check_level(cleaned["relevance_level"])
        files = cleaned.get("ir_datasets_files")
        if files is not None:
            limit = max_uncompressed_bytes()
            try:
                needs = read_needs(files.needs, name=files.needs_name, max_bytes=limit)
                qrels = read_qrels(files.qrels, name=files.qrels_name, max_bytes=limit)
            except TrecFormatError as error:
                self.add_error("ir_datasets_id", str(error))
            else:
                stream = io.BytesIO(files.qrels)
                self._check_judgments("ir_datasets_id", stream, files.qrels_name, needs, qrels)
        return cleaned


class OrganizerBenchmarkForm(BenchmarkForm):
    """The benchmark form an organizer gets: co-organizers by exact username instead of a
    list of every user of the site."""

    co_organizers = forms.CharField(
        required=False,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="Usernames of the benchmark's organizers, separated by commas or spaces, "
        "spelt exactly. You stay one. They need staff status to use the admin.",
    )

    class Meta(BenchmarkForm.Meta):
        fields = [name for name in BenchmarkForm.Meta.fields if name != "organizers"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            names = self.instance.organizers.order_by("username").values_list("username", flat=True)
            self.fields["co_organizers"].initial = ", ".join(names)

    def clean_co_organizers(self) -> list:
        names = list(dict.fromkeys(self.cleaned_data["co_organizers"].replace(",", " ").split()))
        users = list(get_user_model().objects.filter(username__in=names, is_active=True))
        unknown = sorted(set(names) - {user.get_username() for user in users})
        if unknown:
            raise forms.ValidationError(f"No active user is named {', '.join(unknown)}.")
        return users


def filled_benchmark_form(
    values: dict[str, Any], instance: Benchmark | None = None
) -> OrganizerBenchmarkForm:
    """The organizer's benchmark form as a script fills it (the API, ``load_benchmark``):
    every field as stored (a new benchmark's defaults), then ``values`` (form field names;
    measures as lists or text). The form's ``changed_data`` is then what really changed."""
    instance = instance or Benchmark()
    fields = [f for f in OrganizerBenchmarkForm._meta.fields if f != "organizers"]
    posted = {k: v for k, v in model_to_dict(instance, fields=fields).items() if v is not None}
    posted.update({k: v for k, v in values.items() if v is not None})
    for name in ("shown_measures", "significance_measures"):
        if isinstance(posted.get(name), list | tuple):
            posted[name] = ", ".join(posted[name])
    return OrganizerBenchmarkForm(data=posted, instance=instance)


def phase_form(phase: Phase, values: dict[str, Any]) -> PhaseForm:
    """``PhaseForm`` for ``phase`` (new, with its benchmark set, or stored), its stored
    values overridden by ``values``."""
    posted = model_to_dict(phase, fields=PhaseForm._meta.fields) if phase.pk else {}
    posted.update(values)
    return PhaseForm(data=posted, instance=phase)


class PhaseForm(forms.ModelForm):
    """A campaign phase, as the benchmark's admin form and the API take it: the model's
    checks (closes after opens, no overlap with another phase of the benchmark) and a
    name not taken on the benchmark. Times are UTC (the site's time zone)."""

    class Meta:
        model = Phase
        fields = [
            "name",
            "opens",
            "closes",
            "daily_limit",
            "total_limit",
            "team_daily_limit",
            "team_total_limit",
            "board",
            "final_runs",
        ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["board"].required = False  # not posted: as stored (public on a new one)

    def clean_board(self) -> str:
        return self.cleaned_data.get("board") or self.instance.board

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        benchmark_id = self.instance.benchmark_id
        if benchmark_id is not None:
            taken = Phase.objects.filter(benchmark_id=benchmark_id, name=name)
            if taken.exclude(pk=self.instance.pk).exists():
                raise forms.ValidationError(
                    f"The benchmark has a phase named {name} already.", code="unique"
                )
        return name
