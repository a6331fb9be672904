"""The benchmark form's measure fields: either name system is accepted (``nDCG@10`` or
``ndcg_cut_10``, ``RR@10`` or ``recip_rank_cut_10``) and stored as trec_eval's column
name, the name the engine's output and every stored result use; an unknown name is a
form error naming the close matches (``evaluation.measures.close_matches``)."""

from __future__ import annotations

from django import forms

from evaluation.measures import UnknownMeasure, resolve
from leaderboard.models.benchmarks import has_per_need_values


def catalog_column(name: str) -> str:
    """A catalog name in either system as its stored column, or a form error naming close
    matches."""
    try:
        return resolve(name).column
    except UnknownMeasure as error:
        hint = f" Did you mean {', '.join(error.suggestions)}?" if error.suggestions else ""
        reason = f" ({error.reason})" if error.reason else ""
        raise forms.ValidationError(f"Unknown measure “{name}”{reason}.{hint}") from error


def testable(column: str) -> bool:
    """Whether runs can be tested on ``column``: a score with per-need values to pair
    (no count such as ``num_ret``, no summary-only ``gm_map``)."""
    if not has_per_need_values(column):
        return False
    try:
        return not resolve(column).is_count
    except UnknownMeasure:  # a stored free-text name the catalog never knew: kept as it is
        return True


class MeasureListField(forms.CharField):
    """Measures separated by commas or spaces, either name system (``nDCG@10, RR@10,
    P_10``); cleaned to the list of their catalog columns, repeats dropped; None when the
    field was not posted at all (a script posting the older form keeps what is stored)."""

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(value)
        return value

    def has_changed(self, initial, data) -> bool:
        if data is None:
            return False
        try:
            return list(initial or []) != self.clean(data)
        except forms.ValidationError:
            return True

    def clean(self, value) -> list[str] | None:
        if value is None:  # not in the form's data at all: the form keeps what is stored
            return None
        text = super().clean(value) or ""
        names = text.replace(",", " ").split()
        errors, columns = [], []
        for name in names:
            try:
                columns.append(catalog_column(name))
            except forms.ValidationError as error:
                errors.extend(error.messages)
        if errors:
            raise forms.ValidationError(errors)
        return list(dict.fromkeys(columns))
