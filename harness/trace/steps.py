"""The steps of a run, one dataclass per kind, typed from the loop that makes them to the trajectory file that
stores them unchanged. Every step keeps the rules that fired at it (the scaffold's names) and the arm-specific
fields it has no field for in `detail` (written back flat, so nothing an arm records is lost)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from harness.trace.flat import from_flat, to_flat
from harness.trace.vocab import StepErrorKind


@dataclass(frozen=True)
class ToolUse:
    """One tool call of a tool step, and what the model saw of its result."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    observation: str = ""


# What a step's calls did, as the arm that made them says (a row's tool_actions and code_actions count them): called
# tools themselves, or ran code (a call of a code tool). Answering through a final_answer tool is neither.
ActionKind = Literal["tool", "code"]


@dataclass(frozen=True)
class ToolStep:
    """The model called tools from one reply (direct, react, the meta-tools of codemode-fastmcp): one call, or in
    the direct arm under the scaffold's `parallel_tool_calls` several, run together, in the reply's order.
    `observation` is the turn's whole observation; each call keeps its own. `acts`: what the calls did (the arm's
    word: a tool called, code run through a code tool; empty for a reply that only answered)."""

    kind: ClassVar[str] = "tool"
    calls: tuple[ToolUse, ...]
    thought: str = ""
    observation: str = ""
    repeat_of: int | None = None
    rules: tuple[str, ...] = ()
    acts: tuple[ActionKind, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CodeStep:
    """The model wrote code that ran in the sandbox (code mode); `tool_calls` is how many tools it called."""

    kind: ClassVar[str] = "code"
    code: str
    stdout: str = ""
    error: str | None = None
    error_kind: StepErrorKind | None = None
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


def step_acts(step: TrajectoryStep) -> tuple[ActionKind, ...]:
    """What a step's action did: a code step ran code; a tool step did what its arm recorded."""
    if isinstance(step, CodeStep):
        return ("code",)
    return step.acts if isinstance(step, ToolStep) else ()
STEP_TYPES: dict[str, type] = {cls.kind: cls for cls in (ToolStep, CodeStep, AnswerStep, UnparsedStep)}


def step_from_dict(kind: str, content: dict[str, Any]) -> TrajectoryStep:
    """A step from its kind and flat fields (what an arm records, or a JSON line); an unknown kind, or a step
    without its kind's required field, is kept as an unparsed step that says so."""
    cls = STEP_TYPES.get(kind)
    if cls is None:
        return UnparsedStep(error=f"step of unknown kind {kind!r}", detail=dict(content))
    try:
        if cls is ToolStep and isinstance(content.get("calls"), list):
            content = {**content, "calls": tuple(from_flat(ToolUse, c) for c in content["calls"])}
        return from_flat(cls, content)
    except TypeError:  # a step missing its kind's own field (an old or hand-edited line): kept, and said so
        return UnparsedStep(error=f"{kind} step without its fields", detail=dict(content))


def step_to_dict(step: TrajectoryStep) -> dict[str, Any]:
    flat = to_flat(step)
    if isinstance(step, ToolStep):
        flat["calls"] = [to_flat(call) for call in step.calls]
    return {"kind": step.kind, **flat}
