# Kontor developer tasks. Everything runs from the project's own .venv, created from the
# project's own files (pyproject.toml) on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps: `make run` (and the benches, `make play`) need only what the service needs
# (`pip install -e .`); `make test` and the other developer tasks add the dev tools
# (`pip install -e '.[dev]'`). Each is redone whenever pyproject.toml changes.
RUNTIME := $(VENV)/.installed-runtime
DEV     := $(VENV)/.installed-dev

.DEFAULT_GOAL := test
CHROMIUM := /usr/bin/chromium

.PHONY: chromium screenshots .venv venv lint typecheck contracts test run run-cluster bench api-bench play clean openapi playthroughs sdk

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUNTIME): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e .
	touch $(RUNTIME)

$(DEV): pyproject.toml $(RUNTIME)
	$(BIN)/pip install -e '.[dev]'
	touch $(DEV)

.venv venv: $(DEV)

lint: $(DEV)
	$(BIN)/ruff check .

typecheck: $(DEV)
	$(BIN)/mypy

contracts: $(DEV)
	$(BIN)/lint-imports --no-logo

# The browser tests (tests/service/test_browser.py) drive Debian's chromium; installed here
# when missing and we are root (else those tests skip, saying why). Never `playwright install`.
chromium:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium) \
		|| echo "chromium could not be installed: the browser tests will skip"; fi

# The README's screenshots of the web pages, taken by the browser tests.
screenshots: $(DEV) chromium
	KONTOR_SCREENSHOTS=docs/screenshots $(BIN)/pytest -p no:xdist -q tests/service/test_browser.py \
		tests/service/test_web_create.py

test: $(DEV) chromium
	$(MAKE) lint
	$(MAKE) typecheck
	$(MAKE) contracts
	$(BIN)/pytest -n auto --durations=15

run: $(RUNTIME)
	$(BIN)/python -m service.dev.devstack

# The same stack with the store on an embedded 3-master Valkey Cluster and the job queue on
# a Valkey of its own (docs/operations.md, "Scaling out").
run-cluster: $(RUNTIME)
	$(BIN)/python -m service.dev.devstack --cluster

openapi: $(DEV)
	$(BIN)/python -m service.dev.openapi

# A Python client of the API, generated from the committed openapi/openapi.json by the pinned
# openapi-python-client with openapi/openapi-python-client.yaml, into build/sdk/kontor-client
# (git-ignored; `pip install build/sdk/kontor-client` to use it elsewhere). How to sign for
# it: docs/signing.md.
SDK := build/sdk/kontor-client
sdk: $(DEV)
	mkdir -p build/sdk
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/openapi-python-client generate --path openapi/openapi.json \
		--output-path $(SDK) --overwrite --config openapi/openapi-python-client.yaml
	@echo "the generated client is in $(SDK) (package kontor_client); signing: docs/signing.md"

bench: $(RUNTIME)
	$(BIN)/python bench/engine_playouts.py

# The service benchmark: starts and stops its own stack (about a minute).
api-bench: $(RUNTIME)
	$(BIN)/python bench/api_bench.py

# Rewrite the golden playthroughs (tests/engine/<title>/playthroughs/) on purpose, after a
# change of rules or wording; review the diff before committing it.
playthroughs: $(DEV)
	$(BIN)/python -m tests.engine.playthroughs --write

play: $(RUNTIME)
	$(BIN)/python -m engine play haendler --seats 4 --bots greedy --seed 7

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache \
		.hypothesis .import_linter_cache
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
