"""``python -m evaluation``: the engine's command line (also the ``trec-eval-py`` script).

``python -m evaluation [-q] [-c] [-l N] [-M N] [-m MEASURE]... QRELS RUN`` scores a run
as trec_eval does (:mod:`evaluation.cli.score`); ``python -m evaluation compare ...``
runs the pairwise significance tool (:mod:`evaluation.cli.compare`), imported only then
so that scoring does not load scipy.
"""

from __future__ import annotations

import os
import sys

# The command does no linear algebra: one OpenBLAS thread spares numpy's import starting
# (and the scheduler spinning) a pool of them
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Arrow allocates from glibc's heap, where numpy's arrays reuse what the parse freed:
# a lower peak on large runs than with Arrow's own mimalloc pool
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

from evaluation.cli.score import main as score_main  # noqa: E402  (after the setting)


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
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe (| head): Python's own exit reports it
        sys.exit(status)
    # The output is out; the interpreter's teardown (freeing every module and a large
    # run's last arrays, one by one) does nothing the command needs: no atexit work, no
    # file left to flush
    os._exit(status)
