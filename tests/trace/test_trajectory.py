"""The trajectory format: typed steps and calls, written and read back unchanged, older lines upgraded."""

import json

import pytest

from harness.errors import UserError
from harness.trace.calls import LMCall, ProbeCall, ToolCallRecord
from harness.trace.errors import RunError
from harness.trace.events import AnswerEvent, EndEvent, ScoreEvent, event_from_dict, event_to_dict
from harness.trace.steps import AnswerStep, CodeStep, ToolStep, ToolUse, step_from_dict
from harness.trace.trajectory import TRAJECTORY_VERSION, Trajectory, events_of, trajectory_from_json


def test_a_trajectory_survives_json_with_its_version_types_rules_and_arm_specific_fields():
    trajectory = Trajectory(
        task_id="t", arm="direct", model="m", epoch=0, prompt="p", answer="a", expected=3,
        error=RunError("max_turns", "stopped"),
        events=events_of(
            steps=(ToolStep(calls=(ToolUse("get", {"id": 1}, "{}"), ToolUse("list", {}, "[]")),
                            observation="{}\n\n[]", rules=("id_guard",), acts=("tool",), detail={"dropped_calls": 0}),
                   CodeStep(code="print(1)", tool_calls=1, detail={"final_answer": 1}), AnswerStep(text="a")),
            tool_calls=(ToolCallRecord("get", {"id": 1}, server="crm", step=0),),
            probes=(ProbeCall("crm", "list_notes", {}, result_preview="[]"),)))
    line = json.loads(json.dumps(trajectory.to_json()))
    steps = [event["record"] for event in line["events"] if event["event"] == "step"]
    assert [event["event"] for event in line["events"]] == ["tool", "step", "step", "step", "probe"]
    assert line["trajectory_version"] == TRAJECTORY_VERSION and steps[0]["rules"] == ["id_guard"]
    assert steps[0]["dropped_calls"] == 0 and steps[1]["final_answer"] == 1  # written flat
    assert steps[0]["calls"][1] == {"tool": "list", "arguments": {}, "observation": "[]"}
    assert trajectory_from_json(line) == trajectory


def test_a_version_3_tool_step_becomes_a_step_of_one_call_with_its_observation():
    old = {"trajectory_version": 3, "task_id": "t", "arm": "direct",
           "steps": [{"kind": "tool", "tool": "get", "arguments": {"id": 1}, "thought": "t", "observation": "{}",
                      "repeat_of": None, "rules": ["id_guard"], "dropped_calls": 1},
                     {"kind": "answer", "text": "1"}],
           "tool_calls": [{"tool": "get", "arguments": {"id": 1}, "step": 0}]}
    step = trajectory_from_json(old).steps[0]
    assert step == ToolStep(calls=(ToolUse("get", {"id": 1}, "{}"),), thought="t", observation="{}",
                            rules=("id_guard",), acts=("tool",), detail={"dropped_calls": 1})
    assert trajectory_from_json(json.loads(json.dumps(trajectory_from_json(old).to_json()))).steps[0] == step


def test_an_untyped_version_1_line_is_upgraded_with_each_call_attributed_to_its_step():
    old = {"task_id": "t", "arm": "codemode", "model": "m", "epoch": 0, "prompt": "p", "answer": "3",
           "error": None, "server_logs": {},
           "steps": [{"kind": "tool", "tool": "search", "arguments": {}, "observation": "x", "repeat_of": None},
                     {"kind": "code", "code": "a(); b()", "tool_calls": 2, "stdout": "", "error": None},
                     {"kind": "tool", "tool": "final_answer", "arguments": {"answer": "3"}}],
           "tool_calls": [{"tool": t, "arguments": {}, "is_error": False, "result_preview": "", "result_chars": 0,
                           "duration_s": 0.0, "started_s": 0.0} for t in ("search", "a", "b")]}
    trajectory = trajectory_from_json(old)
    assert [(c.tool, c.step, c.in_code) for c in trajectory.tool_calls] == [
        ("search", 0, False), ("a", 1, True), ("b", 1, True)]
    assert isinstance(trajectory.steps[1], CodeStep) and trajectory.probes == () and trajectory.steps[0].rules == ()


def test_calls_listed_by_an_execute_step_are_its_and_a_tool_step_that_made_no_call_takes_none():
    old = {"steps": [{"kind": "tool", "tool": "nosuch", "arguments": {}},
                     {"kind": "tool", "tool": "execute", "arguments": {}, "tool_calls": [{"tool": "a"}]},
                     {"kind": "answer", "text": "1"}],
           "tool_calls": [{"tool": "a", "arguments": {}, "in_code": True}]}
    calls = trajectory_from_json(old).tool_calls
    assert [(c.step, c.in_code) for c in calls] == [(1, True)]


