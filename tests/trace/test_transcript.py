"""The transcript: events stamped with their step and time as they are appended; start-up inside an LM call is
recorded as start-up."""

from harness.trace.calls import LMCall, ToolCallRecord
from harness.trace.events import ModelEvent, SetupEvent, ToolEvent
from harness.trace.transcript import Transcript


def test_each_event_carries_the_step_in_progress_and_its_time_in_order():
    transcript = Transcript()
    transcript.lm_call(LMCall(messages=[], output="a"))
    transcript.begin_step(0)
    transcript.lm_call(LMCall(messages=[], output="b"))
    transcript.tool_call(ToolCallRecord("get", {}))
    transcript.begin_step(None)
    assert [(type(e), e.step) for e in transcript.events] == [(ModelEvent, None), (ModelEvent, 0), (ToolEvent, 0)]
    times = [e.t for e in transcript.events]
    assert times == sorted(times) and times[-1] > 0


def test_start_up_inside_an_lm_call_is_a_setup_event_of_that_call():
    transcript = Transcript()
    transcript.begin_step(0)
    transcript.lm_call(LMCall(messages=[], output="", latency_s=9.0, setup_s=6.0))
    (setup,) = transcript.of(SetupEvent)
    assert (setup.what, setup.duration_s, setup.step) == ("prompt prefix evaluated", 6.0, 0)
    assert transcript.cold_start_s == 6.0


def test_the_run_clock_is_stopped_while_it_sets_up():
    transcript, calls = Transcript(), []
    transcript.pause_clock, transcript.resume_clock = (lambda: calls.append("pause")), (lambda: calls.append("go"))
    with transcript.setting_up("sandbox boot"):
        with transcript.setting_up("reference traced"):  # nested: the clock stops once
            pass
    assert calls == ["pause", "go"] and [e.what for e in transcript.of(SetupEvent)] == ["reference traced",
                                                                                       "sandbox boot"]
