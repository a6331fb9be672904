"""The engine's command lines, dispatched from ``python -m evaluation`` (:mod:`evaluation.__main__`).

- :mod:`evaluation.cli.score`: ``python -m evaluation [-q] [-c] [-l N] [-M N] [-m MEASURE]...
  QRELS RUN [RUN ...]``, trec_eval's flags, measure names and output; a RUN may be a
  directory or a glob, the qrels are read once (:mod:`evaluation.cli.scorer`).
- :mod:`evaluation.cli.compare`: ``python -m evaluation compare QRELS RUN RUN ...`` (or
  ``--scores MATRIX.csv``), every pair of runs tested and corrected over all pairs.
- :mod:`evaluation.cli.health`: ``python -m evaluation power|discrim|tau|poolbias``, a
  benchmark's health (:mod:`evaluation.health`) from a score matrix or qrels and runs.

Imports: argparse, numpy, pandas and the other sub-packages of :mod:`evaluation`;
no Django. This package imports neither command:
``compare`` loads scipy, which scoring does not need.
"""
