"""``{{ measure|label }}``: a measure's name as people see it, in templates and mails.

The template side of ``leaderboard.reading.boards.measure_label``, so a template never
shows trec_eval's column (``ndcg_cut_10``) where the catalog's label (``nDCG@10``) is
meant; the column stays in URLs, option values and ``title`` attributes.
"""

from __future__ import annotations

from django import template

from leaderboard.reading.boards import measure_label

register = template.Library()


@register.filter
def label(measure: str) -> str:
    return measure_label(str(measure))
