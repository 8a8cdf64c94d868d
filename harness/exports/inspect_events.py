"""A run's transcript as inspect_ai's events and chat messages, built from inspect_ai's own types.

Each harness event becomes the inspect event that means the same where inspect has one (an LM call a ModelEvent,
a tool call or a scorer's probe a ToolEvent, code a SandboxEvent, the score a ScoreEvent per score name, a limit that
ended the run a SampleLimitEvent, any other error that ended it an ErrorEvent), else an InfoEvent whose `source` is
the harness event's kind (tools, info, setup, answer, step). The events of one step are wrapped in a span named after
it, so `inspect view` shows a run turn by turn, and a code execution's tool calls in a span of the execution within
it (each event names its parent). Times are the run's own: an event at `t` seconds into the run is stamped
`started_at + t`, and its working_start is `t`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from inspect_ai import event as ie
from inspect_ai.log import EvalError
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall, ToolCallError

from harness.trace.calls import LMCall, ProbeCall, ToolCallRecord
from harness.trace.events import (
    AnswerEvent,
    CodeEvent,
    EndEvent,
    Event,
    InfoEvent,
    ModelEvent,
    ProbeEvent,
    ScoreEvent,
    SetupEvent,
    StepEvent,
    ToolEvent,
    ToolsEvent,
)
from harness.trace.steps import step_to_dict
from harness.trace.trajectory import with_ids

# A harness error type that is one of inspect's limits, and the row column holding the limit's value.
LIMITS: dict[str, tuple[str, str]] = {"timeout": ("time", "timeout_s"), "token_limit": ("token", "max_tokens_per_run"),
                                      "cost_limit": ("cost", "max_cost_per_run"), "max_turns": ("turn", "max_turns")}
# Kinds that happen after the agent ended (outside any step's span).
_AFTER_AGENT = (ScoreEvent, EndEvent, ProbeEvent)


@dataclass(frozen=True)
class RunFacts:
    """What the events of one run need from its row: when it started, the model of each role, the score's
    target and the run's limits."""

    started_at: datetime
    models: dict[str, str]  # LM role (agent, user, judge) -> model string
    target: str
    answer: str
    limits: dict[str, float | None]  # row column -> value

    def at(self, t: float) -> datetime:
        return self.started_at + timedelta(seconds=max(t, 0.0))

    def model_of(self, call: LMCall) -> str:
        return self.models.get(call.role) or self.models["agent"]


def as_json(value: Any) -> Any:
    """A value as plain JSON (what inspect's JsonValue fields take): anything else as its text."""
    return json.loads(json.dumps(value, default=str))


def _content(content: Any) -> str | list[ContentText]:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):  # content parts: text as text, anything else as its JSON
        return [ContentText(text=part["text"] if isinstance(part, dict) and part.get("type") == "text"
                            and isinstance(part.get("text"), str) else json.dumps(part, default=str))
                for part in content]
    return json.dumps(content, default=str)


def tool_call(call: dict[str, Any], n: int) -> ToolCall:
    """A tool call as the harness records it ({name, arguments}) or as OpenAI's messages hold it ({id, function:
    {name, arguments as JSON text}}); the n-th of its reply gets the id `call_n` when it has none (as the arms do)."""
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    arguments, error = function.get("arguments") or {}, None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            arguments, error = {"text": arguments}, f"arguments are not JSON: {exc}"
    if not isinstance(arguments, dict):
        arguments = {"value": arguments}
    return ToolCall(id=str(call.get("id") or f"call_{n}"), function=str(function.get("name", "")),
                    arguments=as_json(arguments), parse_error=error)


def chat_message(message: dict[str, Any], model: str) -> ChatMessage:
    """One message of an LM call's input (OpenAI's chat shape, as the harness records it) as inspect's."""
    role, content = message.get("role"), _content(message.get("content"))
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        calls = [tool_call(c, n) for n, c in enumerate(message.get("tool_calls") or []) if isinstance(c, dict)]
        return ChatMessageAssistant(content=content, tool_calls=calls or None, model=model)
    if role == "tool":
        return ChatMessageTool(content=content, tool_call_id=message.get("tool_call_id"), function=message.get("name"))
    return ChatMessageUser(content=content)


def reply(call: LMCall, model: str) -> ChatMessageAssistant:
    """An LM call's output: its text and its native tool calls."""
    calls = [tool_call(c, n) for n, c in enumerate(call.tool_calls)]
    return ChatMessageAssistant(content=call.output, tool_calls=calls or None, model=model, source="generate")


