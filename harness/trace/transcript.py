"""A run's transcript: its events, appended as they happen, by whoever acts (harness.trace.events). One transcript
per run, handed explicitly to everything that records into it (the loop, the run's session, the engine stack's
recorder, the arm's sandbox), never found through ambient state. Whatever ends the run, the events up to that
moment are in it, and the run's row and trajectory are computed from them.

Appends come from the event loop and from worker threads (an LM call runs in one, a sandbox's bridged tool calls
in another); a list append is atomic, and each event is stamped with the step in progress when it is appended, and
given an id and its parent (the code execution in progress, else the step, else the run: id 0).

What is still running when the run ends (an LM call a timeout cut off in its thread, code in the sandbox) is known
to the transcript from its start: `end_in_flight` records each as cut short, with what it had done so far.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from harness.trace.calls import LMCall, ProbeCall, ToolCallRecord
from harness.trace.errors import RunError
from harness.trace.events import (
    AnswerEvent,
    CodeEvent,
    CodeExecution,
    EndEvent,
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

RUN_ID = 0  # the run's own id: the parent of its steps and of what happens outside any step
CODE_CUT_SHORT = "the run ended while this code was running"


@dataclass(frozen=True)
class InFlight:
    """Something begun and not yet recorded as ended: its id, its parent, when it began, and what it is (the
    request's messages and role of an LM call; the code of an execution)."""

    id: int
    parent: int
    started: float
    step: int | None
    role: str = ""
    messages: tuple[dict, ...] = ()
    code: str = ""
    output: Callable[[], str] | None = None  # the code's output so far, asked when the run ends with it running


class Transcript(EventViews):
    """The events of one run in the order they happened; `step` is the step in progress (None: before the first
    step, or after the agent ended), which every event appended is stamped with. With a `sink` (the run's transcript
    file) each event is also written to disk as it is appended, so a harness killed hard keeps what the run did."""

    def __init__(self, sink: TranscriptWriter | None = None) -> None:
        self.events: list[Event] = []
        self.sink = sink
        self._lock = threading.Lock()
        self._last_id = RUN_ID
        self._step_ids: dict[int, int] = {}
        self._code: InFlight | None = None  # the code execution in progress (one at a time in a run)
        self._lm_calls: dict[int, InFlight] = {}  # LM calls in progress, by id
        self.started = time.perf_counter()
        self.step: int | None = None
        # the run's clock, stopped while one-time start-up is waited for (set by the episode: its time limit)
        self.pause_clock: Callable[[], None] | None = None
        self.resume_clock: Callable[[], None] | None = None
        self._setting_up = 0

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.started

    def new_id(self) -> int:
        with self._lock:
            self._last_id += 1
            return self._last_id

    def begin_step(self, index: int | None) -> None:
        """The run is now making step `index`: what is recorded from here on is that step's (its id is given now)."""
        self.step = index
        if index is not None and index not in self._step_ids:
            self._step_ids[index] = self.new_id()

    def _step_id(self, index: int | None) -> int:
        return self._step_ids.get(index, RUN_ID) if index is not None else RUN_ID

    def open_parent(self) -> int:
        """What an event appended now happened inside: the code in progress, else the step, else the run."""
        code = self._code
        return code.id if code is not None else self._step_id(self.step)

    def add(self, event: Event) -> None:
        """Append `event`, with a new id and the parent open now unless it has its own, and write it to the run's
        file (if any) at once."""
        if not event.id:
            event = replace(event, id=self.new_id(),
                            parent=self.open_parent() if event.parent is None else event.parent)
        self.events.append(event)
        if self.sink is not None:
            self.sink.write(event_to_dict(event))

    def lm_started(self, role: str, messages: list[dict]) -> int:
        """An LM call begins (its id; the engine records it with `lm_call(..., started=id)` when it returns)."""
        begun = InFlight(self.new_id(), self.open_parent(), self.elapsed(), self.step, role, tuple(messages))
        with self._lock:
            self._lm_calls[begun.id] = begun
        return begun.id

    def lm_failed(self, started: int) -> None:
        """An LM call that raised: not recorded as a call (its error ends the step or the run)."""
        with self._lock:
            self._lm_calls.pop(started, None)

    def code_started(self, code: str, output: Callable[[], str] | None = None) -> int:
        """Code begins in the run's sandbox: tool calls made from now on are its, until `code_run` records it.
        `output`: what it has printed so far (a sandbox that streams its output), asked only if the run ends first."""
        self._code = InFlight(self.new_id(), self._step_id(self.step), self.elapsed(), self.step, code=code,
                              output=output)
        return self._code.id

    def lm_call(self, call: LMCall, started: int | None = None) -> LMCall | None:
        """Record an LM call, stamped with the step in progress (`started`: its id from `lm_started`); returns it
        as recorded, or None for a call the run already recorded as cut short (it returned after the run ended).
        Start-up inside it (a prompt prefix evaluated for the first time) is also a setup event: the run's cold
        start, not its time."""
        place = {}
        if started is not None:
            with self._lock:
                begun = self._lm_calls.pop(started, None)
            if begun is None:
                return None
            place = {"id": begun.id, "parent": begun.parent}
        call = replace(call, step=self.step)
        self.add(ModelEvent(call, t=self.elapsed(), **place))
        if call.setup_s > 0:
            self.add(SetupEvent("prompt prefix evaluated", call.setup_s, step=self.step, t=self.elapsed()))
        return call

    def tool_call(self, call: ToolCallRecord) -> ToolCallRecord:
        call = replace(call, step=self.step)
        self.add(ToolEvent(call, t=self.elapsed()))
        return call

    def code_run(self, execution: CodeExecution) -> None:
        """Record code that ran (begun with `code_started`, whose id and parent it takes; else a new id)."""
        code, self._code = self._code, None
        place = {"id": code.id, "parent": code.parent} if code is not None and code.code == execution.code else {}
        self.add(CodeEvent(execution, step=self.step, t=self.elapsed(), **place))

    def end_in_flight(self) -> None:
        """The run ended (a timeout, an interrupt, a crash) with these still running: the code in progress (its
        tool calls so far counted, its output so far if its sandbox streams it, else none) and each LM call out,
        recorded as cut short with their time so far. A cut-off LM call's late return is then not recorded again."""
        now = self.elapsed()
        code, self._code = self._code, None
        if code is not None:
            calls = sum(1 for e in self.of(ToolEvent) if e.parent == code.id)
            stdout = code.output() if code.output is not None else ""
            self.add(CodeEvent(CodeExecution(code.code, stdout=stdout, error=CODE_CUT_SHORT,
                                             duration_s=now - code.started, tool_calls=calls, cut_short=True),
                               step=code.step, t=now, id=code.id, parent=code.parent))
        with self._lock:
            cut, self._lm_calls = list(self._lm_calls.values()), {}
        for begun in cut:
            self.add(ModelEvent(LMCall(messages=list(begun.messages), output="", latency_s=now - begun.started,
                                       step=begun.step, role=begun.role, cut_short=True),
                                t=now, id=begun.id, parent=begun.parent))

    def step_ended(self, record: TrajectoryStep, index: int) -> None:
        """A step as it ended: its id is the one it was given when it began; its parent is the run."""
        if index not in self._step_ids:  # a step recorded without having begun (a hand-made run)
            self._step_ids[index] = self.new_id()
        self.add(StepEvent(record, step=index, t=self.elapsed(), id=self._step_ids[index], parent=RUN_ID))

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

    def ended(self, answer: str, error: RunError | None) -> None:
        """The run ended with `answer` ("" : none) or `error` (None: it answered): appended once, by its episode."""
        self.add(EndEvent(answer, error, step=self.step, t=self.elapsed()))
