"""The trajectory of one run, typed and versioned: what the agent did step by step, every LM call, every tool
call it made (in order, wherever it came from), and the probes a scorer made after the run.

The format is declared once, here. The result store writes it (one JSON line per run next to the Parquet
file), scorers read its tool calls, the viewer reads it whole. Rule: a change to a field's meaning, a removed
field or a renamed one bumps TRAJECTORY_VERSION and adds an entry to UPGRADES that turns a line of the previous
version into the new one, so trajectories written by older harness versions stay readable. A new optional field
with a default needs no bump. Version 1 is every line written before the format had a version (no
`trajectory_version` key): untyped dicts, tool calls without their server, step or origin.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from harness.errors import UserError
from harness.tasks.matching import is_subset

TRAJECTORY_VERSION = 2


@dataclass(frozen=True)
class ToolCallRecord:
    """One MCP tool call the agent made. `step` is the index of the step whose action made it (None: not known),
    `in_code` whether code in a sandbox made it (code mode) rather than the model calling the tool itself."""

    tool: str
    arguments: dict[str, Any]
    is_error: bool = False
    result_preview: str = ""
    result_chars: int = 0
    duration_s: float = 0.0
    started_s: float = 0.0  # seconds since the run's servers opened
    server: str = ""  # empty in version 1 lines (not recorded then)
    step: int | None = None
    in_code: bool = False

    def matches(self, tool: str, arguments: dict[str, Any] | None = None, server: str | None = None) -> bool:
        """Whether this call is of `tool` (a name or a glob such as `delete_*`), on `server` if given, with
        arguments holding `arguments` (a subset: extra arguments are fine)."""
        return (fnmatch.fnmatchcase(self.tool, tool) and (server is None or self.server == server)
                and (not arguments or is_subset(arguments, self.arguments)))


@dataclass(frozen=True)
class ProbeCall:
    """A read-only tool call a scorer made on the run's own servers after the agent ended (a probe): not one of
    the agent's tool calls, and not counted as one."""

    server: str
    tool: str
    arguments: dict[str, Any]
    is_error: bool = False
    result_preview: str = ""
    result_chars: int = 0
    duration_s: float = 0.0


@dataclass(frozen=True)
class LMCallRecord:
    messages: list[dict[str, Any]]
    output: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reused_prompt_tokens: int = 0
    reuse_source: str = "none"  # none, context (the previous call), prefix_cache (the engine's), provider
    latency_s: float = 0.0
    cached: bool = False
    grammar: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class RunError:
    type: str
    message: str
    permanent: bool = False
    server: str = ""  # the server that did not start (server_error)


# ---- steps: one dataclass per kind. Every step keeps the rules that fired at it (the scaffold's names) and the
# arm-specific fields it has no field for in `detail` (written back flat, so nothing an arm records is lost).

@dataclass(frozen=True)
class ToolStep:
    """The model called one tool (direct, react, the meta-tools of codemode-fastmcp)."""

    kind: ClassVar[str] = "tool"
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    thought: str = ""
    observation: str = ""
    repeat_of: int | None = None
    rules: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CodeStep:
    """The model wrote code that ran in the sandbox (code mode); `tool_calls` is how many tools it called."""

    kind: ClassVar[str] = "code"
    code: str
    stdout: str = ""
    error: str | None = None
    error_kind: str | None = None
    duration_s: float = 0.0
    tool_calls: int = 0
    observation: str = ""
    repeat_of: int | None = None
    rules: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AnswerStep:
    """The model replied with an answer and no action (accepted, or refused with an observation saying why)."""

    kind: ClassVar[str] = "answer"
    text: str
    observation: str = ""
    repeat_of: int | None = None
    rules: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class UnparsedStep:
    """A reply that could not be read as an action."""

    kind: ClassVar[str] = "unparsed"
    error: str = ""
    text: str = ""
    observation: str = ""
    repeat_of: int | None = None
    rules: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)


TrajectoryStep = ToolStep | CodeStep | AnswerStep | UnparsedStep
STEP_TYPES: dict[str, type] = {cls.kind: cls for cls in (ToolStep, CodeStep, AnswerStep, UnparsedStep)}


def step_from_dict(kind: str, content: dict[str, Any]) -> TrajectoryStep:
    """A step from its kind and flat fields (what an arm records, or a JSON line); an unknown kind, or a step
    without its kind's required field, is kept as an unparsed step that says so."""
    cls = STEP_TYPES.get(kind)
    if cls is None:
        return UnparsedStep(error=f"step of unknown kind {kind!r}", detail=dict(content))
    try:
        return _from_flat(cls, content)
    except TypeError:  # a step missing its kind's own field (an old or hand-edited line): kept, and said so
        return UnparsedStep(error=f"{kind} step without its fields", detail=dict(content))


def step_to_dict(step: TrajectoryStep) -> dict[str, Any]:
    return {"kind": step.kind, **_to_flat(step)}


def _from_flat(cls: type, content: dict[str, Any]) -> Any:
    known = {f.name for f in fields(cls)} - {"detail"}
    values = {name: content[name] for name in known if name in content}
    if "rules" in values:
        values["rules"] = tuple(values["rules"] or ())
    detail = {k: v for k, v in content.items() if k not in known and k != "kind"}
    return cls(**values, detail=detail) if "detail" in {f.name for f in fields(cls)} else cls(**values)