def model_usage(prompt: int | None, completion: int | None, reused: int | None = 0,
                cost: float | None = None) -> ModelUsage | None:
    """Tokens as inspect counts them (None where there is no count): its input_tokens excludes what a cache held
    (the harness's reused prompt tokens, here input_tokens_cache_read)."""
    if prompt is None or completion is None:
        return None
    reused = min(reused or 0, prompt)
    return ModelUsage(input_tokens=prompt - reused, output_tokens=completion, total_tokens=prompt + completion,
                      input_tokens_cache_read=reused or None, total_cost=cost)


def _model_event(call: LMCall, t: float, facts: RunFacts) -> ie.ModelEvent:
    model = facts.model_of(call)
    output = ModelOutput(model=model, completion=call.output, usage=model_usage(call.prompt_tokens, call.completion_tokens, call.reused_prompt_tokens), time=call.latency_s,
                         choices=[ChatCompletionChoice(message=reply(call, model),
                                                       stop_reason="tool_calls" if call.tool_calls else "stop")])
    start = t - call.latency_s
    return ie.ModelEvent(
        model=model, role=call.role, input=[chat_message(m, model) for m in call.messages], tools=[],
        tool_choice="auto", config=GenerateConfig(), output=output, retries=call.retries or None,
        cache="read" if call.cached else None, timestamp=facts.at(start), working_start=start,
        completed=facts.at(t), working_time=call.latency_s,
        metadata={"step": call.step, "reuse_source": call.reuse_source, "grammar": call.grammar})


def _tool_event(call: ToolCallRecord | ProbeCall, t: float, facts: RunFacts, index: int) -> ie.ToolEvent:
    start = t - call.duration_s
    metadata = {"server": call.server, "result_chars": call.result_chars}
    if isinstance(call, ToolCallRecord):
        metadata |= {"step": call.step, "in_code": call.in_code, "batch": call.batch, "abandoned": call.abandoned}
    else:
        metadata |= {"probe": True}
    return ie.ToolEvent(
        id=f"tool-{index}", function=call.tool, arguments=as_json(call.arguments), result=call.result_preview,
        error=ToolCallError("unknown", call.result_preview) if call.is_error else None,
        timestamp=facts.at(start), working_start=start, completed=facts.at(t), working_time=call.duration_s,
        metadata=metadata)


def score_events(passed: bool, value: float, reason: str, facts: RunFacts, t: float) -> list[ie.ScoreEvent]:
    """The harness's score as inspect's two scores: `success` (C or I, inspect's correct/incorrect) and `score`
    (the scorer's value in [0, 1]), each with the scorer's reason."""
    return [ie.ScoreEvent(score=score, target=facts.target, scorer=name, timestamp=facts.at(t), working_start=t)
            for name, score in sample_scores(passed, value, reason, facts.answer).items()]


def sample_scores(passed: bool, value: float, reason: str, answer: str) -> dict[str, Score]:
    return {"success": Score(value="C" if passed else "I", answer=answer, explanation=reason),
            "score": Score(value=float(value), answer=answer, explanation=reason)}


def limit_of(error_type: str, limits: dict[str, float | None]) -> tuple[str, float] | None:
    """inspect's limit type and value for a harness error type that is a limit whose value the row holds."""
    kind, column = LIMITS.get(error_type, ("", ""))
    value = limits.get(column)
    return (kind, float(value)) if kind and value is not None else None


def _end_events(event: EndEvent, facts: RunFacts) -> list[ie.Event]:
    """How the run ended: its error as inspect's limit or error event; a run that answered has none (its answer is
    the sample's output)."""
    if event.error is None:
        return []
    stamp = {"timestamp": facts.at(event.t), "working_start": event.t}
    limit = limit_of(event.error.type, facts.limits)
    if limit is not None:
        return [ie.SampleLimitEvent(type=limit[0], limit=limit[1], message=event.error.message, **stamp)]
    return [ie.ErrorEvent(error=eval_error(event.error.type, event.error.message), **stamp)]


def eval_error(error_type: str, message: str) -> EvalError:
    return EvalError(message=f"{error_type}: {message}", traceback="", traceback_ansi="")


def _info(source: str, data: Any, t: float, facts: RunFacts) -> ie.InfoEvent:
    return ie.InfoEvent(source=source, data=as_json(data), timestamp=facts.at(t), working_start=t)


