"""`make test` points the suite at PostgreSQL and Redis when they answer, else says it falls back."""

from tests import services


def test_uses_postgres_and_redis_when_they_answer(monkeypatch, capsys):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    monkeypatch.setattr(services, "answers", lambda host, port: True)
    services.main()
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "export DATABASE_URL=postgres://postgres@127.0.0.1:5432/leaderboard",
        "export CELERY_BROKER_URL=redis://127.0.0.1:6379/14",
    ]


def test_falls_back_to_sqlite_and_in_process_tasks_and_says_so(monkeypatch, capsys):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    monkeypatch.setattr(services, "answers", lambda host, port: False)
    services.main()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "using SQLite" in captured.err and "tasks in-process" in captured.err


def test_keeps_what_the_caller_set(monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", "postgres://elsewhere/db")
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://elsewhere/0")
    monkeypatch.setattr(services, "answers", lambda host, port: True)
    services.main()
    assert capsys.readouterr().out == ""
