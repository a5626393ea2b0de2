# mnemo: make help lists every target.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
export PYTHONPATH := $(CURDIR)/libs:$(CURDIR)
export HF_HUB_OFFLINE := 1
# Every package comes from uv.lock (all extras, and the model packages of pyproject's
# "models" group, without their dependencies); `make lock` refreshes it on purpose.
UV_VERSION := 0.13.9
# The interpreter: PYTHON=/path/to/python3.x, else the first of python3, python3.13,
# python3.12, python3.11 that is a supported version (scripts/venv.sh).
PYTHON ?=
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
export UV_PYTHON_DOWNLOADS := never

.PHONY: help install run test test-unit test-integration test-kafka lint format kafka-up kafka-down \
        run-distributed bench bench-distributed soak docs clean lock check-lock

help: ## Show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml uv.lock Makefile scripts/venv.sh
	PYTHON="$(PYTHON)" VENV="$(VENV)" UV_VERSION=$(UV_VERSION) bash scripts/venv.sh
	$(UV) sync -q --locked --all-extras --compile-bytecode --python $(PY) || { echo "make install: if uv says \
	  the lockfile needs to be updated, pyproject.toml changed: run 'make lock' (docs/guides/install.md)" >&2; exit 1; }
	touch $@

install: $(VENV)/.installed ## Create .venv and install exactly uv.lock (all extras, the model packages)

lock: ## Refresh uv.lock from pyproject.toml (after changing a dependency; see docs/guides/install.md)
	PYTHON="$(PYTHON)" VENV="$(VENV)" UV_VERSION=$(UV_VERSION) bash scripts/venv.sh
	@# After a merge that left conflict markers in uv.lock: start from the committed lock
	@# (uv keeps its pins and adds what the merged pyproject.toml needs).
	@if grep -q '^<<<<<<< ' uv.lock 2>/dev/null; then \
	  echo "uv.lock has merge conflicts: starting again from HEAD's uv.lock"; \
	  git show HEAD:uv.lock > uv.lock; fi
	$(UV) lock

check-lock: ## Fail when uv.lock and pyproject.toml disagree, or .venv differs from uv.lock
	$(UV) lock --check
	$(UV) sync --locked --all-extras --check

run: install ## Start mnemo on its embedded default (Postgres, workers, gateway) on 127.0.0.1:8080
	$(VENV)/bin/mnemo serve

test: install ## Run the whole suite: unit, integration (embedded Postgres) and Kafka (real broker)
	bash scripts/test.sh

test-unit: install ## Unit tests only (no network, no database)
	$(PY) -m pytest tests/unit -q

lint: install ## ruff (lint + format check), mypy and the import contracts (import-linter)
	$(VENV)/bin/ruff check libs services tests bench
	$(VENV)/bin/ruff format --check libs services tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

format: install ## Format and auto-fix with ruff
	$(VENV)/bin/ruff format libs services tests bench
	$(VENV)/bin/ruff check --fix libs services tests bench

kafka-up: ## Start the local Kafka broker (KRaft, 127.0.0.1:9092) from Maven Central jars
	bash deploy/kafka/kafka.sh up

kafka-down: ## Stop the local Kafka broker
	bash deploy/kafka/kafka.sh down

run-distributed: install ## Broker, gateway and the four stage services as local processes (Ctrl-C stops all)
	PYTHON=$(PY) bash scripts/run-distributed.sh

bench: install ## Run the benchmarks and print one table of figures
	$(PY) -m bench.run

bench-distributed: install ## Only the bench's distributed section (Kafka, 1/2/4 replicas, beside embedded)
	$(PY) -m bench.run --only 6

soak: install ## The soak: 30 minutes of steady load per mode, watched over time (bench/results/soak-*)
	$(PY) -m bench.soak

docs: install ## Build the docs site into ./site in strict mode (references generated from the code)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
