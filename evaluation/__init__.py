"""The scoring engine: TREC files in, trec_eval-exact measures and significance tests out.

No Django here: the engine takes files or arrays and gives numbers; the platform
(:mod:`leaderboard`) calls it. Sub-packages by concern:

- :mod:`evaluation.trec` reads qrels, runs and needs (topics), plain or gzipped.
- :mod:`evaluation.measures` scores a run against qrels with trec_eval's measures,
  vectorised over all needs (the catalog of measures, the one ordering of a run, the
  measure definitions).
- :mod:`evaluation.significance` compares runs need by need (paired t, Wilcoxon,
  randomization) and corrects families of comparisons (Holm, Benjamini-Hochberg,
  Tukey's HSD).
- :mod:`evaluation.health` says whether a benchmark can separate its runs: minimum
  detectable difference, power and topic set size, discriminative power, tau and
  tau_AP between rankings, leave-one-participant-out pool bias.
- :func:`evaluate` (:func:`evaluation.measures.evaluate`, imported when first used, so
  that ``python -m evaluation`` sets its environment before numpy loads) scores a run held in a
  file or in Python (a DataFrame, a dict, a ranx ``Run``, ir_measures tuples).
- :mod:`evaluation.cli` holds the command lines; ``python -m evaluation`` (this
  package's ``__main__``) is trec_eval-compatible and ``python -m evaluation compare``
  tests every pair of runs; ``power``, ``discrim``, ``tau`` and ``poolbias`` report a
  benchmark's health.

Import rules (module level; imports inside functions are not counted):

- nothing here imports Django (ruff's ``TID251`` enforces it);
- ``trec`` imports nothing of ``measures``, ``significance`` or ``cli``;
- ``measures`` may import ``trec``, nothing of ``significance`` or ``cli``;
- ``significance`` imports neither ``trec`` nor ``measures``: it works on score arrays;
- ``health`` may import ``significance`` (its tests and corrections), ``measures`` and
  ``trec`` (to rescore runs for pool bias), nothing of ``cli``;
- ``cli`` may import all of them; nothing imports ``cli`` but ``__main__``;
- each sub-package's ``__init__`` re-exports its public names for callers outside it;
  inside a sub-package, modules import their siblings by module path
  (``from evaluation.trec.parsing import ...``), never through their own ``__init__``,
  so there is no import circle.
"""


def __getattr__(name: str):
    if name == "evaluate":
        from evaluation.measures.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module 'evaluation' has no attribute {name!r}")


__all__ = ["evaluate"]
