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
