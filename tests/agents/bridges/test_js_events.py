"""The JavaScript code modes' code events, read from the events file their command writes (no Node needed): a
program that ended is recorded as it ended; one still running when the command ended is kept, cut short."""

import json

from harness.agents.bridges.js_codemode import CUT_SHORT, EventReader
from harness.trace.calls import ToolCallRecord
from harness.trace.events import CodeEvent
from harness.trace.transcript import Transcript


def write(path, *events):
    with path.open("a") as handle:
        for event in events:
            handle.write(json.dumps(event) + "\n")


def test_a_program_running_when_the_command_ended_is_kept_cut_short_without_output(tmp_path):
    events, transcript = tmp_path / "code-events.jsonl", Transcript()
    reader = EventReader(events, transcript)
    write(events, {"kind": "code_started", "code": "return 1", "tool_call_id": "call_0_0"},
          {"kind": "code", "code": "return 1", "tool_call_id": "call_0_0", "output": "1", "error": None,
           "duration_s": 0.1},
          {"kind": "code_started", "code": "while (true) {}", "tool_call_id": "call_1_0"})
    reader.drain()
    reader.cut_short()
    ended, cut = (event.execution for event in transcript.of(CodeEvent))
    assert (ended.stdout, ended.error, ended.cut_short) == ("1", None, False)
    assert (cut.code, cut.stdout, cut.error, cut.cut_short) == ("while (true) {}", "", CUT_SHORT, True)
    assert [event.step for event in transcript.of(CodeEvent)] == [0, 1]


def test_a_reader_of_a_later_turn_records_only_what_that_turn_wrote_and_called(tmp_path):
    """In a conversation the command runs once per user turn in one folder: the earlier turns' lines and calls are
    recorded already."""
    events, transcript = tmp_path / "code-events.jsonl", Transcript()
    write(events, {"kind": "code", "code": "return 1", "tool_call_id": "call_0_0", "output": "1", "error": None})
    transcript.tool_call(ToolCallRecord("get_customer", {}, in_code=True))
    reader = EventReader(events, transcript)
    write(events, {"kind": "code", "code": "return 2", "tool_call_id": "call_2_0", "output": "2", "error": None})
    transcript.tool_call(ToolCallRecord("get_customer", {}, in_code=True))
    reader.drain()
    (event,) = transcript.of(CodeEvent)
    assert (event.execution.code, event.execution.tool_calls, event.step) == ("return 2", 1, 2)
