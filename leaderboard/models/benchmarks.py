"""Benchmarks, their information needs and their versioned judgments (qrels files).

A benchmark shows the results of its *current* judgments version; a new version becomes
current only once every live run has been rescored against it (see
``Benchmark.promote_judgments_if_complete``), so readers never see a half-rescored
leaderboard. Imports within ``models`` only from ``submissions`` (run statuses), ``phases`` and
``splits`` (the public/private split).
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import cached_property

from evaluation.measures import MODES, UnknownMeasure, resolve
from leaderboard.models import splits
from leaderboard.models.phases import Quota, Timeline, Window, quota, timeline, window
from leaderboard.models.submissions import Submission, safe_file_name

# Measures whose per-need vectors are stored and tested for every pair, besides the primary.
TESTED_MEASURES = ("map",)
# The leaderboard's columns unless the organizer chooses others: the seed's measures and
# the one modern benchmarks rank by.
SHOWN_MEASURES = ("map", "P_5", "P_10", "recip_rank", "Rprec", "ndcg_cut_10")


def default_shown_measures() -> list[str]:
    return list(SHOWN_MEASURES)


def default_tested_measures() -> list[str]:
    return list(TESTED_MEASURES)


def canonical_measure(name: str) -> str:
    """The catalog column ``name`` stands for, in either name system (``nDCG@10`` and
    ``ndcg_cut_10`` give ``ndcg_cut_10``); the name itself when the catalog does not know
    it (rows stored before measures were checked keep working)."""
    try:
        return resolve(name).column
    except UnknownMeasure:
        return name


def has_per_need_values(column: str) -> bool:
    """Whether ``column`` has a value per need to pair runs on (not a summary over needs
    such as ``gm_map``); a name the catalog does not know is kept as it is."""
    try:
        return resolve(column).per_need
    except UnknownMeasure:
        return True


class BenchmarkQuerySet(models.QuerySet):
    def published(self) -> BenchmarkQuerySet:
        return self.filter(published=True)

    def organised_by(self, user) -> BenchmarkQuerySet:
        if user.is_superuser:
            return self
        return self.filter(organizers=user)

    def visible_to(self, user) -> BenchmarkQuerySet:
        if user.is_authenticated and user.is_superuser:
            return self
        if user.is_authenticated:
            return self.filter(Q(published=True) | Q(organizers=user)).distinct()
        return self.published()


class Benchmark(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(
        blank=True,
        help_text="Markdown: headings, lists, links, code, tables. Shown above the "
        "leaderboard (raw HTML is reduced to safe tags; scripts and javascript: links are "
        "removed).",
    )
    rules = models.TextField(
        blank=True,
        help_text="Markdown: what a run must do to count (one run per day, no manual "
        "runs, the evaluation measure ...). Shown under “Rules” on the benchmark's page.",
    )
    data_description = models.TextField(
        "data",
        blank=True,
        help_text="Markdown: the collection, the needs and how they were judged, where to "
        "download them. Shown under “Data” on the benchmark's page.",
    )
    primary_measure = models.CharField(
        max_length=40,
        default="map",
        help_text="The measure runs are ranked by, in either name system (nDCG@10 or "
        "ndcg_cut_10); stored as trec_eval's column name.",
    )
    shown_measures = models.JSONField(
        default=default_shown_measures,
        blank=True,
        help_text="The leaderboard's columns besides the primary measure (every stored "
        "measure can still be chosen to rank by).",
    )
    significance_measures = models.JSONField(
        "tested measures",
        default=default_tested_measures,
        blank=True,
        help_text="Measures every pair of runs is tested on, besides the primary measure.",
    )
    interpolation = models.CharField(
        max_length=20,
        choices=[(mode, mode) for mode in MODES],
        default="exact",
        help_text="How interpolated precision (iprec_at_recall, 11pt_avg) counts ranks: "
        "exact fractions, or as trec_eval 9.0.8 or 10.0 does, to reproduce a paper's numbers.",
    )
    relevance_level = models.IntegerField(
        default=1, help_text="A document is relevant when its judgment is at least this value."
    )
    max_depth = models.PositiveIntegerField(
        default=1000,
        validators=[MinValueValidator(1)],  # 0 would score every run 0 (trec_eval's -M)
        help_text="Only the first this many documents of each ranking count.",
    )
    judged_threshold = models.FloatField(
        "Judged@10 threshold",
        default=0.5,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Runs with a smaller share of judged documents in their top 10 are flagged "
        "on the leaderboard: the pool did not see their documents, so their scores are "
        "underestimates. 0 flags none.",
    )
    pool_depth = models.PositiveIntegerField(
        default=100,
        validators=[MinValueValidator(1)],
        help_text="How deep the judgments pool went in each run: the benchmark health page's "
        "pool-bias check leaves out the documents only one participant put this high.",
    )
    final_runs = models.PositiveIntegerField(
        "final runs per team",
        default=3,
        validators=[MinValueValidator(1)],
        help_text="How many runs each team may mark final (pooled and reported in that "
        "priority order); a team that marks none has its latest this many counted. A phase "
        "may set its own.",
    )
    is_open = models.BooleanField("open for submissions", default=True)
    daily_limit = models.PositiveIntegerField(
        default=10, help_text="Submissions per participant per UTC day (failed ones do not count)."
    )
    organizers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="organised_benchmarks"
    )
    published = models.BooleanField(default=True)
    private_needs = models.JSONField(
        default=list,
        blank=True,
        help_text="Judged needs whose scores stay hidden until the reveal (Kaggle's private "
        "split): boards, run pages, comparisons, exports, mails and the API show scores on "
        "the other (public) needs only. Empty: no split.",
    )
    split_fraction = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="The share of needs drawn as private with the seed below, when the split "
        "was drawn rather than listed; kept so the draw can be reproduced.",
    )
    split_seed = models.BigIntegerField(
        null=True, blank=True, help_text="The seed the private needs were drawn with."
    )
    final_needs = models.CharField(
        max_length=10,
        choices=[("private", "the private needs"), ("all", "all needs")],
        default="private",
        help_text="What the final board ranks by once revealed.",
    )
    reveal_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="UTC. From this moment private scores, hidden phases' boards and real "
        "names are shown to everyone; empty: not yet scheduled (hidden).",
    )
    anonymous = models.BooleanField(
        "pseudonyms until the reveal",
        default=False,
        help_text="Participants and teams are shown under stable pseudonyms until the reveal.",
    )
    current_judgments = models.ForeignKey(
        "Judgments", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)

    objects = BenchmarkQuerySet.as_manager()

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("leaderboard", args=[self.slug])

    def is_organised_by(self, user) -> bool:
        if not user.is_authenticated:
            return False
        return user.is_superuser or self.organizers.filter(pk=user.pk).exists()

    @property
    def latest_judgments(self) -> Judgments | None:
        return self.judgments.versions().order_by("-version").first()

    @property
    def has_split(self) -> bool:
        """Whether some needs are private (scored, but shown at the reveal only)."""
        return bool(self.private_needs)

    def revealed(self, now: dt.datetime | None = None) -> bool:
        """Whether the reveal has come: private scores, hidden boards and names shown."""
        return self.reveal_at is not None and (now or timezone.now()) >= self.reveal_at

    def set_split(self, private_needs=None, fraction=None, seed=None) -> bool:
        """Set the private needs, listed or drawn, and make every version's parts.

        ``private_needs``: need ids of the latest judgments (ValidationError naming those
        that are not), at least one need left on each side; an empty list clears the split
        and its parts. Or ``fraction`` of the latest judged needs drawn with ``seed`` (one is
        drawn and stored when None; see ``leaderboard.models.splits``). One transaction;
        returns whether the private needs changed (the caller then queues the parts'
        results, ``leaderboard.pipeline.splits``)."""
        return splits.set_split(self, private_needs, fraction, seed)

    def tested_measures(self) -> list[str]:
        """Measures the workers store per-need vectors for and test every pair on: the
        primary one and the chosen ones (``map`` unless the organizer says otherwise), less
        a primary that is a summary over needs (GMAP): it has no per-need values to pair."""
        chosen = self.significance_measures
        if chosen is None:
            chosen = TESTED_MEASURES
        names = dict.fromkeys(canonical_measure(name) for name in [self.primary_measure, *chosen])
        return [name for name in names if has_per_need_values(name)]

    def menu_measures(self) -> list[str]:
        """The measures a reader looks for first: the primary, then the shown ones, as
        catalog columns (what every measure menu lists before the others)."""
        names = [self.primary_measure, *(self.shown_measures or ())]
        return list(dict.fromkeys(canonical_measure(name) for name in names))

    def catalog_measures(self) -> list[str]:
        """Every measure the organizer named (primary, shown, tested) that the catalog knows,
        as catalog columns: what scoring asks the engine for besides its defaults."""
        names = [self.primary_measure, *(self.shown_measures or ()), *self.tested_measures()]
        known = []
        for name in names:
            try:
                known.append(resolve(name).column)
            except UnknownMeasure:  # a legacy free-text name: nothing to compute
                continue
        return list(dict.fromkeys(known))

    def window(self, started: dt.datetime | None = None) -> Window:
        """Whether a run whose upload began at ``started`` (default: now) is taken now,
        and into which phase (``leaderboard.models.phases``)."""
        now = timezone.now()
        return window(self, started or now, now)

    @cached_property
    def phase_list(self) -> list:
        """The phases, read once per instance (``prefetch_related("phases")`` fills it)."""
        return list(self.phases.all())

    @property
    def accepting_runs(self) -> bool:
        """Whether a run is taken now: open, and in a phase if it has phases."""
        return self.window().open

    def timeline(self) -> Timeline:
        """The phases as of now: the open one, the next, the last closed."""
        return timeline(self, timezone.now())

    def quota(self, user) -> Quota:
        """``user``'s submissions today, the limit, and whether a run is taken now."""
        return quota(self, user, timezone.now())

    def rescoring_in_progress(self) -> bool:
        latest = self.latest_judgments
        return latest is not None and latest.pk != self.current_judgments_id

    def promote_judgments_if_complete(self, judgments: Judgments) -> bool:
        """Make ``judgments`` current once every live run has a result against it.

        Failed and withdrawn runs do not hold the switch back. Returns whether it moved.
        """
        if self.current_judgments_id == judgments.pk:
            return False
        pending = (
            self.submissions.live()
            .exclude(status=Submission.Status.FAILED)
            .exclude(results__judgments=judgments)
        )
        if pending.exists():
            return False
        Benchmark.objects.filter(pk=self.pk).update(current_judgments=judgments)
        self.current_judgments = judgments
        return True


