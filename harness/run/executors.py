"""Where a suite's samples run: `local` (this process, asyncio) or `ray` (actors on a Ray cluster).

Either way the driver (the `harness run` process) alone schedules the samples, writes the Parquet and
trajectories, flushes on every finished run, draws the progress bar and resumes; only `Runner.run_sample`
moves. Ray is an optional extra, imported only when asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.errors import UserError
from harness.run.ray_cluster import RayRunner, import_ray
from harness.run.runner import RunConfig, Runner, RunSummary

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Executor:
    """How to run samples. `ray_address`: an existing cluster (None: $RAY_ADDRESS, else a local one);
    `ray_workers`: actors to start (0: one per CPU of the cluster, at most --max-concurrency)."""

    name: str = "local"
    ray_address: str | None = None
    ray_workers: int = 0

    def check(self) -> None:
        if self.name not in EXECUTORS:
            raise UserError(f"unknown executor '{self.name}': use one of {', '.join(EXECUTORS)}")
        if self.ray_workers < 0:
            raise UserError("--ray-workers must be 0 (one per CPU) or more")
        if self.name == "ray":
            import_ray()

    def runner(self, config: RunConfig, provider_factory: Callable[[], Any] | None = None) -> Runner:
        """A Runner for `config` on this executor. `provider_factory` builds a model provider in each worker
        (for providers no model string names, such as a benchmark's scripted model)."""
        self.check()
        if self.name == "ray":
            return RayRunner(config, address=self.ray_address, workers=self.ray_workers,
                             provider_factory=provider_factory)
        return Runner(config, provider=provider_factory() if provider_factory else None)


def run_suite(config: RunConfig, executor: Executor | None = None, **callbacks: Any) -> RunSummary:
    """Run a suite to the end (blocking) and return where its results are: locally, or on the executor given."""
    return asyncio.run((executor or Executor()).runner(config).run(**callbacks))
