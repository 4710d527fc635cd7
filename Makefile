# Developer entry points. Everything runs from the project's virtualenv in .venv, installed with
# the exact versions pinned in constraints.txt.

SHELL := /bin/bash

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install.stamp

# Python 3.11: python3.11 if it is on PATH, else python3 when that is 3.11.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || \
	(python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null && command -v python3))

# Python caches what it compiles (__pycache__, ignored by git). An environment that turns that off
# (PYTHONDONTWRITEBYTECODE) would have every test worker and every process a test starts compile
# the project and rewrite the tests' asserts again: a fifth of the suite's CPU on two cores.
unexport PYTHONDONTWRITEBYTECODE

# Hypothesis profile: "ci" (500 examples, no deadline) under CI, "dev" otherwise.
HYPOTHESIS_PROFILE ?= $(if $(CI),ci,dev)
export HYPOTHESIS_PROFILE

DEMO_HOST ?= 127.0.0.1:8000
DEMO_GM_USER ?= gm
DEMO_GM_PASSWORD ?= gm
DEMO_VK_PORT ?= 8081
DEMO_ARGS ?=
RUN_ARGS ?=

.PHONY: venv test test-fast lint format migrate demo run constraints clean screenshots bench soak

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@if [ -z "$(PYTHON)" ]; then echo "Python 3.11 is required (python3.11 or python3)." >&2; exit 1; fi
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	@touch $@

# The whole suite, in parallel (pytest-xdist: TEST_WORKERS processes, each with a database of
# its own; tests/settings.py). The workers, and the processes their tests start, are forked by
# one fork server the controller starts, which has imported the heavy libraries once for them all
# (tests/forkserver.py). On the embedded default unless DATABASE_URL and REDIS_URL are set;
# CI runs it on both (.ci/run). TEST_ARGS adds pytest options: `make test TEST_ARGS="-k vote"`.
# Twice as many workers as cores, and one: a good part of the suite waits on real processes,
# browsers and clocks (the modules that wait on clocks all in one worker, the modules of long tests
# first: tests/conftest.py), and each worker takes whole modules (--dist loadfile). On 2 cores,
# measured on the embedded default: 4 workers 366 CPU-s in 204 s, 5 workers 374 CPU-s in 204 s,
# 6 workers 414 CPU-s in 224 s.
TEST_WORKERS ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 2) + 1 )))
TEST_ARGS ?=
test: $(STAMP)
	$(BIN)/pytest -q -rs -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(TEST_ARGS)

# The edit–test loop's lane: the rules, the services, the selectors, the parsers and the panel's
# views, in process (no subprocess, no browser, no soak). Run `make test` before you commit.
FAST_TESTS := tests/rules tests/gameplay/services tests/gameplay/selectors tests/vkbot/test_parsing.py \
	tests/panel
# In process and bound by the CPU: one worker per core.
FAST_WORKERS ?= auto
test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=$(if $(CI),ci,fast) $(BIN)/pytest -q -n $(FAST_WORKERS) -m "not slow and not browser and not soak" $(TEST_ARGS) \
		$(FAST_TESTS)

