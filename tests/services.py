"""Print shell exports that point the test suite at local PostgreSQL and Redis, if they answer.

Used by ``make test``. Falls back to SQLite and in-process tasks, and says so on stderr.
"""

import os
import socket
import sys


def answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def main() -> None:
    exports = {}
    if "DATABASE_URL" not in os.environ:
        if answers("127.0.0.1", 5432):
            exports["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/leaderboard"
        else:
            print(
                "make test: PostgreSQL not answering on 127.0.0.1:5432, using SQLite",
                file=sys.stderr,
            )
    if "CELERY_BROKER_URL" not in os.environ:
        if answers("127.0.0.1", 6379):
            exports["CELERY_BROKER_URL"] = "redis://127.0.0.1:6379/14"
        else:
            print(
                "make test: Redis not answering on 127.0.0.1:6379, tasks in-process only",
                file=sys.stderr,
            )
    for name, value in exports.items():
        print(f"export {name}={value}")


if __name__ == "__main__":
    main()
