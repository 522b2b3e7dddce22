# truc — the two commands are `make run` and `make test`; everything else is a helper.
# Every target sets up the virtual environment it needs (.venv at the repository root).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_CLIENT := clients/node
NODE_STAMP := $(NODE_CLIENT)/node_modules/.installed
HAVE_NODE := $(shell command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && echo yes)

PROTO_OUT := libs/protocol/src
PROTOC = PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m grpc_tools.protoc -I proto \
	--python_out=$(1) --mypy_out=$(1) --grpc_python_out=$(1) --mypy_grpc_out=$(1) \
	$(sort $(wildcard proto/truc/v1/*.proto))

.PHONY: run test test-unit lint format bench serve load scenarios venv clean proto proto-check openapi \
	openapi-check node-deps k8s-validate chaos soak browser

## run: start Redis, the game service and the lobby; six clients queue and play a match, told hand
## by hand (PLAY=1: you take one seat in the terminal against five bots; RULESET=french_truc,
## sackson_truc, partnership_truc or catalan_truc: a table of that game instead of truc_y_flou;
## ARGS="--target-score 3 --pace 0 ...": rule options and more for tools/run.py, see its --help;
## RUN_PACE=seconds: the pause after each hand, 1 by default)
run: $(STAMP)
	$(BIN)/python tools/run.py $(if $(filter-out 0,$(PLAY)),--play) $(if $(RULESET),--ruleset $(RULESET)) $(ARGS)

## test: lint, the OpenAPI document, the Kubernetes manifests, the public and rule scenarios,
## unit and property tests (and the Node.js client if node is here)
test: proto-check openapi-check lint k8s-validate node-deps browser $(STAMP)
	$(BIN)/truc scenario tests/scenarios/*/*.json > /dev/null
	$(BIN)/pytest

## test-unit: the fast unit tests only (no Redis, no servers, no processes): the inner loop
test-unit: $(STAMP)
	$(BIN)/pytest -m unit

## proto: format and lint the protocol (buf), check breaking changes against main, regenerate stubs
proto: $(STAMP)
	$(BIN)/buf format -w proto
	cd proto && ../$(BIN)/buf lint
	if git cat-file -e main:proto/buf.yaml 2>/dev/null; then \
		cd proto && ../$(BIN)/buf breaking --against '../.git#branch=main,subdir=proto'; fi
	rm -rf $(PROTO_OUT)/truc
	$(call PROTOC,$(PROTO_OUT))
	touch $(PROTO_OUT)/truc/__init__.py $(PROTO_OUT)/truc/v1/__init__.py $(PROTO_OUT)/truc/py.typed

## proto-check: the protocol is formatted, lints clean, and the committed stubs are up to date
proto-check: $(STAMP)
	$(BIN)/buf format --diff --exit-code proto
	cd proto && ../$(BIN)/buf lint
	rm -rf .proto-check && mkdir -p .proto-check
	$(call PROTOC,.proto-check)
	touch .proto-check/truc/__init__.py .proto-check/truc/v1/__init__.py .proto-check/truc/py.typed
	diff -r -x __pycache__ .proto-check/truc $(PROTO_OUT)/truc || { echo "generated stubs are stale: run make proto"; exit 1; }
	rm -rf .proto-check

## openapi: regenerate the gateway's OpenAPI document from the proto (routes, schemas, comments)
OPENAPI := services/gateway/src/truc_gateway/openapi.json
openapi: $(STAMP)
	$(BIN)/python -m truc_gateway.openapi $(OPENAPI) --proto-dir proto

## openapi-check: the checked-in OpenAPI document is up to date
openapi-check: $(STAMP)
	$(BIN)/python -m truc_gateway.openapi $(OPENAPI) --proto-dir proto --check

## lint: ruff (check + format) and mypy --strict
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## k8s-validate: render every kustomize overlay of deploy/k8s and validate it offline (strict schemas)
k8s-validate: $(STAMP)
	$(BIN)/python deploy/k8s/manifests.py

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## bench: engine speed (every rule set), the bots' win rates (500 matches per table), then
## SubmitAction through the service beside the floor of the stack, Play sessions (watched,
## unwatched, 5,000 idle) beside today's path and the floors, and Redis memory per game,
## action and finished match
bench: $(STAMP)
	$(BIN)/python benchmarks/engine_bench.py
	$(BIN)/python benchmarks/bots_bench.py --matches 500
	$(BIN)/python benchmarks/service_bench.py
	$(BIN)/python benchmarks/watch_bench.py
	$(BIN)/python benchmarks/matchmaking_bench.py
	$(BIN)/python benchmarks/lobby_bench.py
	$(BIN)/python benchmarks/rest_bench.py
	$(BIN)/python benchmarks/session_bench.py
	$(BIN)/python benchmarks/redis_memory_bench.py

## serve: Redis (bundled unless REDIS_URL is set), the game service on 50051, the lobby on 50052, the gateway on 8080
serve: $(STAMP)
	$(BIN)/python tools/serve.py

## load: scripted players against `make serve` (127.0.0.1:50052 / :50051); flags in ARGS=
load: $(STAMP)
	$(BIN)/truc load $(ARGS)

## chaos: the chaos suite on real processes (dev/chaos): faults for CHAOS_MINUTES (3) per appendfsync
## mode, then the invariant checks; ARGS= for more (ARGS="--report chaos.json"; python -m truc_chaos -h)
CHAOS_MINUTES ?= 3
chaos: $(STAMP)
	$(BIN)/python -m truc_chaos --minutes $(CHAOS_MINUTES) $(ARGS)

## soak: truc load at half the measured capacity for SOAK_MINUTES (30), a fault every minute,
## memory sampled every 10 s (flat or not), then the invariant checks; ARGS= for more
SOAK_MINUTES ?= 30
soak: $(STAMP)
	$(BIN)/python -m truc_chaos soak --minutes $(SOAK_MINUTES) $(ARGS)

## scenarios: run every scenario file (every rule set) and print the result lines
scenarios: $(STAMP)
	$(BIN)/truc scenario tests/scenarios/*/*.json

venv: $(STAMP)

## node-deps: npm ci for the Node.js client (clients/node); says so and does nothing without node and npm
node-deps: $(if $(HAVE_NODE),$(NODE_STAMP))
	@$(if $(HAVE_NODE),:,echo "node not found: skipping the Node.js client")

## browser: Debian's chromium and chromium-driver for the web app's browser tests (tests/browser),
## installed with apt-get when missing (as root, else with sudo; neither: a clear failure)
BROWSER_PACKAGES := chromium chromium-driver
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(BROWSER_PACKAGES); \
	elif command -v sudo >/dev/null 2>&1; then \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(BROWSER_PACKAGES); \
	else \
		echo "the browser tests need Debian's $(BROWSER_PACKAGES): install them (apt-get install --no-install-recommends $(BROWSER_PACKAGES)) or run as root or with sudo"; exit 1; \
	fi

# --ignore-scripts: no dependency needs an install script (protobufjs' only checks its CLI).
$(NODE_STAMP): $(NODE_CLIENT)/package.json $(NODE_CLIENT)/package-lock.json
	cd $(NODE_CLIENT) && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

$(STAMP): constraints.txt requirements-dev.txt services/game/pyproject.toml \
		services/lobby/pyproject.toml services/gateway/pyproject.toml clients/python/pyproject.toml \
		libs/rules/pyproject.toml libs/protocol/pyproject.toml libs/service/pyproject.toml libs/bots/pyproject.toml \
		libs/telemetry/pyproject.toml libs/redis/pyproject.toml dev/redis/pyproject.toml dev/chaos/pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 is required"; exit 1; }
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt --no-build-isolation \
		-e libs/rules -e libs/protocol -e libs/telemetry -e libs/redis -e libs/service -e libs/bots -e dev/redis \
		-e clients/python -e services/game -e services/lobby -e services/gateway -e dev/chaos
	touch $(STAMP)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
