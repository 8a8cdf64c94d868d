"""The events of a run's transcript, one type per kind (a tagged union), each stamped with the step that made it
and the time it happened (seconds since the run started). Every stage that acts appends its own: the engine stack
an LM call, the run's session a tool call or a probe, an arm's sandbox a code execution, the loop a step and an
answer, the episode how the run ended (its answer and error) and the score. The row, the trajectory file, the
viewer and the exports all read these events, so a run that ends early (a timeout, a crash, Ctrl-C) keeps and
counts what it did.

Each event has an `id` in its run and names its `parent`: what it happened inside, as it was open when the event
was appended (a tool call made from code names that code execution, the execution and an LM call their step, a step
the run, whose id is 0), so the exports nest spans as the run did instead of reconstructing it. Ids are given in the
order things began: a step's and a code execution's when they begin, though their events are appended as they end.

The events wrap the record types of harness.trace.calls and harness.trace.steps, so a record has one shape
whether it is read from a transcript in memory or from a trajectory line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.trace.calls import LMCall, ProbeCall, ToolCallRecord
from harness.trace.errors import RunError
from harness.trace.flat import from_flat, to_flat
from harness.trace.steps import TrajectoryStep, step_from_dict, step_to_dict
from harness.trace.vocab import StepErrorKind


@dataclass(frozen=True)
class CodeExecution:
    """One block of code run in a sandbox: what it printed, its error, how long it ran (the tool calls it made
    included), how many tools it called and the files of a counted mount it opened (codemode-files' tool files)."""

    code: str
    stdout: str = ""
    error: str | None = None
    error_kind: StepErrorKind | None = None
    duration_s: float = 0.0
    tool_calls: int = 0
    files_read: tuple[str, ...] = ()
    cut_short: bool = False  # still running when the run ended: its output so far, its time so far


@dataclass(frozen=True)
class ModelEvent:
    """An LM call, of any role (the agent's, a simulated user's, a judge's)."""

    kind: ClassVar[str] = "model"
    call: LMCall
    t: float = 0.0
    id: int = 0
    parent: int | None = None

    @property
    def step(self) -> int | None:
        return self.call.step


@dataclass(frozen=True)
class ToolEvent:
    """One MCP tool call the agent made (from the model or from code), as the run's session made it."""

    kind: ClassVar[str] = "tool"
    call: ToolCallRecord
    t: float = 0.0
    id: int = 0
    parent: int | None = None

    @property
    def step(self) -> int | None:
        return self.call.step


@dataclass(frozen=True)
class CodeEvent:
    """Code an arm ran in its sandbox (code mode's blocks, the hybrid arm's code tool, a traced reference)."""

    kind: ClassVar[str] = "code"
    execution: CodeExecution
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


@dataclass(frozen=True)
class StepEvent:
    """A turn of the loop as it ended: the model's action and what it saw of its outcome."""

    kind: ClassVar[str] = "step"
    record: TrajectoryStep
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


@dataclass(frozen=True)
class AnswerEvent:
    """An answer the run gave and the loop took (not refused by a rule): the last one is the run's answer; under
    the scaffold's answer_feedback each judged one counts (a row's answer_attempts)."""

    kind: ClassVar[str] = "answer"
    text: str
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


@dataclass(frozen=True)
class ToolsEvent:
    """What an arm put into its prompts about the tools (function definitions, stubs, an index), and tool
    documentation the run's code printed: the texts a row counts as tool-definition tokens."""

    kind: ClassVar[str] = "tools"
    texts: tuple[str, ...]
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


@dataclass(frozen=True)
class InfoEvent:
    """A named count an arm reports about its run (`tool_files_read`): rows read the ones they have a column for."""

    kind: ClassVar[str] = "info"
    name: str
    value: Any
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


@dataclass(frozen=True)
class SetupEvent:
    """One-time start-up the run waited for that later runs will not (a sandbox booting, a reference traced for
    `scripted:reference`, a shared prompt prefix evaluated first): a row's cold_start_s, not its latency."""

    kind: ClassVar[str] = "setup"
    what: str
    duration_s: float
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


@dataclass(frozen=True)
class ProbeEvent:
    """A read-only call a scorer made on the run's servers after the agent ended (not the agent's call)."""

    kind: ClassVar[str] = "probe"
    call: ProbeCall
    t: float = 0.0
    id: int = 0
    parent: int | None = None
    step: int | None = None


@dataclass(frozen=True)
class ScoreEvent:
    """The scorer's verdict on the run."""

    kind: ClassVar[str] = "score"
    passed: bool
    value: float
    reason: str = ""
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


@dataclass(frozen=True)
class EndEvent:
    """How the run ended, appended once by the episode that ran it, whatever the arm (a built-in loop, an agent from
    outside, a reference): the answer the scorer judged ("" without one) and the error that ended the run (None: it
    answered), as recorded; a row's `answer`, `error_type` and `error_message` are read from it (a per-run spending
    limit its LM calls passed comes first: harness.run.row.ending_error)."""

    kind: ClassVar[str] = "end"
    answer: str = ""
    error: RunError | None = None
    step: int | None = None
    t: float = 0.0
    id: int = 0
    parent: int | None = None


Event = (ModelEvent | ToolEvent | CodeEvent | StepEvent | AnswerEvent | ToolsEvent | InfoEvent | SetupEvent
         | ProbeEvent | ScoreEvent | EndEvent)
EVENT_TYPES: dict[str, type] = {cls.kind: cls for cls in (ModelEvent, ToolEvent, CodeEvent, StepEvent, AnswerEvent,
                                                          ToolsEvent, InfoEvent, SetupEvent, ProbeEvent, ScoreEvent,
                                                          EndEvent)}
# The field of each wrapping event that holds a record, and the record's type (written flat beside `t`).
_WRAPPED: dict[str, tuple[str, type]] = {"model": ("call", LMCall), "tool": ("call", ToolCallRecord),
                                         "probe": ("call", ProbeCall), "code": ("execution", CodeExecution)}


def event_to_dict(event: Event) -> dict[str, Any]:
    """An event as a flat JSON object: `event` (its kind), `id`, `parent`, `t`, `step`, then its record's fields."""
    head = {"event": event.kind, "id": event.id, "parent": event.parent, "t": round(event.t, 6), "step": event.step}
    if isinstance(event, StepEvent):
        return {**head, "record": step_to_dict(event.record)}
    if isinstance(event, EndEvent):
        return {**head, "answer": event.answer, "error": to_flat(event.error) if event.error else None}
    if event.kind in _WRAPPED:
        name, _ = _WRAPPED[event.kind]
        return {**head, **to_flat(getattr(event, name))}
    return {**head, **{k: v for k, v in to_flat(event).items() if k not in head}}


def event_from_dict(line: dict[str, Any]) -> Event | None:
    """An event from its JSON object (None for a kind this harness does not know: a newer writer's)."""
    kind = line.get("event")
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        return None
    content = {k: v for k, v in line.items() if k != "event"}
    t, step = float(content.pop("t", 0.0) or 0.0), content.pop("step", None)
    place = {"id": int(content.pop("id", 0) or 0), "parent": content.pop("parent", None)}
    if cls is StepEvent:
        record = content.get("record") or {}
        return StepEvent(step_from_dict(str(record.get("kind", "")), record), step=step, t=t, **place)
    if cls is EndEvent:
        error = content.get("error")
        return EndEvent(str(content.get("answer") or ""),
                        from_flat(RunError, error) if isinstance(error, dict) else None, step=step, t=t, **place)
    if kind in _WRAPPED:
        name, record_type = _WRAPPED[kind]
        record = from_flat(record_type, {**content, **({"step": step} if kind in ("model", "tool") else {})})
        extra = {"step": step} if cls in (CodeEvent, ProbeEvent) else {}
        return cls(**{name: record}, t=t, **extra, **place)
    return from_flat(cls, {**content, "t": t, "step": step, **place})


class EventViews:
    """The views every reader of a run needs, over its `events` in order: calls, steps, answers, texts (mixed into
    the live Transcript and the stored Trajectory, so both are read the same way)."""

    events: Sequence[Event]

    def of(self, cls: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, cls)]

    @property
    def steps(self) -> tuple[TrajectoryStep, ...]:
        return tuple(event.record for event in self.of(StepEvent))

    @property
    def lm_calls(self) -> tuple[LMCall, ...]:
        return tuple(event.call for event in self.of(ModelEvent))

    @property
    def tool_calls(self) -> tuple[ToolCallRecord, ...]:
        return tuple(event.call for event in self.of(ToolEvent))

    @property
    def probes(self) -> tuple[ProbeCall, ...]:
        return tuple(event.call for event in self.of(ProbeEvent))

    @property
    def code_runs(self) -> tuple[CodeExecution, ...]:
        return tuple(event.execution for event in self.of(CodeEvent))

    @property
    def answers(self) -> tuple[str, ...]:
        return tuple(event.text for event in self.of(AnswerEvent))

    @property
    def end(self) -> EndEvent | None:
        """How the run ended (its answer, its error): None while it runs."""
        found = self.of(EndEvent)
        return found[-1] if found else None

    @property
    def verdict(self) -> ScoreEvent | None:
        """The scorer's verdict on the run: None before it is scored."""
        found = self.of(ScoreEvent)
        return found[-1] if found else None

    @property
    def tool_definition_texts(self) -> tuple[str, ...]:
        return tuple(text for event in self.of(ToolsEvent) for text in event.texts)

    @property
    def cold_start_s(self) -> float:
        return sum(event.duration_s for event in self.of(SetupEvent))

    def info(self, name: str, default: Any = None) -> Any:
        """The last value an arm reported under `name` (default: never reported)."""
        found = [event.value for event in self.of(InfoEvent) if event.name == name]
        return found[-1] if found else default
