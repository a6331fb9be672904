# Two commands on a fresh machine: `make run` and `make test` (Python 3.11 and make only).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
# pytest-xdist processes: most tests wait on PostgreSQL, Redis, workers or Chromium, so more
# processes than cores; each gets its own test database (test_<name>_gw<N>).
TEST_WORKERS ?= 4

.PHONY: run test faults lint format bench worker clean

# uv installs what pip would (the same versions) in a third of the time: a fresh clone's
# `make test` starts sooner. --compile-bytecode as pip does: otherwise the first processes
# the tests start (workers, servers) each compile the packages they import.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip uv

# editable_mode=compat: the checkout on sys.path by a plain .pth line; setuptools' default
# editable finder imports pathlib, re and urllib in every process (~25 ms of each
# `python -m evaluation` on a small run)
INSTALL := $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python --config-settings editable_mode=compat

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(INSTALL) -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(INSTALL) -e '.[dev]'
	touch $(VENV)/.installed $@

run: $(VENV)/.installed
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: $(VENV)/.installed-dev
	@eval "$$($(BIN)/python tests/services.py)"; \
	$(BIN)/python manage.py makemigrations --check --dry-run >/dev/null && \
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The fault suite alone (also part of `make test`): stopped services, killed workers, bombs.
faults:
	$(MAKE) test PYTEST_ARGS="-m faults $(PYTEST_ARGS)"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.installed-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(VENV)/.installed-dev
	@for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# Consumes every queue (default, score, compare: settings.py); `-Q score,celery` or
# `-Q compare` make a dedicated one (docs/scaling.md, "Queues").
worker: $(VENV)/.installed
	$(BIN)/celery -A leaderboard worker --loglevel=INFO

clean:
	rm -rf $(VENV) db.sqlite3 media staticfiles artifacts
