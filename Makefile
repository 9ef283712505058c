# Herald. `make run` starts the whole stack; `make test` runs the suite.
# Both create the Python environment themselves from requirements.lock.

PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
VENV := .venv
UV := $(TOOLS)/bin/uv
PY := $(VENV)/bin/python
SERVICES := $(wildcard services/*)

.PHONY: run test test-fast lint typecheck protos protos-check lock clean clients-openapi

# Rooms with their own targets (deploy tooling, benchmarks) add them in these files;
# a room that needs something installed before the tests appends it to TEST_PREREQS.
TEST_PREREQS :=
-include deploy/deploy.mk bench/bench.mk tests/resilience/resilience.mk tests/console/console.mk clients/typescript/typescript.mk

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# The environment is rebuilt whenever the lock or a pyproject changes.
$(VENV)/.installed: $(UV) requirements.lock pyproject.toml $(wildcard services/*/pyproject.toml) clients/python/pyproject.toml
	test -d $(VENV) || $(UV) venv --quiet --python $(PYTHON) $(VENV)
	$(UV) pip sync --quiet --python $(VENV) --require-hashes requirements.lock
	$(UV) pip install --quiet --python $(VENV) --no-deps -e . $(addprefix -e ,$(SERVICES)) -e clients/python
	touch $@

env: $(VENV)/.installed

run: $(VENV)/.installed
	$(VENV)/bin/herald up $(ARGS)

# The lock is exported from uv's resolution without index URLs, so no
# registry host name is written into the repository (see docs/architecture.md).
lock: $(UV)
	$(UV) lock
	$(UV) export --all-packages --no-emit-workspace --frozen --quiet -o requirements.lock

protos: $(VENV)/.installed
	$(PY) protos/generate.py

# The OpenAPI document the SDK is built from, refreshed from a running gateway (`make run`);
# tests/test_python_sdk.py fails, naming the difference, while it is not the gateway's.
GATEWAY ?= http://127.0.0.1:8080
clients-openapi: $(VENV)/.installed
	$(PY) -c "import json, sys, httpx; json.dump(httpx.get(sys.argv[1] + '/openapi.json', timeout=60).raise_for_status().json(), open(sys.argv[2], 'w'), indent=1, sort_keys=True); open(sys.argv[2], 'a').write('\n')" $(GATEWAY) clients/openapi.json

protos-check: $(VENV)/.installed
	$(VENV)/bin/buf lint
	$(PY) protos/generate.py --check

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src services clients tests
	$(VENV)/bin/ruff format --check src services clients tests

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy $(addprefix -p ,herald $(notdir $(wildcard services/*/herald_*)))
	$(VENV)/bin/mypy clients/python/herald_webhooks clients/python/herald_client

# Four lanes at once, one worker process each (tests/support/lanes.py says which tests make which);
# LANES= runs the suite as one process.
LANES ?= -n 4

test: protos-check lint typecheck $(TEST_PREREQS)
	$(VENV)/bin/pytest -q $(LANES) $(PYTEST_ARGS)

# Skips the static checks, for quick iteration.
test-fast: $(VENV)/.installed
	$(VENV)/bin/pytest -q $(LANES) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(TOOLS) .herald .pytest_cache .mypy_cache .ruff_cache
