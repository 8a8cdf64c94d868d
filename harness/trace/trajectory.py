"""The trajectory of one run, typed and versioned: what the agent did step by step, every LM call, every tool
call it made (in order, wherever it came from, each with the step that made it), and the probes a scorer made
after the run.

The format is declared once, here. The result store writes it (one JSON line per run next to the Parquet
file), scorers read its tool calls, the viewer reads it whole. Rule: a change to a field's meaning, a removed
field or a renamed one bumps TRAJECTORY_VERSION and adds an entry to UPGRADES that turns a line of the previous
version into the new one, so trajectories written by older harness versions stay readable. A new optional field
with a default needs no bump. Version 1 is every line written before the format had a version (no
`trajectory_version` key): untyped dicts, tool calls without their server, step or origin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from harness.errors import UserError
from harness.trace.calls import LMCall, ProbeCall, ToolCallRecord
from harness.trace.errors import RunError
from harness.trace.flat import from_flat, to_flat
from harness.trace.steps import CodeStep, ToolStep, TrajectoryStep, step_from_dict, step_to_dict

TRAJECTORY_VERSION = 4


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
    lm_calls: tuple[LMCall, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    probes: tuple[ProbeCall, ...] = ()
    server_logs: dict[str, str] = field(default_factory=dict)  # external server -> file its stderr went to
    tool_callers: dict[str, list[str]] = field(default_factory=dict)  # server -> who may call its tools (hybrid)
    trajectory_version: int = TRAJECTORY_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"trajectory_version": TRAJECTORY_VERSION, "task_id": self.task_id, "arm": self.arm,
                "model": self.model, "epoch": self.epoch, "prompt": self.prompt, "answer": self.answer,
                "expected": self.expected, "score_reason": self.score_reason,
                "error": to_flat(self.error) if self.error else None,
                "steps": [step_to_dict(s) for s in self.steps], "lm_calls": [to_flat(c) for c in self.lm_calls],
                "tool_calls": [to_flat(c) for c in self.tool_calls], "probes": [to_flat(p) for p in self.probes],
                "server_logs": dict(self.server_logs), "tool_callers": dict(self.tool_callers)}


def _attribute_v1_calls(steps: list[TrajectoryStep], calls: list[ToolCallRecord]) -> list[ToolCallRecord]:
    """A version 1 line's calls with the step that made each, as far as the line tells: a code step made as
    many as it counted (an execute step of codemode-fastmcp lists them), a tool step one call of the tool it
    named. Version 1 did not stamp calls as they were made, so this is the only way to read them."""
    pending = list(calls)
    attributed: list[ToolCallRecord] = []
    for index, step in enumerate(steps):
        listed = step.detail.get("tool_calls") if isinstance(step, ToolStep) else None
        if isinstance(step, CodeStep):
            take, in_code = step.tool_calls, True
        elif isinstance(listed, list):
            take, in_code = len(listed), True
        elif isinstance(step, ToolStep) and pending and pending[0].tool == step.calls[0].tool:
            take, in_code = 1, pending[0].in_code
        else:
            take, in_code = 0, False
        attributed += [replace(call, step=index, in_code=in_code or call.in_code) for call in pending[:take]]
        pending = pending[take:]
    return attributed + pending


def _v1_to_v2(line: dict[str, Any]) -> dict[str, Any]:
    """v2 typed the steps and tool calls: calls gained server (unknown: ""), step and in_code (attributed from the
    steps by count, as the viewer did), and the line gained probes (none)."""
    steps = [step_from_dict(s.get("kind", ""), _one_call_step(s)) for s in line.get("steps") or []
             if isinstance(s, dict)]
    calls = [from_flat(ToolCallRecord, c) for c in line.get("tool_calls") or []]
    return {**line, "trajectory_version": 2, "probes": [],
            "tool_calls": [to_flat(c) for c in _attribute_v1_calls(steps, calls)]}


def _v2_to_v3(line: dict[str, Any]) -> dict[str, Any]:
    """v3 named a code block's timeout `code_timeout` (a run's own timeout stays `timeout`), so a step's
    error_kind `timeout` becomes `code_timeout`; LM calls gained their step (unknown in older lines)."""
    steps = [{**s, "error_kind": "code_timeout"} if isinstance(s, dict) and s.get("error_kind") == "timeout" else s
             for s in line.get("steps") or []]
    return {**line, "trajectory_version": 3, "steps": steps}


def _one_call_step(step: dict[str, Any]) -> dict[str, Any]:
    """A tool step as versions 1 to 3 wrote it (one call: `tool` and `arguments` beside the step's fields) in the
    shape of version 4 (`calls`, each with its observation: the step's, the only call's)."""
    if step.get("kind") != "tool" or "calls" in step or "tool" not in step:
        return step
    rest = {k: v for k, v in step.items() if k not in ("tool", "arguments")}
    call = {"tool": step["tool"], "arguments": step.get("arguments") or {}, "observation": step.get("observation", "")}
    return {**rest, "calls": [call]}


def _v3_to_v4(line: dict[str, Any]) -> dict[str, Any]:
    """v4 let a tool step hold several calls (the direct arm runs every call of a reply): a step's `tool` and
    `arguments` became its one call in `calls`."""
    steps = [_one_call_step(s) if isinstance(s, dict) else s for s in line.get("steps") or []]
    return {**line, "trajectory_version": 4, "steps": steps}


# version -> function turning a line of that version into one of the next version
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}
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
        error=from_flat(RunError, error) if isinstance(error, dict) else None,
        steps=tuple(step_from_dict(s.get("kind", ""), s) for s in line.get("steps") or [] if isinstance(s, dict)),
        lm_calls=tuple(from_flat(LMCall, c) for c in line.get("lm_calls") or []),
        tool_calls=tuple(from_flat(ToolCallRecord, c) for c in line.get("tool_calls") or []),
        probes=tuple(from_flat(ProbeCall, p) for p in line.get("probes") or []),
        server_logs=dict(line.get("server_logs") or {}), tool_callers=dict(line.get("tool_callers") or {}))
