"""The trajectory format: typed steps and calls, written and read back unchanged, older lines upgraded."""

import json

import pytest

from harness.errors import UserError
from harness.tasks.trajectory import (
    TRAJECTORY_VERSION,
    AnswerStep,
    CodeStep,
    ProbeCall,
    RunError,
    ToolCallRecord,
    ToolStep,
    Trajectory,
    attribute_calls,
    step_from_dict,
    trajectory_from_json,
)


def test_a_trajectory_survives_json_with_its_version_types_rules_and_arm_specific_fields():
    trajectory = Trajectory(
        task_id="t", arm="direct", model="m", epoch=0, prompt="p", answer="a", expected=3,
        error=RunError("max_turns", "stopped"),
        steps=(ToolStep(tool="get", arguments={"id": 1}, rules=("id_guard",), detail={"dropped_calls": 0}),
               CodeStep(code="print(1)", tool_calls=1, detail={"final_answer": 1}), AnswerStep(text="a")),
        tool_calls=(ToolCallRecord("get", {"id": 1}, server="crm", step=0),),
        probes=(ProbeCall("crm", "list_notes", {}, result_preview="[]"),))
    line = json.loads(json.dumps(trajectory.to_json()))
    assert line["trajectory_version"] == TRAJECTORY_VERSION and line["steps"][0]["rules"] == ["id_guard"]
    assert line["steps"][0]["dropped_calls"] == 0 and line["steps"][1]["final_answer"] == 1  # written flat
    assert trajectory_from_json(line) == trajectory


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
    steps = (step_from_dict("tool", {"tool": "nosuch", "arguments": {}}),
             step_from_dict("tool", {"tool": "execute", "arguments": {}, "tool_calls": [{"tool": "a"}]}),
             step_from_dict("answer", {"text": "1"}))
    calls = attribute_calls(steps, [ToolCallRecord("a", {}, in_code=True)])
    assert [(c.step, c.in_code) for c in calls] == [(1, True)]


def test_a_newer_version_is_refused_in_one_line():
    with pytest.raises(UserError, match="trajectory version 99, this harness reads versions 1 to"):
        trajectory_from_json({"trajectory_version": 99})


def test_a_step_of_an_unknown_kind_or_without_its_fields_is_kept_and_says_so():
    assert step_from_dict("plan", {"text": "x"}).error == "step of unknown kind 'plan'"
    broken = step_from_dict("tool", {"arguments": {}})
    assert broken.error == "tool step without its fields" and broken.detail == {"arguments": {}}
