# Kontor developer tasks. Everything runs from the project's own .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.DEFAULT_GOAL := test
.PHONY: .venv venv lint typecheck contracts test run bench play clean openapi playthroughs

# The venv is (re)installed whenever pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -e '.[dev]'
	touch $(STAMP)

.venv venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

contracts: $(STAMP)
	$(BIN)/lint-imports --no-logo

test: $(STAMP)
	$(MAKE) lint
	$(MAKE) typecheck
	$(MAKE) contracts
	$(BIN)/pytest -n auto

run: $(STAMP)
	$(BIN)/python -m service.dev.devstack

openapi: $(STAMP)
	$(BIN)/python -m service.dev.openapi

bench: $(STAMP)
	$(BIN)/python bench/engine_playouts.py

# Rewrite the golden playthroughs (tests/engine/<title>/playthroughs/) on purpose, after a
# change of rules or wording; review the diff before committing it.
playthroughs: $(STAMP)
	$(BIN)/python -m tests.engine.playthroughs --write

play: $(STAMP)
	$(BIN)/python -m engine play haendler --seats 4 --bots greedy --seed 7

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache \
		.hypothesis .import_linter_cache
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
