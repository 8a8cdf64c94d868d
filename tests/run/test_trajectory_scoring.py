"""Checks of what the agent did, end to end: the same reference replayed by the direct arm (the model calls each
tool) and by code mode (code calls them in the sandbox) gets the same verdict from every call check and probe;
probes are recorded apart and not counted as the agent's tool calls."""

import pytest
import yaml

from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite

pytestmark = pytest.mark.sandbox

REFERENCE = """c = get_customer(customer_id="C-0012")
update_customer_status(customer_id="C-0012", status="churned")
add_note(customer_id="C-0012", body="churned on request")
print(c["name"])
"""
NOTES = {"server": "crm", "tool": "list_notes", "args": {"customer_id": "C-0012"}}
SCORERS = {
    "pass-called": {"tool_called": {"tool": "update_customer_status", "args": {"status": "churned"}}},
    "fail-called": {"tool_called": {"tool": "list_orders"}},
    "pass-not-called": {"tool_not_called": {"tool": "list_*"}},
    "fail-not-called": {"tool_not_called": {"tool": "add_note"}},
    "pass-count": {"tool_call_count": {"at_most": 3}},
    "fail-count": {"tool_call_count": {"at_most": 2}},
    "pass-order": {"tool_order": {"tools": ["get_customer", "update_customer_status", "add_note"]}},
    "fail-order": {"tool_order": {"tools": ["add_note", "get_customer"]}},
    "pass-probe": {"all": {"scorers": ["exact", {"probe": {**NOTES, "path": "[*].body", "contains": "on request"}}]}},
    "fail-probe": {"probe": {**NOTES, "count": 0}},
}


@pytest.fixture
def suite(tmp_path):
    tasks = [{"id": task_id, "category": "write", "prompt": "Churn customer C-0012, note why, answer with the name.",
              "expected": "Farah Kowalski", "scorer": scorer, "reference": REFERENCE, "max_turns": 6}
             for task_id, scorer in SCORERS.items()]
    path = tmp_path / "checks.yaml"
    path.write_text(yaml.safe_dump({"suite": "checks", "servers": ["crm"], "tasks": tasks}))
    return load_suite(str(path))


async def test_every_check_gives_the_same_verdict_in_direct_and_code_mode(suite, sandbox_pool, tmp_path):
    config = RunConfig(suite=suite, model="scripted:reference", arms=("direct", "codemode"), out_dir=tmp_path / "out")
    summary = await Runner(config, pool=sandbox_pool).run()
    frame = read_results([summary.path])
    assert len(frame) == 2 * len(SCORERS) and (frame.error_type == "").all()
    verdicts = frame.pivot(index="task_id", columns="arm", values="success")
    assert verdicts.to_dict("index") == {task: {"codemode": task.startswith("pass"), "direct": task.startswith("pass")}
                                         for task in SCORERS}
    assert (frame.tool_calls == 3).all()  # the probes are not the agent's calls


async def test_calls_say_where_they_came_from_and_probes_are_recorded_apart(suite, sandbox_pool, tmp_path):
    config = RunConfig(suite=suite, model="scripted:reference", arms=("direct", "codemode"),
                       task_ids=("pass-probe",), out_dir=tmp_path / "out")
    summary = await Runner(config, pool=sandbox_pool).run()
    for record in summary.records:
        trajectory = read_trajectory(summary.path, record.sample_id)
        assert [c.tool for c in trajectory.tool_calls] == ["get_customer", "update_customer_status", "add_note"]
        assert {c.in_code for c in trajectory.tool_calls} == {record.arm == "codemode"}
        assert {c.server for c in trajectory.tool_calls} == {"crm"}
        steps = [c.step for c in trajectory.tool_calls]
        assert steps == ([0, 0, 0] if record.arm == "codemode" else [0, 1, 2])
        assert [(p.tool, p.arguments, p.is_error) for p in trajectory.probes] == [
            ("list_notes", {"customer_id": "C-0012"}, False)]
        assert "churned on request" in trajectory.probes[0].result_preview
