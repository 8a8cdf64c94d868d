"""Where a suite's samples run: `local` (this process, asyncio) or `ray` (actors on a Ray cluster).

Either way the driver (the `harness run` process) alone schedules the samples, writes the Parquet and
trajectories, flushes on every finished run, draws the progress bar and resumes; only `Runner.run_sample`
moves. Ray is an optional extra, imported only when asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import UserError

if TYPE_CHECKING:
    from harness.run.runner import RunConfig, Runner

EXECUTORS = ("local", "ray")
RAY_MISSING = "--executor ray needs Ray: pip install 'harness[ray]' (or: pip install 'ray>=2.40')"


def import_ray() -> Any:
    """The `ray` module, or the one line that says what to install."""
    try:
        import ray
    except ImportError:
        raise UserError(RAY_MISSING) from None
    return ray


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
        from harness.run.runner import Runner

        self.check()
        if self.name == "ray":
            from harness.run.ray_cluster import RayRunner

            return RayRunner(config, address=self.ray_address, workers=self.ray_workers,
                             provider_factory=provider_factory)
        return Runner(config, provider=provider_factory() if provider_factory else None)
