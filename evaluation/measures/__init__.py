"""The measures: a run and qrels in, trec_eval's numbers out, for every need at once.

- :mod:`evaluation.measures.catalog`: the one place measures are named: trec_eval's
  measure list (names, kinds of parameters, defaults, summaries) and the engine's
  RR@k and Judged@k, the sets (``official``, ``all_trec``), ir_measures' names and
  the reader's labels (:func:`resolve`, :func:`close_matches`, :func:`stored_measures`).
- :mod:`evaluation.measures.request`: the ``-m`` syntax (either name system) parsed
  into requests, and a request computed.
- :mod:`evaluation.measures.evaluation`: :func:`evaluate` and :class:`Evaluation`
  (averaging, ``-c`` / ``-l`` / ``-M``, the trec_eval/JSON/CSV output),
  :func:`relevant_ranks`, :func:`num_relevant`, :func:`interpolated_curve`, and
  :func:`summarise_needs` (the summary of some needs from their per-need values).
- :mod:`evaluation.measures.ranking`: :func:`trec_order`, the one place a run is
  ordered, and :func:`rank_run`, the :class:`Ranking` every measure reads.
- :mod:`evaluation.measures.scoring`: a ranking scored and averaged as trec_eval does
  (:func:`score_ranking`), trec_eval's text output and the evaluation's warnings.
- :mod:`evaluation.measures.definitions`: the per-need measures, one small function each.
- :mod:`evaluation.measures.gains`: graded measures (``ndcg``, ``rbp``, ``G`` ...).
- :mod:`evaluation.measures.interpolation`: ``iprec_at_recall``, ``11pt_avg``,
  precision-recall points and the interpolated curve, under the three rules
  (:data:`MODES`: ``exact``, ``trec_eval-9``, ``trec_eval-10``).

Imports: numpy, pandas, pyarrow, :mod:`evaluation.trec` and these modules; nothing of
:mod:`evaluation.significance` or :mod:`evaluation.cli`, and no Django. Modules here
import each other by module path (``evaluation.measures.ranking``), never through this
package, which re-exports them.
"""

from __future__ import annotations

from evaluation.measures.catalog import (
    ALL_TREC,
    NOT_IMPLEMENTED,
    OFFICIAL,
    STORED,
    CatalogEntry,
    UnknownMeasure,
    close_matches,
    resolve,
    stored_measures,
    stored_requests,
)
from evaluation.measures.evaluation import (
    Evaluation,
    NeedWithoutRun,
    evaluate,
    interpolated_curve,
    num_relevant,
    relevant_ranks,
    summarise_needs,
)
from evaluation.measures.interpolation import (
    MODES,
    STANDARD_LEVELS,
    precision_recall_points,
)
from evaluation.measures.ranking import (
    Ranking,
    rank_run,
    trec_order,
)

__all__ = [
    "ALL_TREC",
    "MODES",
    "NOT_IMPLEMENTED",
    "OFFICIAL",
    "STANDARD_LEVELS",
    "STORED",
    "CatalogEntry",
    "Evaluation",
    "NeedWithoutRun",
    "Ranking",
    "UnknownMeasure",
    "close_matches",
    "evaluate",
    "interpolated_curve",
    "num_relevant",
    "precision_recall_points",
    "rank_run",
    "relevant_ranks",
    "summarise_needs",
    "resolve",
    "stored_measures",
    "stored_requests",
    "trec_order",
]
