"""The measures: a run and qrels in, trec_eval's numbers out, for every need at once.

- :mod:`evaluation.measures.catalog`: the one place measures are named: trec_eval's
  measure list (names, kinds of parameters, defaults, summaries) and the engine's
  RR@k and Judged@k, the sets (``official``, ``all_trec``), ir_measures' names and
  the reader's labels (:func:`resolve`, :func:`close_matches`, :func:`stored_measures`).
- :mod:`evaluation.measures.request`: the ``-m`` syntax (either name system) parsed
  into requests, and a request computed.
- :mod:`evaluation.measures.evaluation`: :func:`evaluate` and :class:`Evaluation`
  (averaging, ``-c`` / ``-l`` / ``-M``, the trec_eval/JSON/CSV output),
  :func:`relevant_ranks`, :func:`num_relevant`, :func:`interpolated_curve`.
- :mod:`evaluation.measures.ranking`: :func:`trec_order`, the one place a run is
  ordered, and :func:`rank_run`, the :class:`Ranking` every measure reads.
- :mod:`evaluation.measures.definitions`: the per-need measures, one small function each.
- :mod:`evaluation.measures.gains`: graded measures (``ndcg``, ``rbp``, ``G`` ...).
- :mod:`evaluation.measures.interpolation`: ``iprec_at_recall``, ``11pt_avg``,
  precision-recall points and the interpolated curve, under the three rules
  (:data:`MODES`: ``exact``, ``trec_eval-9``, ``trec_eval-10``).

Imports: numpy, pandas, pyarrow, :mod:`evaluation.trec` and these modules; nothing of
:mod:`evaluation.significance` or :mod:`evaluation.cli`, and no Django. Modules here
import each other by module path (``evaluation.measures.ranking``), never through this
package, which re-exports them.

Names are imported on first use (module ``__getattr__``): the command line's
small-file path imports ``ranking``, ``request`` and ``scoring`` without pandas or
pyarrow.
"""

from __future__ import annotations

from evaluation.lazy import lazy_names

TYPE_CHECKING = False  # typing's, without importing typing (~3 ms of a small run)

if TYPE_CHECKING:
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

# name -> module that defines it: imported on first use (PEP 562)
_HOME = {
    "ALL_TREC": "evaluation.measures.catalog",
    "NOT_IMPLEMENTED": "evaluation.measures.catalog",
    "OFFICIAL": "evaluation.measures.catalog",
    "STORED": "evaluation.measures.catalog",
    "CatalogEntry": "evaluation.measures.catalog",
    "UnknownMeasure": "evaluation.measures.catalog",
    "close_matches": "evaluation.measures.catalog",
    "resolve": "evaluation.measures.catalog",
    "stored_measures": "evaluation.measures.catalog",
    "stored_requests": "evaluation.measures.catalog",
    "Evaluation": "evaluation.measures.evaluation",
    "NeedWithoutRun": "evaluation.measures.evaluation",
    "evaluate": "evaluation.measures.evaluation",
    "interpolated_curve": "evaluation.measures.evaluation",
    "num_relevant": "evaluation.measures.evaluation",
    "relevant_ranks": "evaluation.measures.evaluation",
    "MODES": "evaluation.measures.interpolation",
    "STANDARD_LEVELS": "evaluation.measures.interpolation",
    "precision_recall_points": "evaluation.measures.interpolation",
    "Ranking": "evaluation.measures.ranking",
    "rank_run": "evaluation.measures.ranking",
    "trec_order": "evaluation.measures.ranking",
}


__getattr__, __dir__ = lazy_names(__name__, _HOME)


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
    "resolve",
    "stored_measures",
    "stored_requests",
    "trec_order",
]
