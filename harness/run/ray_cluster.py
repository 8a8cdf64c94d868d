"""Samples on Ray actors: each actor (a `SampleWorker`) holds its own Runner, i.e. its own model provider (one
embedded model per actor, its calls serialized there as in one local process), warm sandbox pool and servers.

The driver is a Runner too (`RayRunner`): the same `run` schedules the samples, writes every record and
trajectory, flushes, reports progress and resumes; only `run_sample` sends the sample to a free worker slot and
awaits its (record, trajectory). A worker process that dies takes its runs with it: Ray restarts the actor
and the driver sends those samples again (to any worker), so a lost worker costs time, never rows.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.env import configure_environment
from harness.errors import UserError
from harness.plugins import load_plugins
from harness.run.records import RunRecord, sample_id
from harness.run.runner import RunConfig, Runner, RunSummary, Sample, SampleResult
from harness.trace.transcript_file import TranscriptWriter, transcript_file_name

MAX_WORKER_LOSSES = 3  # a sample whose worker dies this often stops the suite (it likely kills workers itself)
ACTOR_RESTARTS = 3  # per actor; past them the actor is gone and the others carry on
# Settings of the driver that change how a run goes; a worker on another node needs them too. Paths
# (HARNESS_CACHE_DIR, HARNESS_LOCAL_MODEL, HARNESS_MCP_CONFIG, ...) are the node's own business.
FORWARDED_ENV = ("HARNESS_LOCAL_N_CTX", "HARNESS_LOCAL_THREADS", "HARNESS_SCRIPTED_LATENCY_S")


RAY_MISSING = "--executor ray needs Ray: pip install 'harness[ray]' (or: pip install 'ray>=2.40')"


def import_ray() -> Any:
    """The `ray` module, or the one line that says what to install."""
    try:
        import ray
    except ImportError:
        raise UserError(RAY_MISSING) from None
    return ray


@dataclass(frozen=True)
class WorkerPaths:
    """What `Runner.run_sample` uses of the driver's ResultStore: where external servers' logs go and how a row
    names its trajectory. A worker must not open the results file; only the driver writes it."""

    trajectory_path: Path

    def trajectory_ref(self, sample: str) -> str:
        return f"{self.trajectory_path.name}#{sample}"

    def open_transcript(self, sample: str, start: dict[str, Any]) -> TranscriptWriter:
        """The run's transcript file, beside the driver's (on the worker's disk: the same one on a local cluster)."""
        name = self.trajectory_path.name.replace(".trajectories.jsonl", ".transcripts")
        folder = self.trajectory_path.with_name(name)
        return TranscriptWriter(folder / transcript_file_name(sample), {"sample_id": sample, **start})


class SampleWorker:
    """The body of one Ray actor: a Runner for `slots` concurrent samples. A UserError while building it (say, no
    model weights on this node) is kept and reported by `ready`, so the driver can print it in one line."""

    def __init__(self, config: RunConfig, provider_factory: Callable[[], Any] | None = None):
        configure_environment()
        self.error = ""
        try:
            load_plugins()  # a worker is a new process: the driver's plugins register here too
            self.runner: Runner | None = Runner(config, provider=provider_factory() if provider_factory else None)
        except UserError as exc:
            self.runner, self.error = None, str(exc)

    async def ready(self) -> tuple[int, str]:
        """(pid, error): warms the sandbox pool first, so the first samples do not pay for it."""
        if self.runner is not None and self.runner.pool is not None:
            await self.runner.pool.start()
        return os.getpid(), self.error

    async def run(self, sample: Sample, run_id: str, trajectory_path: Path) -> SampleResult:
        assert self.runner is not None
        return await self.runner.run_sample(sample, run_id, WorkerPaths(trajectory_path))  # type: ignore[arg-type]


@dataclass
class _Worker:
    """The driver's view of one actor: its handle, slots, pid once ready, and which incarnation its slots are
    from (slots of an incarnation that died are dropped, not reused)."""

    actor: Any
    slots: int
    pid: int = 0
    generation: int = 0
    alive: bool = True


def connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at `address` ($RAY_ADDRESS, a `ray start` cluster on this machine, else a new local one).
    True when this call connected (and the caller should disconnect). Keeps the harness's SIGTERM handling:
    ray.init would replace it with a bare exit."""
    if ray.is_initialized():
        return False
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING, configure_logging=True)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise UserError(f"cannot reach the Ray cluster at {address or os.environ.get('RAY_ADDRESS') or 'local'}: "
                        f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return True


def _user_error(exc: BaseException) -> BaseException:
    """A UserError raised on a worker, as the one line it is on the driver (Ray wraps it with a traceback)."""
    cause = getattr(exc, "cause", None)
    return UserError(str(cause)) if isinstance(cause, UserError) else exc


class RayRunner(Runner):
    """A Runner whose samples run on Ray actors. The driver itself holds no model and no sandbox."""

    def __init__(self, config: RunConfig, address: str | None = None, workers: int = 0,
                 provider_factory: Callable[[], Any] | None = None):
        self.config, self.provider, self.pool, self._owns_pool, self._agents = config, None, None, False, {}
        self.flush_events = True  # each event flushed to its run's file as it happens, as Runner does
        self.address, self.wanted_workers, self.provider_factory = address, workers, provider_factory
        self.workers: list[_Worker] = []
        self._slots: asyncio.Queue = asyncio.Queue()
        self._welcomes: list[asyncio.Future] = []

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the workers that are up (tests kill one to see its samples recovered)."""
        return [w.pid for w in self.workers if w.alive and w.pid]

    async def run(self, on_record: Callable[[RunRecord], None] | None = None,
                  on_start: Callable[[int, int], None] | None = None) -> RunSummary:
        ray = import_ray()
        connected = connect(ray, self.address)
        try:
            self._start_workers(ray)
            return await super().run(on_record=on_record, on_start=on_start)
        finally:
            for welcome in self._welcomes:
                welcome.cancel()
            for worker in self.workers:
                ray.kill(worker.actor, no_restart=True)
            if connected:
                ray.shutdown()

    def _start_workers(self, ray: Any) -> None:
        """`--max-concurrency` runs in flight in all, spread over the workers: one worker per CPU of the cluster
        unless --ray-workers says otherwise. A worker Ray cannot place yet (no free CPU) gets work once it can."""
        concurrency = self.config.max_concurrency
        count = self.wanted_workers or max(1, min(concurrency, int(ray.cluster_resources().get("CPU", 1))))
        slots = math.ceil(concurrency / count)
        env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
        remote = ray.remote(SampleWorker).options(
            num_cpus=1, max_restarts=ACTOR_RESTARTS, max_task_retries=0, max_concurrency=slots,
            runtime_env={"env_vars": env} if env else None)
        worker_config = replace(self.config, max_concurrency=slots)  # the size of each worker's sandbox pool
        for _ in range(count):
            worker = _Worker(remote.remote(worker_config, self.provider_factory), slots)
            self.workers.append(worker)
            self._welcome(worker)

    def _welcome(self, worker: _Worker) -> None:
        """Offer the worker's slots once it is up (again, after a restart)."""
        ray = import_ray()

        async def wait_until_ready() -> None:
            try:
                worker.pid, error = await worker.actor.ready.remote()
            except ray.exceptions.RayActorError:  # restarts used up, or it could not be placed or built
                worker.alive = False
                if not any(w.alive for w in self.workers):
                    self._slots.put_nowait(RuntimeError("every Ray worker died; see the Ray logs "
                                                        "(/tmp/ray/session_latest/logs on each node)"))
                return
            except ray.exceptions.RayTaskError as exc:  # its sandbox would not start (say, no `harness setup`)
                self._slots.put_nowait(_user_error(exc))
                return
            if error:
                self._slots.put_nowait(UserError(f"Ray worker {worker.pid}: {error}"))
                return
            for _ in range(worker.slots):
                self._slots.put_nowait((worker, worker.generation))

        self._welcomes.append(asyncio.ensure_future(wait_until_ready()))

    async def _free_slot(self) -> tuple[_Worker, int]:
        while True:
            slot = await self._slots.get()
            if isinstance(slot, BaseException):
                self._slots.put_nowait(slot)  # every waiting sample sees it
                raise slot
            worker, generation = slot
            if worker.alive and generation == worker.generation:
                return slot

    def _lost(self, worker: _Worker, generation: int) -> None:
        if generation == worker.generation:  # the first of its runs to notice: wait for Ray's restart
            worker.generation += 1
            worker.pid = 0
            self._welcome(worker)

    async def run_sample(self, sample: Sample, run_id: str, store: Any,
                         on_interrupt: Callable[[SampleResult], None] | None = None) -> SampleResult:
        """The sample on a free worker slot; a sample of a session carries the state it starts from there and
        its result brings back the state it left (the driver runs a session's samples one after another). An
        interrupt stops the driver's wait: the worker's run in flight leaves no row (`on_interrupt` is not
        called), and a resumed run runs it again, as a run that was never started."""
        ray = import_ray()
        for _ in range(MAX_WORKER_LOSSES):
            worker, generation = await self._free_slot()
            try:
                result = await worker.actor.run.remote(sample, run_id, store.trajectory_path)
            except ray.exceptions.RayActorError:  # the worker died mid-run: run the sample again elsewhere
                self._lost(worker, generation)
                continue
            except ray.exceptions.RayTaskError as exc:
                raise _user_error(exc) from None
            self._slots.put_nowait((worker, generation))
            return result
        sid = sample_id(sample.task.id, sample.arm, self.config.model, sample.epoch)
        raise RuntimeError(f"{sid}: its Ray worker died {MAX_WORKER_LOSSES} times while running it; stopped "
                           f"(resume the run once the cause is fixed, see /tmp/ray/session_latest/logs)")
