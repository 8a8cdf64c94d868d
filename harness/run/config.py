"""A run's configuration: the suite, the model, the arms and every option that shapes what is measured."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.arms import DEFAULT_ARMS
from harness.agents.scaffold import Scaffold, default_scaffold
from harness.errors import UserError
from harness.limits import AgentIsolation, Limits
from harness.models.cache import CACHE_MODES, CacheMode
from harness.models.families import default_user_model, family_of
from harness.tasks.task import Suite

DEFAULT_LIMITS = Limits()  # the limit options' defaults are the Limits' own


@dataclass(frozen=True)
class RunConfig:
    suite: Suite
    model: str
    arms: tuple[str, ...] = DEFAULT_ARMS
    epochs: int = 1
    task_ids: tuple[str, ...] = ()
    out_dir: Path = Path("results")
    run_id: str = ""
    timeout_s: float = DEFAULT_LIMITS.timeout_s
    max_concurrency: int = 1
    api_base: str | None = None
    cache: CacheMode = "resume"  # which stored LM answers a call may reuse (harness.models.cache.CACHE_MODES)
    tool_timeout_s: float = DEFAULT_LIMITS.tool_timeout_s
    program_path: str = ""
    program_hash: str = ""
    program_state: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    max_tokens_per_run: int | None = None
    max_cost_per_run: float | None = None
    scaffold: Scaffold | None = None  # None: the model's default (harness.agents.scaffold.default_scaffold)
    max_tool_result_mb: float | None = DEFAULT_LIMITS.max_tool_result_mb  # a larger result is a tool error; None: none
    tool_latency_s: float = DEFAULT_LIMITS.tool_latency_s  # added to every tool call, inside its tool timeout
    user_model: str = ""  # a conversation task's simulated user; empty: default_user_model(model)
    judge_model: str = ""  # the scorers' judge model (tau2's NL assertions); empty: none, and they are not scored
    # not in the manifest: it changes no measurement, and a resumed run may need a longer one
    server_start_timeout_s: float = DEFAULT_LIMITS.server_start_timeout_s
    max_turns: int | None = None  # None: each task's own (a benchmark scaffold's turn_limit comes first)
    context_window: int | None = None  # tokens, as stated (--context-window); None: the model's own, where known
    agent_isolation: AgentIsolation = DEFAULT_LIMITS.agent_isolation  # Python agents from outside: a process per run
    agent_memory_mb: int | None = None  # address space of each agent process (--agent-memory); None: no limit

    def __post_init__(self) -> None:
        # a path as the user passes it (harness.evaluate(..., out_dir="results")): str or Path
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        if isinstance(self.cache, bool):  # the API before cache modes: cache=True/False, read as a manifest reads it
            object.__setattr__(self, "cache", "resume" if self.cache else "off")
        if self.cache not in CACHE_MODES:
            raise UserError(f"cache={self.cache!r}: give one of {', '.join(map(repr, CACHE_MODES))} (resume: reuse this "
                            "run's own answers; replay: any run's; off: none)")

    @property
    def limits(self) -> Limits:
        """The run's limits as one value (harness.limits.Limits): what every run is handed and what is recorded. The
        context window is the stated one, else the model's own as its family knows it (None: unknown)."""
        return Limits(timeout_s=self.timeout_s, tool_timeout_s=self.tool_timeout_s,
                      server_start_timeout_s=self.server_start_timeout_s, max_tool_result_mb=self.max_tool_result_mb,
                      tool_latency_s=self.tool_latency_s, max_turns=self.max_turns,
                      max_tokens_per_run=self.max_tokens_per_run, max_cost_per_run=self.max_cost_per_run,
                      context_window=self.context_window or family_of(self.model).context_window(self.model),
                      agent_isolation=self.agent_isolation, agent_memory_mb=self.agent_memory_mb)

    @property
    def user(self) -> str:
        """The model that plays the user of conversation tasks: the one given, else the run's own model (a
        scripted model's user is `scripted:user`: a reference replay or garbage cannot play a user)."""
        return self.user_model or default_user_model(self.model)

    @property
    def rules(self) -> Scaffold:
        """The scaffold the run is under: the one given, or the model's default."""
        return self.scaffold or default_scaffold(self.model)

