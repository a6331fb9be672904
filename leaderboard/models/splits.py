"""A benchmark's public/private split (Kaggle's): which judged needs are private, and the
public and private parts of each judgments version.

``Benchmark.set_split`` and ``Judgments.ensure_parts`` call these. A split is either
listed (every id a need of the latest judgments) or drawn: ``fraction`` of the latest
version's judged needs, chosen by ``numpy.random.default_rng(seed)`` from the needs in
strcmp order, so the same seed, fraction and needs give the same split on any machine.
A part is a ``Judgments`` row of its own (``part`` "public" or "private", ``parent`` the
version, the version's file and number) holding the version's needs on its side of the
split in the version's order, and their counts; a side with no needs of a version has no
part. Imports nothing of the platform outside ``models`` (the models' rule).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from evaluation.trec import read_qrels

if TYPE_CHECKING:
    from leaderboard.models.benchmarks import Benchmark, Judgments

PARTS = ("public", "private")


def by_strcmp(needs) -> list[str]:
    """trec_eval's order of needs: bytes, not locale or numbers."""
    return sorted({str(need) for need in needs}, key=lambda need: need.encode("utf-8"))


def draw_private(need_ids: list[str], fraction: float, seed: int) -> list[str]:
    """``round(fraction * n)`` of ``need_ids`` drawn with ``default_rng(seed)``, in strcmp
    order. The needs are put in strcmp order first, so the draw does not depend on the
    order they were given in. Raises ValidationError when that leaves no need on a side."""
    if not 0.0 < fraction < 1.0:
        raise ValidationError(
            {
                "split_fraction": f"The private fraction must lie strictly between 0 and 1, not {fraction}."
            }
        )
    ordered = by_strcmp(need_ids)
    count = round(fraction * len(ordered))
    if not 0 < count < len(ordered):
        raise ValidationError(
            {
                "split_fraction": f"A fraction of {fraction} of {len(ordered)} judged needs "
                f"makes {count} private: a split needs at least one public and one private need."
            }
        )
    chosen = np.random.default_rng(seed).choice(len(ordered), size=count, replace=False)
    return by_strcmp(ordered[i] for i in chosen)


def checked_private(need_ids: list[str], private) -> list[str]:
    """``private`` as a list of need ids in strcmp order, each a judged need and leaving at
    least one need on each side; ValidationError naming the unknown ids otherwise."""
    if isinstance(private, str) or not all(isinstance(need, str | int) for need in private):
        raise ValidationError({"private_needs": "The private needs must be a list of need ids."})
    wanted = by_strcmp(private)
    judged = set(need_ids)
    unknown = [need for need in wanted if need not in judged]
    if unknown:
        shown = ", ".join(unknown[:20]) + (
            f" and {len(unknown) - 20} more" if len(unknown) > 20 else ""
        )
        raise ValidationError({"private_needs": f"Not needs of the latest judgments: {shown}."})
    if wanted and len(wanted) >= len(judged):
        raise ValidationError(
            {"private_needs": "Every judged need would be private: leave at least one public."}
        )
    return wanted


def set_split(
    benchmark: Benchmark,
    private_needs: list[str] | None = None,
    fraction: float | None = None,
    seed: int | None = None,
) -> bool:
    """See ``Benchmark.set_split``."""
    if private_needs is not None and fraction is not None:
        raise ValidationError("Give either the private needs or a fraction to draw, not both.")
    if private_needs is None and fraction is None:
        raise ValidationError("Give the private needs, or a fraction to draw them with.")
    latest = benchmark.latest_judgments
    if fraction is not None:
        if latest is None:
            raise ValidationError("The benchmark has no judgments to draw private needs from.")
        if seed is None:
            seed = secrets.randbelow(2**63)
        private = draw_private(latest.need_ids, float(fraction), int(seed))
        fraction, seed = float(fraction), int(seed)
    else:
        if private_needs and latest is None:
            raise ValidationError("The benchmark has no judgments: its needs are not known yet.")
        private = checked_private(latest.need_ids if latest else [], private_needs)
        fraction = seed = None
    changed = private != list(benchmark.private_needs or [])
    with transaction.atomic():
        type(benchmark).objects.filter(pk=benchmark.pk).update(
            private_needs=private, split_fraction=fraction, split_seed=seed
        )
        benchmark.private_needs = private
        benchmark.split_fraction, benchmark.split_seed = fraction, seed
        for version in benchmark.judgments.versions():
            version.benchmark = benchmark
            ensure_parts(version)
    return changed


def _counts(judgments: Judgments) -> pd.DataFrame:
    """Judged and relevant documents per need of ``judgments``'s file."""
    with judgments.file.open("rb") as stream:
        qrels = read_qrels(
            stream, name=judgments.original_name, max_bytes=settings.MAX_UNCOMPRESSED_MB << 20
        )
    relevant = qrels["relevance"] >= judgments.benchmark.relevance_level
    return (
        pd.DataFrame({"judged": 1, "relevant": relevant.astype(int)})
        .groupby(qrels["need_id"].astype(str))
        .sum()
    )


def ensure_parts(judgments: Judgments, counts: pd.DataFrame | None = None) -> list[Judgments]:
    """See ``Judgments.ensure_parts``."""
    if judgments.part:
        raise ValueError("a part has no parts of its own")
    private = set(judgments.benchmark.private_needs or [])
    sides = {
        "public": [need for need in judgments.need_ids if need not in private],
        "private": [need for need in judgments.need_ids if need in private],
    }
    if not private:
        sides = {"public": [], "private": []}
    existing = {part.part: part for part in judgments.parts.all()}
    kept = []
    with transaction.atomic():
        for side, needs in sides.items():
            part = existing.get(side)
            if part is not None and part.need_ids == needs:
                kept.append(part)
                continue
            if part is not None:  # its scores were of other needs: they go with it
                part.delete()
            if not needs:
                continue
            if counts is None:
                counts = _counts(judgments)
            subset = counts.reindex(needs, fill_value=0)
            kept.append(
                type(judgments).objects.create(
                    benchmark=judgments.benchmark,
                    version=judgments.version,
                    file=judgments.file.name,
                    original_name=judgments.original_name,
                    sha256=judgments.sha256,
                    num_needs=len(needs),
                    num_judged=int(subset["judged"].sum()),
                    num_relevant=int(subset["relevant"].sum()),
                    note=judgments.note,
                    need_ids=needs,
                    part=side,
                    parent=judgments,
                )
            )
    return kept
