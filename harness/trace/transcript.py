"""A run's transcript: its events, appended as they happen, by whoever acts (harness.trace.events). One transcript
per run, handed explicitly to everything that records into it (the loop, the run's session, the engine stack's
recorder, the arm's sandbox), never found through ambient state. Whatever ends the run, the events up to that
moment are in it, and the run's row and trajectory are computed from them.

Appends come from the event loop and from worker threads (an LM call runs in one, a sandbox's bridged tool calls
in another); a list append is atomic, and each event is stamped with the step in progress when it is appended.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from harness.trace.calls import LMCall, ProbeCall, ToolCallRecord
from harness.trace.errors import RunError
from harness.trace.events import (
    AnswerEvent,
    CodeEvent,
    CodeExecution,
    ErrorEvent,
    Event,
    EventViews,
    InfoEvent,
    ModelEvent,
    ProbeEvent,
    ScoreEvent,
    SetupEvent,
    StepEvent,
    ToolEvent,
    ToolsEvent,
    event_to_dict,
)
from harness.trace.steps import TrajectoryStep
from harness.trace.transcript_file import TranscriptWriter


class Transcript(EventViews):
    """The events of one run in the order they happened; `step` is the step in progress (None: before the first
    step, or after the agent ended), which every event appended is stamped with. With a `sink` (the run's transcript
    file) each event is also written to disk as it is appended, so a harness killed hard keeps what the run did."""

    def __init__(self, sink: TranscriptWriter | None = None) -> None:
        self.events: list[Event] = []
        self.sink = sink
        self.started = time.perf_counter()
        self.step: int | None = None
        # the run's clock, stopped while one-time start-up is waited for (set by the episode: its time limit)
        self.pause_clock: Callable[[], None] | None = None
        self.resume_clock: Callable[[], None] | None = None
        self._setting_up = 0

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.started

    def begin_step(self, index: int | None) -> None:
        """The run is now making step `index`: what is recorded from here on is that step's."""
        self.step = index

    def add(self, event: Event) -> None:
        self.events.append(event)
        if self.sink is not None:
            self.sink.write(event_to_dict(event))

    def lm_call(self, call: LMCall) -> LMCall:
        """Record an LM call, stamped with the step in progress; returns it as recorded. Start-up inside it (a
        prompt prefix evaluated for the first time) is also a setup event: the run's cold start, not its time."""
        call = replace(call, step=self.step)
        self.add(ModelEvent(call, t=self.elapsed()))
        if call.setup_s > 0:
            self.add(SetupEvent("prompt prefix evaluated", call.setup_s, step=self.step, t=self.elapsed()))
        return call

    def tool_call(self, call: ToolCallRecord) -> ToolCallRecord:
        call = replace(call, step=self.step)
        self.add(ToolEvent(call, t=self.elapsed()))
        return call

    def code_run(self, execution: CodeExecution) -> None:
        self.add(CodeEvent(execution, step=self.step, t=self.elapsed()))

    def step_ended(self, record: TrajectoryStep, index: int) -> None:
        self.add(StepEvent(record, step=index, t=self.elapsed()))

    def answer(self, text: str) -> None:
        self.add(AnswerEvent(text, step=self.step, t=self.elapsed()))

    def tools_shown(self, *texts: str) -> None:
        self.add(ToolsEvent(tuple(texts), step=self.step, t=self.elapsed()))

    def info_event(self, name: str, value: object) -> None:
        self.add(InfoEvent(name, value, step=self.step, t=self.elapsed()))

    @contextmanager
    def setting_up(self, what: str) -> Iterator[None]:
        """One-time start-up the run waits for (a sandbox booting, a reference traced): recorded as a setup event,
        and the run's clock (its time limit) stopped meanwhile, so start-up neither times a run out nor counts as
        its latency."""
        started = time.perf_counter()
        self._setting_up += 1
        if self._setting_up == 1 and self.pause_clock is not None:
            self.pause_clock()
        try:
            yield
        finally:
            self._setting_up -= 1
            if self._setting_up == 0 and self.resume_clock is not None:
                self.resume_clock()
            self.add(SetupEvent(what, time.perf_counter() - started, step=self.step, t=self.elapsed()))

    def probe(self, call: ProbeCall) -> None:
        self.add(ProbeEvent(call, t=self.elapsed()))

    def score(self, passed: bool, value: float, reason: str) -> None:
        self.add(ScoreEvent(passed, value, reason, step=self.step, t=self.elapsed()))

    def error(self, error: RunError) -> None:
        self.add(ErrorEvent(error, step=self.step, t=self.elapsed()))
