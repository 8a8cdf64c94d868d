"""`harness setup`: everything a first run would otherwise do slowly — assemble and verify the embedded
model, pre-fetch Pyodide into the Deno cache, and warm one sandbox to prove it works offline; with --js-codemodes, the
JavaScript code modes' npm packages (installed once, offline after)."""

from __future__ import annotations

import asyncio
import time

import typer

from harness.cli.app import app
from harness.cli.app import console as new_console


async def _warm_sandbox() -> float:
    from harness.sandbox import SandboxPool

    started = time.perf_counter()
    pool = SandboxPool(size=1)
    try:
        await pool.start(1)
        async with pool.lease(lambda name, args: None) as sandbox:
            result = await sandbox.execute("print(6 * 7)")
        if result.stdout.strip() != "42":
            raise RuntimeError(f"sandbox self-test printed {result.stdout!r} ({result.error})")
    finally:
        await pool.close()
    return time.perf_counter() - started


@app.command()
def setup(
    model: str = typer.Option("local", "--model", envvar="HARNESS_MODEL",
                              help="the local model to assemble and verify; a hosted model skips this step"),
    sandbox: bool = typer.Option(True, "--sandbox/--no-sandbox", help="pre-fetch Pyodide and test a sandbox"),
    js_codemodes: bool = typer.Option(False, "--js-codemodes", help="install the JavaScript code modes' pinned npm "
                                      "packages (their arms run in Node and workerd) with npm ci"),
) -> None:
    """Prepare this machine: the embedded model (assembled once, hash-verified) and the offline sandbox. Without the
    `local` extra (llama-cpp-python) there is no embedded model to prepare: one line says so and how to add it."""
    from harness.models.families import family_of

    console = new_console()
    step = family_of(model).setup  # the model's own preparation, if it needs any
    if step is not None:
        console.print(step(model), markup=False, soft_wrap=True)
    if sandbox:
        from harness.sandbox import ensure_pyodide_cached

        started = time.perf_counter()
        ensure_pyodide_cached()
        console.print(f"pyodide: cached for offline use ({time.perf_counter() - started:.1f} s)")
        console.print(f"sandbox: started and answered offline ({asyncio.run(_warm_sandbox()):.1f} s)")
    if js_codemodes:
        from harness.agents.bridges.js_install import install

        started = time.perf_counter()
        folder = install()
        console.print(f"js-codemodes: npm packages installed in {folder.parent} "
                      f"({time.perf_counter() - started:.1f} s)", markup=False, soft_wrap=True)
