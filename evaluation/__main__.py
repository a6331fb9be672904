"""``python -m evaluation``: the engine's command line (also the ``trec-eval-py`` script).

``python -m evaluation [-q] [-c] [-l N] [-M N] [-m MEASURE]... QRELS RUN`` scores a run
as trec_eval does (:mod:`evaluation.cli.score`); ``python -m evaluation compare ...``
runs the pairwise significance tool (:mod:`evaluation.cli.compare`), imported only then
so that scoring does not load scipy.
"""

from __future__ import annotations

import sys

from evaluation.cli.score import main as score_main


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "compare":
        from evaluation.cli.compare import main as compare_main

        return compare_main(argv[1:])
    if argv and argv[0] in ("power", "discrim", "tau", "poolbias"):  # evaluation.cli.health
        from evaluation.cli.health import main as health_main

        return health_main(argv[0], argv[1:])
    return score_main(argv)


if __name__ == "__main__":
    sys.exit(main())
