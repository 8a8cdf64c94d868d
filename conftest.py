"""Pytest configuration shared by tests/: markers for slow tiers, offline settings, a clean dspy per test.

Markers (CI runs them all; locally deselect with -m "not local_model" etc.):
- sandbox: needs Deno + Pyodide (a shared warm pool keeps these fast)
- local_model: loads the embedded GGUF model (needs the `local` extra)
- integration: starts real subprocesses (stdio MCP servers, npx)
- cli: runs the harness command in a subprocess, as a user would
- chromium: renders HTML in headless Chromium
- ray: starts a local Ray cluster (needs the `ray` extra)
"""

from __future__ import annotations

import os

import pytest

from harness.env import configure_environment

configure_environment()
os.environ.setdefault("MPLBACKEND", "Agg")

MARKERS = {
    "sandbox": "needs Deno + Pyodide (shares a warm sandbox pool)",
    "local_model": "loads the embedded GGUF model through llama-cpp-python",
    "integration": "starts real subprocesses (stdio MCP servers, npx)",
    "cli": "runs the harness command in a subprocess, as a user would (seconds each)",
    "chromium": "renders HTML in headless Chromium",
    "ray": "starts a local Ray cluster (ray.init(num_cpus=2)); needs the ray extra",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


@pytest.fixture(autouse=True)
def _fresh_dspy_settings():
    """dspy.configure is process-global: give every test a clean slate."""
    import dspy

    with dspy.context(lm=None, adapter=None):
        yield