def _one_event(event: Event, facts: RunFacts, index: int) -> list[ie.Event]:
    if isinstance(event, ModelEvent):
        return [_model_event(event.call, event.t, facts)]
    if isinstance(event, (ToolEvent, ProbeEvent)):
        return [_tool_event(event.call, event.t, facts, index)]
    if isinstance(event, CodeEvent):
        run = event.execution
        output = run.stdout + (f"\n{run.error}" if run.error else "")
        start = event.t - run.duration_s
        return [ie.SandboxEvent(action="exec", cmd="python", input=run.code, output=output,
                                result=0 if run.error is None else 1, timestamp=facts.at(start),
                                working_start=start, completed=facts.at(event.t),
                                metadata={"error_kind": run.error_kind, "duration_s": run.duration_s,
                                          "tool_calls": run.tool_calls, "files_read": list(run.files_read)})]
    if isinstance(event, ScoreEvent):
        return list(score_events(event.passed, event.value, event.reason, facts, event.t))
    if isinstance(event, EndEvent):
        return _end_events(event, facts)
    if isinstance(event, StepEvent):
        return [_info("step", step_to_dict(event.record), event.t, facts)]
    if isinstance(event, AnswerEvent):
        return [_info("answer", {"answer": event.text}, event.t, facts)]
    if isinstance(event, ToolsEvent):
        return [_info("tools", {"texts": list(event.texts)}, event.t, facts)]
    if isinstance(event, SetupEvent):
        return [_info("setup", {"what": event.what, "duration_s": event.duration_s}, event.t, facts)]
    if isinstance(event, InfoEvent):
        return [_info("info", {event.name: event.value}, event.t, facts)]
    return []


def inspect_events(events: Sequence[Event], facts: RunFacts) -> list[ie.Event]:
    """A transcript's events as inspect's, in order, each step's inside its span (`step N`), and a code execution
    with the tool calls it made inside a span of its own within its step's (`code`), as each event names its
    parent."""
    events = with_ids(events)
    codes = {e.id for e in events if isinstance(e, CodeEvent)}
    out: list[ie.Event] = []
    open_step: int | None = None
    open_code: int | None = None

    def close_code(t: float) -> None:
        nonlocal open_code
        if open_code is not None:
            out.append(ie.SpanEndEvent(id=f"code-{open_code}", timestamp=facts.at(t), working_start=t))
        open_code = None

    def close(t: float) -> None:
        close_code(t)
        out.append(ie.SpanEndEvent(id=f"step-{open_step}", timestamp=facts.at(t), working_start=t))

    for index, event in enumerate(events):
        step = None if isinstance(event, _AFTER_AGENT) else event.step
        if step != open_step:
            if open_step is not None:
                close(event.t)
            if step is not None:
                out.append(ie.SpanBeginEvent(id=f"step-{step}", name=f"step {step}", type="step",
                                             timestamp=facts.at(event.t), working_start=event.t))
            open_step = step
        code = event.id if isinstance(event, CodeEvent) else event.parent if event.parent in codes else None
        if code != open_code:
            close_code(event.t)
            if code is not None:
                out.append(ie.SpanBeginEvent(id=f"code-{code}", name="code", type="code",
                                             parent_id=f"step-{step}" if step is not None else None,
                                             timestamp=facts.at(event.t), working_start=event.t))
                open_code = code
        converted = _one_event(event, facts, index)
        for item in converted:
            item.span_id = f"code-{code}" if code is not None else f"step-{step}" if step is not None else None
        out.extend(converted)
        if isinstance(event, CodeEvent):
            close_code(event.t)
    if open_step is not None:
        close(events[-1].t)
    else:
        close_code(events[-1].t if events else 0.0)
    return out


def sample_messages(events: Sequence[Event], prompt: str, facts: RunFacts) -> list[ChatMessage]:
    """The run's conversation as its agent's last LM call saw it, that call's reply, and the results of tool calls
    the reply made that no later call saw (a run that ended during them); only the prompt when the agent made no
    LM call."""
    calls = [(i, e.call) for i, e in enumerate(events) if isinstance(e, ModelEvent) and e.call.role == "agent"]
    if not calls:
        return [ChatMessageUser(content=prompt)]
    last, call = calls[-1]
    model = facts.model_of(call)
    messages = [chat_message(m, model) for m in call.messages]
    answer = reply(call, model)
    ids = [c.id for c in answer.tool_calls or []]
    tail = [e.call for e in events[last + 1:] if isinstance(e, ToolEvent) and not e.call.in_code]
    results = [ChatMessageTool(content=c.result_preview, function=c.tool, tool_call_id=ids[n] if n < len(ids) else None,
                               error=ToolCallError("unknown", c.result_preview) if c.is_error else None)
               for n, c in enumerate(tail)]
    return [*messages, answer, *results]
