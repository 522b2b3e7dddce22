# truc — the two commands are `make run` and `make test`; everything else is a helper.
# Every target sets up the virtual environment it needs (.venv at the repository root).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SEED ?= 7

.PHONY: run test lint format bench scenarios venv clean

## run: play a seeded match between engine bots and print it (later: the real services)
run: $(STAMP)
	$(BIN)/truc demo --seed $(SEED)

## test: lint, the public and rule scenarios, unit and property tests
test: lint $(STAMP)
	$(BIN)/truc scenario tests/scenarios/public/*.json tests/scenarios/rules/*.json > /dev/null
	$(BIN)/pytest

## lint: ruff (check + format) and mypy --strict
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## bench: engine speed (actions/s, hands/s, state size and codec round trip)
bench: $(STAMP)
	$(BIN)/python benchmarks/engine_bench.py

## scenarios: run every scenario file and print the result lines
scenarios: $(STAMP)
	$(BIN)/truc scenario tests/scenarios/public/*.json tests/scenarios/rules/*.json

venv: $(STAMP)

$(STAMP): constraints.txt requirements-dev.txt services/game/pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 is required"; exit 1; }
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt --no-build-isolation -e services/game
	touch $(STAMP)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
