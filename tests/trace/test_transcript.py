"""The transcript: events stamped with their step and time as they are appended; start-up inside an LM call is
recorded as start-up; code still running when the run ends is kept with its output so far."""

from harness.trace.calls import LMCall, ToolCallRecord
from harness.trace.events import CodeEvent, CodeExecution, ModelEvent, SetupEvent, ToolEvent
from harness.trace.transcript import CODE_CUT_SHORT, Transcript


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


def test_code_the_run_ended_during_keeps_its_output_so_far_and_code_that_ended_its_own():
    transcript, printed = Transcript(), ["first\n"]
    transcript.begin_step(0)
    transcript.code_started("print('first')\nwait()", output=lambda: "".join(printed))
    printed.append("second\n")  # asked when the run ends, not when the code began
    transcript.end_in_flight()
    [cut] = transcript.of(CodeEvent)
    assert cut.execution.cut_short and cut.execution.stdout == "first\nsecond\n"
    assert cut.execution.error == CODE_CUT_SHORT
    transcript.code_started("print(1)", output=lambda: "streamed")
    transcript.code_run(CodeExecution("print(1)", stdout="1\n"))
    transcript.end_in_flight()  # nothing running any more: nothing added
    assert [e.execution.stdout for e in transcript.of(CodeEvent)] == ["first\nsecond\n", "1\n"]


def test_code_cut_short_without_a_way_to_its_output_has_none():
    transcript = Transcript()
    transcript.code_started("while True: pass")
    transcript.end_in_flight()
    [cut] = transcript.of(CodeEvent)
    assert cut.execution.cut_short and cut.execution.stdout == ""
