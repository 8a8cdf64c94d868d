"""Fixtures shared across tests/: one warm sandbox pool for the whole session (a new interpreter costs
~6 s, a lease of a warm one milliseconds), used by every test that runs code in the sandbox."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
async def sandbox_pool():
    from harness.sandbox import SandboxPool

    pool = SandboxPool(size=1)
    await pool.start(1)
    yield pool
    await pool.close()


@pytest.fixture(autouse=True)
def _free_embedded_engines(request):
    """After a test of the embedded model, collect the engines it built: a llama.cpp model and its context hold
    gigabytes the cycle collector does not see, so engines left in reference cycles (grammars, logits processors)
    would otherwise pile up across tests until the next full collection (the pytest process once peaked at 29 GB)."""
    yield
    if request.node.get_closest_marker("local_model") is not None:
        import gc

        gc.collect()


@pytest.fixture(autouse=True, scope="module")
def _close_agent_zygotes():
    """After each test module, end the agents' zygotes it started: the harness keeps one per agent for the life of
    its process (ended at exit), so every agent any test named kept a Python process alive for the rest of the
    session, beside the local-model tier (16 of them, 0.9 GB, halfway through a run). A module's tests still share
    theirs."""
    yield
    import sys

    if "harness.agents.isolation.pool" in sys.modules:
        sys.modules["harness.agents.isolation.pool"].close_zygotes()