def _to_flat(value: Any) -> dict[str, Any]:
    out = {f.name: getattr(value, f.name) for f in fields(value) if f.name != "detail"}
    if "rules" in out:
        out["rules"] = list(out["rules"])
    return {**out, **getattr(value, "detail", {})}


@dataclass(frozen=True)
class Trajectory:
    """One run as the trajectory file holds it."""

    task_id: str
    arm: str
    model: str
    epoch: int
    prompt: str
    answer: str
    expected: Any = None
    score_reason: str = ""
    error: RunError | None = None
    steps: tuple[TrajectoryStep, ...] = ()
    lm_calls: tuple[LMCallRecord, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    probes: tuple[ProbeCall, ...] = ()
    server_logs: dict[str, str] = field(default_factory=dict)  # external server -> file its stderr went to
    trajectory_version: int = TRAJECTORY_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"trajectory_version": TRAJECTORY_VERSION, "task_id": self.task_id, "arm": self.arm,
                "model": self.model, "epoch": self.epoch, "prompt": self.prompt, "answer": self.answer,
                "expected": self.expected, "score_reason": self.score_reason,
                "error": _to_flat(self.error) if self.error else None,
                "steps": [step_to_dict(s) for s in self.steps], "lm_calls": [_to_flat(c) for c in self.lm_calls],
                "tool_calls": [_to_flat(c) for c in self.tool_calls], "probes": [_to_flat(p) for p in self.probes],
                "server_logs": dict(self.server_logs)}


def attribute_calls(steps: tuple[TrajectoryStep, ...] | list[TrajectoryStep],
                    calls: list[ToolCallRecord]) -> list[ToolCallRecord]:
    """The calls with the step that made each: a code step made as many as it counted (an execute step of
    codemode-fastmcp lists them), a tool step one call of the tool it named (none when it ended the run or named
    no such tool); calls made in code are marked so. Calls are in order, so counting attributes them exactly."""
    pending = list(calls)
    attributed: list[ToolCallRecord] = []
    for index, step in enumerate(steps):
        listed = step.detail.get("tool_calls") if isinstance(step, ToolStep) else None
        if isinstance(step, CodeStep):
            take, in_code = step.tool_calls, True
        elif isinstance(listed, list):
            take, in_code = len(listed), True
        elif isinstance(step, ToolStep) and pending and pending[0].tool == step.tool:
            take, in_code = 1, pending[0].in_code
        else:
            take, in_code = 0, False
        for call in pending[:take]:
            attributed.append(_replace(call, step=index, in_code=in_code or call.in_code))
        pending = pending[take:]
    return attributed + pending


def _replace(call: ToolCallRecord, **changes: Any) -> ToolCallRecord:
    return ToolCallRecord(**{**_to_flat(call), **changes})


def _v1_to_v2(line: dict[str, Any]) -> dict[str, Any]:
    """v2 typed the steps and tool calls: calls gained server (unknown: ""), step and in_code (attributed from the
    steps by count, as the viewer did), and the line gained probes (none)."""
    steps = [step_from_dict(s.get("kind", ""), s) for s in line.get("steps") or [] if isinstance(s, dict)]
    calls = [_from_flat(ToolCallRecord, c) for c in line.get("tool_calls") or []]
    return {**line, "trajectory_version": 2, "probes": [],
            "tool_calls": [_to_flat(c) for c in attribute_calls(steps, calls)]}


# version -> function turning a line of that version into one of the next version
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}
assert set(UPGRADES) == set(range(1, TRAJECTORY_VERSION)), "every older trajectory version needs its upgrade step"


def trajectory_from_json(line: dict[str, Any]) -> Trajectory:
    """A trajectory line of any known version (older ones upgraded in memory); a newer one is refused."""
    version = line.get("trajectory_version", 1)
    if not isinstance(version, int) or not 1 <= version <= TRAJECTORY_VERSION:
        raise UserError(f"trajectory version {version}, this harness reads versions 1 to {TRAJECTORY_VERSION} "
                        "(upgrade the harness to read it)")
    for step in range(version, TRAJECTORY_VERSION):
        line = UPGRADES[step](line)
    error = line.get("error")
    return Trajectory(
        task_id=line.get("task_id", ""), arm=line.get("arm", ""), model=line.get("model", ""),
        epoch=line.get("epoch", 0), prompt=line.get("prompt", ""), answer=line.get("answer", ""),
        expected=line.get("expected"), score_reason=line.get("score_reason", ""),
        error=_from_flat(RunError, error) if isinstance(error, dict) else None,
        steps=tuple(step_from_dict(s.get("kind", ""), s) for s in line.get("steps") or [] if isinstance(s, dict)),
        lm_calls=tuple(_from_flat(LMCallRecord, c) for c in line.get("lm_calls") or []),
        tool_calls=tuple(_from_flat(ToolCallRecord, c) for c in line.get("tool_calls") or []),
        probes=tuple(_from_flat(ProbeCall, p) for p in line.get("probes") or []),
        server_logs=dict(line.get("server_logs") or {}))