class InformationNeed(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="needs")
    need_id = models.CharField(max_length=100)
    title = models.CharField(max_length=500, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["benchmark", "need_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "need_id"], name="unique_need_per_benchmark"
            )
        ]

    def __str__(self) -> str:
        return f"{self.need_id}: {self.title}"


def judgments_path(instance: Judgments, filename: str) -> str:
    """``judgments/<benchmark>/v<version>-<safe stem>[.gz]``: the version is unique per
    benchmark; the name given is kept in ``original_name``."""
    return f"judgments/{instance.benchmark.slug}/v{instance.version}-{safe_file_name(filename)}"


class JudgmentsQuerySet(models.QuerySet):
    def versions(self) -> JudgmentsQuerySet:
        """The uploaded versions, without the public and private parts derived from them."""
        return self.filter(part="")


class Judgments(models.Model):
    """One uploaded qrels file; every upload is a new version.

    On a benchmark with a split, each version has two derived parts (``part`` "public" and
    "private", ``parent`` the version): rows of their own, so results, per-need vectors,
    comparisons and health are stored and read per part exactly as per version. A part
    shares its version's file and number; its ``need_ids`` are the version's needs in it.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="judgments")
    version = models.PositiveIntegerField()
    file = models.FileField(upload_to=judgments_path, max_length=300)
    original_name = models.CharField(
        max_length=255, blank=True, help_text="The uploaded file's name, as it was given."
    )
    sha256 = models.CharField(max_length=64)
    num_needs = models.PositiveIntegerField(default=0)
    num_judged = models.PositiveIntegerField(default=0)
    num_relevant = models.PositiveIntegerField(default=0)
    note = models.CharField(max_length=200, blank=True)
    need_ids = models.JSONField(
        default=list, help_text="The judged needs in trec_eval's order; per-need vectors follow it."
    )
    part = models.CharField(
        max_length=10,
        blank=True,
        default="",
        choices=[("", "all needs"), ("public", "public needs"), ("private", "private needs")],
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="parts"
    )
    created = models.DateTimeField(auto_now_add=True)

    objects = JudgmentsQuerySet.as_manager()

    class Meta:
        ordering = ["benchmark", "-version"]
        verbose_name_plural = "judgments"
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "version", "part"], name="unique_judgments_version"
            )
        ]

    def ensure_parts(self) -> list[Judgments]:
        """Create, replace or remove this version's public and private parts to match the
        benchmark's split; a part whose needs changed is replaced, with its scores. Returns
        the parts there are."""
        return splits.ensure_parts(self)

    def __str__(self) -> str:
        part = f" ({self.part} needs)" if self.part else ""
        return f"{self.benchmark.slug} judgments v{self.version}{part}"
