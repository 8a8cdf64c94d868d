"""What an arm is, declared once (the registry of them: harness.agents.arms): its agent, its program, how
`scripted:reference` replays a reference in it, where it comes from, and whether the run's scaffold shapes it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from harness.agents.scaffold import Scaffold

if TYPE_CHECKING:  # the registry is read by the CLI before anything heavy is imported
    import dspy

    from harness.agents.base import Agent
    from harness.agents.context import SampleContext
    from harness.agents.replay import ReferenceTrace
    from harness.models.scripted import Policy
    from harness.sandbox import SandboxPool
    from harness.tasks.task import Task

# (a task's traced reference, the task, whether the arm may run several calls of a reply, the run's context) -> the
# policy of `scripted:reference` replaying it on the run's servers through the arm's own protocol (`replays`)
Replay = Callable[["ReferenceTrace", "Task", bool, "SampleContext | None"], "Policy"]
# Where an arm comes from: built into the package, a Python callable from outside it (registered, or named on the
# command line as `agent:MODULE:FUNCTION`), or a command in any language (`cmd:COMMAND`).
ArmKind = Literal["builtin", "python", "command"]
SPEC_PREFIXES = ("agent:", "cmd:")  # arms named by what runs them (harness.agents.foreign)


@dataclass(frozen=True)
class Arm:
    """An arm, declared once. `module`: the module its agent lives in (nothing under harness/run imports it);
    `replay`: how `scripted:reference` replays a reference in this arm (None: it cannot, and a run of the arm on
    that model is refused); `native_tools`: the arm takes the model's native tool calls. `kind` and `source` say
    where it comes from (rows record both: `source` is the package and version behind an arm from outside, or its
    command); `scaffold_applies`: whether the run's scaffold shapes it (False for an agent measured as its own
    docs build it: no rule of the harness's is added to it, and its rows say so); `new_program` is None for an arm
    with no program of the harness's to tune."""

    name: str
    description: str
    needs_sandbox: bool
    new_program: Callable[[Scaffold], dspy.Module] | None  # the built-in prompt: what optimizers start from
    make_agent: Callable[[SandboxPool | None, dspy.Module, Scaffold], Agent]  # agent running with that program
    colour: str  # in figures; the arm's further groups (models, programs) are lighter shades of it
    replay: Replay | None
    check_available: Callable[[], None] = lambda: None  # raises UserError naming what to install, if anything
    # the arm runs several native tool calls of one reply when the scaffold's `parallel_tool_calls` is on (its
    # rows record that field; an arm without it runs one call per turn whatever the scaffold says)
    parallel_calls: bool = False
    module: str = ""
    native_tools: bool = False
    kind: ArmKind = "builtin"
    source: str = ""
    scaffold_applies: bool = True


@dataclass(frozen=True)
class RegisteredReplay:
    """An arm's replay: the replay protocol `protocol`, registered by `module` (harness.agents.replay.register_replay),
    which is imported on first use (the registry of arms imports nothing heavy)."""

    protocol: str
    module: str

    def check(self) -> None:
        """Its module imported and its protocol found: an unknown protocol is one line naming it and the known ones,
        before any run."""
        self.resolve()

    def resolve(self) -> Replay:
        from harness.agents.replay import replay_for

        importlib.import_module(self.module)
        return replay_for(self.protocol)

    def __call__(self, trace: ReferenceTrace, task: Task, parallel: bool, ctx: SampleContext | None) -> Policy:
        return self.resolve()(trace, task, parallel, ctx)


def replays(protocol: str, module: str) -> RegisteredReplay:
    """An arm's replay through `protocol`, the one the arm's or bridge's `module` registers when imported."""
    return RegisteredReplay(protocol, module)