# Benchmarks (bench/, bench/README.md): needs PostgreSQL and Redis, BENCH_DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/vkmafia_bench, recreated) and BENCH_REDIS_URL
# (default redis://127.0.0.1:6379/15, flushed). Prints the table, writes bench/results.json.
bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# The soak test's long version (tests/soak; CI runs the short one with `make test`): 100 games,
# 4 phases, the bot and a worker killed in each; needs PostgreSQL and Redis.
SOAK_GAMES ?= 100
SOAK_PHASES ?= 4
SOAK_DATABASE_URL ?= $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/vkmafia_soak)
SOAK_REDIS_URL ?= $(or $(REDIS_URL),redis://127.0.0.1:6379/14)
soak: $(STAMP)
	SOAK_GAMES=$(SOAK_GAMES) SOAK_PHASES=$(SOAK_PHASES) SOAK_REPORT=$(CURDIR)/soak-result.json \
		DATABASE_URL=$(SOAK_DATABASE_URL) REDIS_URL=$(SOAK_REDIS_URL) \
		$(BIN)/pytest -q -p no:randomly -m soak -s tests/soak

# The panel's and the player page's screenshots in docs/screenshots (README.md, docs/panel.md): the
# browser tests with Debian's Chromium (/usr/bin/chromium-headless-shell, or else /usr/bin/chromium;
# apt-get install chromium chromium-headless-shell).
screenshots: $(STAMP)
	@test -x /usr/bin/chromium-headless-shell || test -x /usr/bin/chromium || { echo "Install Chromium first: apt-get install chromium chromium-headless-shell" >&2; exit 1; }
	PANEL_SCREENSHOTS_DIR=$(CURDIR)/docs/screenshots $(BIN)/pytest -q -p no:randomly -m browser \
		tests/panel/test_browser.py
	SANDBOX_SCREENSHOTS_DIR=$(CURDIR)/docs/screenshots $(BIN)/pytest -q -p no:randomly -m browser \
		tests/demo/test_demo_browser.py

# ruff (the checks and the formatting), the import contracts of pyproject.toml
# ([tool.importlinter], docs/architecture.md), then mypy over the whole project ([tool.mypy]).
# mypy's Django plugin imports config.settings, which wants a SECRET_KEY unless DEBUG is on: the
# check runs with DEBUG=true (nothing is served).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	DEBUG=true $(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

migrate: $(STAMP)
	$(BIN)/python manage.py migrate --noinput

# The whole project on the embedded default, in one command (demo/stack.py): the GM panel, the
# local VK server with its player page, the bot, a worker with the scheduler and simulated
# players around two demo communities with a game each (26 and 12 players) and a third one to
# connect from the panel, sharing .demo/db.sqlite3 and a Redis stand-in.
# Ctrl-C stops everything; the next `make demo` continues the same games. More options:
# `make demo DEMO_ARGS="--day-minutes 10 --auto-publish"` (see `manage.py demo --help`).
demo: $(STAMP)
	@DEBUG=true $(BIN)/python manage.py demo --host $(word 1,$(subst :, ,$(DEMO_HOST))) \
		--web-port $(word 2,$(subst :, ,$(DEMO_HOST))) --vk-port $(DEMO_VK_PORT) \
		--gm-user '$(DEMO_GM_USER)' --gm-password '$(DEMO_GM_PASSWORD)' $(DEMO_ARGS)

# The whole deployment against VK (ops/serve.py, `manage.py serve`): checks the configuration
# (VK_GROUP_ID, VK_GROUP_TOKEN, VK_USER_TOKEN, a PostgreSQL DATABASE_URL and REDIS_URL; one line
# and exit status 2 when something is missing), migrates, collects the static files, then runs
# the web (gunicorn on BIND, default 127.0.0.1:8000 for a TLS proxy on the same host; another
# interface only when BIND says so, e.g. BIND=0.0.0.0:8000; WEB_CONCURRENCY processes, default 2),
# RUN_WORKERS rq workers (default 1; queues default and vk, with the scheduler) and the bot (long
# poll; none with RUN_CALLBACK=true, when VK pushes events to /vk/callback/). A process that
# exits is restarted with back-off; Ctrl-C stops everything. The variables come from .env when
# it exists, unless the environment sets them (`make run BIND=127.0.0.1:9000` or
# `RUN_WORKERS=3 make run`); more options: `make run RUN_ARGS="--workers 3 --no-migrate"` (see
# `manage.py serve --help`).
run: $(STAMP)
	@shell_env="$$(export -p)"; set -a; if [ -f .env ]; then . ./.env; fi; set +a; \
	eval "$$shell_env"; exec $(BIN)/python manage.py serve $(RUN_ARGS)

# Re-pin constraints.txt from a fresh virtualenv (after changing dependencies in pyproject.toml).
constraints:
	rm -rf .venv-pin
	$(PYTHON) -m venv .venv-pin
	.venv-pin/bin/python -m pip install --quiet --upgrade pip setuptools wheel
	.venv-pin/bin/python -m pip install --quiet -e '.[dev]'
	{ echo "# Exact pins: pip freeze of a fresh venv after 'pip install -e .[dev]' (Python 3.11)."; \
	  echo "# Regenerate with 'make constraints'."; \
	  .venv-pin/bin/python -m pip freeze --exclude-editable; } > constraints.txt
	rm -rf .venv-pin

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .hypothesis .ruff_cache .mypy_cache *.egg-info