def test_a_version_2_line_names_a_code_blocks_timeout_code_timeout_and_keeps_the_rest():
    old = {"trajectory_version": 2, "task_id": "t", "error": {"type": "timeout", "message": "run exceeded 5 s"},
           "steps": [{"kind": "code", "code": "while True: pass", "error_kind": "timeout"},
                     {"kind": "tool", "tool": "execute", "arguments": {}, "error_kind": "timeout"}],
           "lm_calls": [{"messages": [], "output": "x", "tool_calls": []}],
           "tool_calls": [{"tool": "a", "arguments": {}, "step": 0, "in_code": True}]}
    trajectory = trajectory_from_json(old)
    assert trajectory.steps[0].error_kind == "code_timeout"
    assert trajectory.steps[1].detail["error_kind"] == "code_timeout"
    assert trajectory.error == RunError("timeout", "run exceeded 5 s")  # the run's own timeout keeps its name
    assert trajectory.lm_calls == (LMCall(messages=[], output="x"),) and trajectory.tool_calls[0].step == 0


def test_a_newer_version_is_refused_in_one_line():
    with pytest.raises(UserError, match="trajectory version 99, written by a newer harness; this one"):
        trajectory_from_json({"trajectory_version": 99})


def test_a_step_of_an_unknown_kind_or_without_its_fields_is_kept_and_says_so():
    assert step_from_dict("plan", {"text": "x"}).error == "step of unknown kind 'plan'"
    broken = step_from_dict("tool", {"arguments": {}})
    assert broken.error == "tool step without its fields" and broken.detail == {"arguments": {}}


def test_a_version_5_line_gets_ids_and_the_parents_its_steps_imply():
    """v5 events had no ids: a tool call made from code is the child of its step's code execution (recorded after
    it), the code and the LM call are the step's, the step is the run's."""
    old = {"trajectory_version": 5, "task_id": "t", "arm": "codemode", "events": [
        {"event": "model", "t": 0.1, "step": 0, "messages": [], "output": "```python\n...```"},
        {"event": "tool", "t": 0.2, "step": 0, "tool": "get_customer", "arguments": {}, "in_code": True},
        {"event": "code", "t": 0.3, "step": 0, "code": "get_customer()"},
        {"event": "step", "t": 0.3, "step": 0, "record": {"kind": "code", "code": "get_customer()"}},
        {"event": "score", "t": 0.4, "step": None, "passed": True, "value": 1.0, "reason": ""}]}
    events = trajectory_from_json(old).events
    assert [e.id for e in events] == [1, 2, 3, 4, 6, 5]  # 6: its end event (version 7), given the next id
    assert [e.parent for e in events] == [4, 3, 4, 0, 0, 0]


def test_how_a_run_ended_is_an_event_that_survives_json():
    ended = EndEvent("", RunError("server_error", "no answer", server="crm"), t=1.5, id=7, parent=0)
    assert event_from_dict(json.loads(json.dumps(event_to_dict(ended)))) == ended
    answered = EndEvent("42", None, t=2.0, id=8, parent=0)
    assert event_from_dict(json.loads(json.dumps(event_to_dict(answered)))) == answered


def test_a_version_6_error_event_becomes_the_end_event_with_the_lines_answer_in_its_place():
    old = {"trajectory_version": 6, "task_id": "t", "answer": "IN", "events": [
        {"event": "answer", "id": 1, "parent": 0, "t": 0.1, "step": None, "text": "IN"},
        {"event": "error", "id": 2, "parent": 0, "t": 0.2, "step": None, "type": "max_turns", "message": "10 turns",
         "permanent": False, "server": ""},
        {"event": "score", "id": 3, "parent": 0, "t": 0.3, "step": None, "passed": False, "value": 0.0, "reason": ""}]}
    trajectory = trajectory_from_json(old)
    assert [type(e) for e in trajectory.events] == [AnswerEvent, EndEvent, ScoreEvent]
    assert trajectory.end == EndEvent("IN", RunError("max_turns", "10 turns"), t=0.2, id=2, parent=0)


def test_a_version_6_run_that_answered_gets_its_end_event_before_its_score():
    old = {"trajectory_version": 6, "task_id": "t", "answer": "IN", "events": [
        {"event": "answer", "id": 1, "parent": 0, "t": 0.1, "step": None, "text": "IN"},
        {"event": "score", "id": 2, "parent": 0, "t": 0.3, "step": None, "passed": True, "value": 1.0, "reason": ""}]}
    trajectory = trajectory_from_json(old)
    assert [type(e) for e in trajectory.events] == [AnswerEvent, EndEvent, ScoreEvent]
    assert trajectory.end == EndEvent("IN", None, t=0.3, id=3, parent=0)
