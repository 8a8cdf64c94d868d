"""The trajectory of one run, typed and versioned: its transcript (harness.trace.transcript), the events in the
order they happened: every step, LM call, tool call (wherever it came from, each with the step that made it), code
execution, answer, probe and the score, whatever ended the run.

The format is declared once, here. The result store writes it (one JSON line per run next to the Parquet
file), scorers read its tool calls, the viewer reads it whole. Rule: a change to a field's meaning, a removed
field or a renamed one bumps TRAJECTORY_VERSION and adds an entry to UPGRADES that turns a line of the previous
version into the new one, so trajectories written by older harness versions stay readable. A new optional field
with a default needs no bump. Version 1 is every line written before the format had a version (no
`trajectory_version` key): untyped dicts, tool calls without their server, step or origin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.errors import UserError
from harness.trace.calls import LMCall, ProbeCall, ToolCallRecord
from harness.trace.errors import RunError
from harness.trace.events import (
    CodeEvent,
    Event,
    EventViews,
    ModelEvent,
    ProbeEvent,
    StepEvent,
    ToolEvent,
    event_from_dict,
    event_to_dict,
)
from harness.trace.flat import from_flat, to_flat
from harness.trace.steps import CodeStep, ToolStep, TrajectoryStep, step_from_dict, step_to_dict
from harness.version import __version__

TRAJECTORY_VERSION = 7


@dataclass(frozen=True)
class Trajectory(EventViews):
    """One run as the trajectory file holds it: who ran what, how it ended, and its transcript's events in the
    order they happened (steps, LM calls, tool calls, code, probes, the score: harness.trace.events)."""

    task_id: str
    arm: str
    model: str
    epoch: int
    prompt: str
    answer: str
    expected: Any = None
    score_reason: str = ""
    error: RunError | None = None
    events: tuple[Event, ...] = ()
    server_logs: dict[str, str] = field(default_factory=dict)  # external server -> file its stderr went to
    tool_callers: dict[str, list[str]] = field(default_factory=dict)  # server -> who may call its tools (hybrid)
    trajectory_version: int = TRAJECTORY_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"trajectory_version": TRAJECTORY_VERSION, "task_id": self.task_id, "arm": self.arm,
                "model": self.model, "epoch": self.epoch, "prompt": self.prompt, "answer": self.answer,
                "expected": self.expected, "score_reason": self.score_reason,
                "error": to_flat(self.error) if self.error else None,
                "events": [event_to_dict(e) for e in self.events],
                "server_logs": dict(self.server_logs), "tool_callers": dict(self.tool_callers)}


def record_lists(trajectory: Trajectory) -> dict[str, list[dict[str, Any]]]:
    """The trajectory's events as lists of one kind each (steps, LM calls, tool calls, probes), as JSON: what a
    reader that shows them side by side (the viewer) reads, beside the events themselves."""
    return {"steps": [step_to_dict(s) for s in trajectory.steps],
            "lm_calls": [to_flat(c) for c in trajectory.lm_calls],
            "tool_calls": [to_flat(c) for c in trajectory.tool_calls],
            "probes": [to_flat(p) for p in trajectory.probes]}


def events_of(steps: Sequence[TrajectoryStep] = (), lm_calls: Sequence[LMCall] = (),
              tool_calls: Sequence[ToolCallRecord] = (), probes: Sequence[ProbeCall] = ()) -> tuple[Event, ...]:
    """Records kept in separate lists (a version 4 line, a test's hand-made run) as events in the order a run makes
    them: each step's LM calls and tool calls, then the step; calls of no known step before the first step keep
    their place; probes last. Times are unknown (0) except a tool call's start."""
    by_step: dict[int | None, list[Event]] = {}
    for call in lm_calls:
        by_step.setdefault(call.step, []).append(ModelEvent(call))
    for call in tool_calls:
        by_step.setdefault(call.step, []).append(ToolEvent(call, t=call.started_s))
    events: list[Event] = list(by_step.pop(None, []))
    for index, step in enumerate(steps):
        events += by_step.pop(index, [])
        events.append(StepEvent(step, step=index))
    for rest in by_step.values():  # calls of a step that did not end (a run that timed out inside it)
        events += rest
    return with_ids((*events, *(ProbeEvent(p) for p in probes)))


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


# The names the arms of versions 1-4 gave their answer tool and their code tool: how such a step's `acts` is read.
_V4_FINAL_ANSWER, _V4_CODE_TOOL = "final_answer", "run_python"


def _v4_acts(step: dict[str, Any]) -> dict[str, Any]:
    """A version 4 tool step with the `acts` version 5 records (then the row counted them by these tool names)."""
    if step.get("kind") != "tool" or "acts" in step:
        return step
    names = {call.get("tool") for call in step.get("calls") or [] if isinstance(call, dict)}
    acts = ["tool"] * bool(names - {_V4_FINAL_ANSWER, _V4_CODE_TOOL}) + ["code"] * (_V4_CODE_TOOL in names)
    return {**step, "acts": acts}


def _v4_to_v5(line: dict[str, Any]) -> dict[str, Any]:
    """v5 stored the run's transcript: one list of events in the order they happened, instead of separate lists of
    steps, LM calls, tool calls and probes (each step's calls are put before it: `events_of`); a tool step records
    what its calls did (`acts`)."""
    events = events_of(
        steps=[step_from_dict(s.get("kind", ""), _v4_acts(s)) for s in line.get("steps") or []
               if isinstance(s, dict)],
        lm_calls=[from_flat(LMCall, c) for c in line.get("lm_calls") or []],
        tool_calls=[from_flat(ToolCallRecord, c) for c in line.get("tool_calls") or []],
        probes=[from_flat(ProbeCall, p) for p in line.get("probes") or []])
    rest = {k: v for k, v in line.items() if k not in ("steps", "lm_calls", "tool_calls", "probes")}
    return {**rest, "trajectory_version": 5,
            "events": [{k: v for k, v in event_to_dict(e).items() if k not in ("id", "parent")} for e in events]}


def with_ids(events: Sequence[Event]) -> tuple[Event, ...]:
    """Events recorded before events had ids (version 5 lines, records kept in separate lists) with an id each, in
    their order, and the parent the run would have named: a tool call made from code the next code execution of
    its step (a step's code is recorded as it ends, after its calls), anything else of a step that step, a step and
    what happened outside any step the run (0). Events that have ids are left as they are."""
    if any(event.id for event in events):
        return tuple(events)
    numbered = [replace(event, id=index) for index, event in enumerate(events, start=1)]
    step_ids = {e.step: e.id for e in numbered if isinstance(e, StepEvent) and e.step is not None}

    def parent(position: int, event: Event) -> int:
        if isinstance(event, StepEvent) or event.step is None:
            return 0
        if isinstance(event, ToolEvent) and event.call.in_code:
            code = next((e for e in numbered[position:] if isinstance(e, CodeEvent) and e.step == event.step), None)
            if code is not None:
                return code.id
        return step_ids.get(event.step, 0)

    return tuple(replace(event, parent=parent(position, event)) for position, event in enumerate(numbered))


def _v5_to_v6(line: dict[str, Any]) -> dict[str, Any]:
    """v6 gave each event an id and its parent (a tool call made from code names its execution, which names its
    step, which names the run): an older line's are given as `with_ids` reads them from the steps; LM calls and
    code gained `cut_short` (false: older harnesses did not record what was running when a run ended)."""
    events = [e for e in (event_from_dict(item) for item in line.get("events") or [] if isinstance(item, dict))
              if e is not None]
    return {**line, "trajectory_version": 6, "events": [event_to_dict(e) for e in with_ids(events)]}


def _v6_to_v7(line: dict[str, Any]) -> dict[str, Any]:
    """v7 recorded how the run ended as an event of its transcript (`end`: the answer, and the error that ended it),
    so a row's answer and error are read from the events: a v6 `error` event becomes the `end` event, in its place,
    with the line's answer (a trajectory line's `answer`, a transcript file's end line's); a run that ended without
    an error gets its `end` event before its score (or last), with the next id."""
    events = [item for item in line.get("events") or [] if isinstance(item, dict)]
    answer = str(line.get("answer") or "")
    errors = [index for index, item in enumerate(events) if item.get("event") == "error"]
    if errors:
        old, head = events[errors[-1]], ("event", "id", "parent", "t", "step")
        events[errors[-1]] = {**{k: old.get(k) for k in head}, "event": "end", "answer": answer,
                              "error": {k: v for k, v in old.items() if k not in head}}
    else:
        scores = [index for index, item in enumerate(events) if item.get("event") == "score"]
        at = scores[-1] if scores else len(events)
        t = events[at].get("t", 0.0) if at < len(events) else (events[-1].get("t", 0.0) if events else 0.0)
        next_id = max((int(item.get("id") or 0) for item in events), default=0) + 1
        events.insert(at, {"event": "end", "id": next_id, "parent": 0, "t": t, "step": None, "answer": answer,
                           "error": None})
    return {**line, "trajectory_version": 7, "events": events}


# version -> function turning a line of that version into one of the next version
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4,
                                                                   4: _v4_to_v5, 5: _v5_to_v6, 6: _v6_to_v7}
