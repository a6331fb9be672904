"""``python -m rrl``: the ``rrl`` command (:mod:`rrl.cli`)."""

import sys

from rrl.cli import main

if __name__ == "__main__":
    sys.exit(main())
