"""The scoring engine: TREC files in, trec_eval-exact measures out. No Django here.

- :mod:`evaluation.trec` reads qrels, runs and needs (topics), plain or gzipped.
- :mod:`evaluation.measures` scores a run against qrels, vectorised over all needs.
- ``python -m evaluation`` is a trec_eval-compatible command line.
"""