assert set(UPGRADES) == set(range(1, TRAJECTORY_VERSION)), "every older trajectory version needs its upgrade step"


def refuse_newer(version: Any, where: str = "") -> None:
    """One line for a trajectory (or transcript file) written by a newer harness than this one: it names both."""
    if not isinstance(version, int) or not 1 <= version <= TRAJECTORY_VERSION:
        raise UserError(f"{where}trajectory version {version}, written by a newer harness; this one (harness "
                        f"{__version__}) reads trajectory versions 1 to {TRAJECTORY_VERSION}: upgrade the harness to "
                        "read it")


def upgraded(line: dict[str, Any]) -> dict[str, Any]:
    """A trajectory line (or a transcript file's events, with its answer, in that shape) at the current version:
    each upgrade step from its own version on, in memory; a newer one is refused."""
    version = line.get("trajectory_version", 1)
    refuse_newer(version)
    for step in range(version, TRAJECTORY_VERSION):
        line = UPGRADES[step](line)
    return line


def trajectory_from_json(line: dict[str, Any]) -> Trajectory:
    """A trajectory line of any known version (older ones upgraded in memory); a newer one is refused."""
    line = upgraded(line)
    error = line.get("error")
    events = tuple(e for e in (event_from_dict(item) for item in line.get("events") or [] if isinstance(item, dict))
                   if e is not None)
    return Trajectory(
        task_id=line.get("task_id", ""), arm=line.get("arm", ""), model=line.get("model", ""),
        epoch=line.get("epoch", 0), prompt=line.get("prompt", ""), answer=line.get("answer", ""),
        expected=line.get("expected"), score_reason=line.get("score_reason", ""),
        error=from_flat(RunError, error) if isinstance(error, dict) else None, events=events,
        server_logs=dict(line.get("server_logs") or {}), tool_callers=dict(line.get("tool_callers") or {}))
