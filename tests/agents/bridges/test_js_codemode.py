"""The JavaScript code modes teams ship, through their real sandboxes (workerd's Dynamic Workers, QuickJS in Node):
the reference replays through each one's code tool on smoke; a program that throws, loops past its time limit or
calls a tool that does not exist ends the run as its error, on time; the run's --timeout leaves no workerd or Node
process behind. Needs `harness setup --js-codemodes` (make test runs it)."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from harness.agents.bridges.js_arms import CODE_TOOLS
from harness.agents.bridges.js_install import install_dir
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.tasks.task import UserScenario

pytestmark = pytest.mark.integration  # starts Node and workerd
ARMS = {"cloudflare-codemode": "cloudflare", "ai-sdk-codemode": "ai-sdk"}


def run(tmp_path: Path, arms: tuple[str, ...], model: str = "scripted:reference", provider=None, **options):
    config = RunConfig(suite=load_suite("smoke"), model=model, arms=arms, out_dir=tmp_path, run_id="r", **options)
    asyncio.run(Runner(config, provider=provider).run())
    path = tmp_path / "smoke" / "r.parquet"
    return path, read_results([path])


def always(arm: str, program: str):
    """A scripted model that sends `program` (NS: the arm's tools object) to the arm's code tool at every turn."""
    tool, field, namespace = CODE_TOOLS[ARMS[arm]]
    reply = ScriptedReply(tool_calls=((tool, {field: program.replace("NS", namespace)}),))
    return policy_provider("scripted:team", lambda task, arm: lambda request: reply)


def agent_processes() -> list[str]:
    """Command lines of the processes running the arms' installed scripts or workerd."""
    found = []
    marker = str(install_dir())
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in line or "workerd serve" in line:
                found.append(line)
    return found


@pytest.mark.sandbox  # the reference is traced in the sandbox
@pytest.mark.parametrize("arm", ARMS)
def test_the_reference_replays_through_the_arms_code_tool_on_smoke(tmp_path, arm):
    path, frame = run(tmp_path, (arm,))
    assert len(frame) == 4 and frame.success.all(), frame.error_message.tolist()
    assert (frame.arm_kind == "command").all() and not frame.scaffold_applied.any()
    assert "@cloudflare/codemode@0.5.6" in frame.arm_source.iloc[0] if arm.startswith("cloud") else \
        "@ai-sdk/code-mode@1.0.42" in frame.arm_source.iloc[0]
    assert (frame.llm_calls == 2).all() and (frame.context_tool_definition_tokens > 1000).all()
    assert (frame.code_actions == 1).all() and (frame.tool_actions == 0).all()  # its one program: a code action
    chained = frame[frame.task_id == "shipped-total"].iloc[0]
    trajectory = read_trajectory(path, chained.sample_id)
    assert [c.tool for c in trajectory.tool_calls] == ["search_customers", "list_orders"]
    assert all(c.in_code and c.step == 0 for c in trajectory.tool_calls)
    (code,) = trajectory.code_runs
    assert code.error is None and '"answer":"27.0"' in code.stdout and code.tool_calls == 2
    assert "await call(1" in code.code and chained.sandbox_time_s > 0


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize(("program", "kind"), [("throw new Error('boom');", "exception"),
                                               ("return await NS.no_such_tool({});", "tool")])
def test_a_failing_program_is_the_models_observation_until_the_turns_run_out(tmp_path, arm, program, kind):
    path, frame = run(tmp_path, (arm,), "scripted:team", always(arm, program), task_ids=("customer-country",),
                      max_turns=2)
    row = frame.iloc[0]
    assert row.error_type == "max_turns" and not row.success
    runs = read_trajectory(path, row.sample_id).code_runs
    assert len(runs) == 2 and all(r.error and r.error_kind == kind for r in runs)


def test_a_program_looping_past_its_time_limit_ends_in_quickjs(tmp_path):
    path, frame = run(tmp_path, ("ai-sdk-codemode",), "scripted:team", always("ai-sdk-codemode", "while (true) {}"),
                      task_ids=("customer-country",), max_turns=2, tool_timeout_s=2)
    row = frame.iloc[0]
    assert row.error_type == "max_turns"
    runs = read_trajectory(path, row.sample_id).code_runs
    assert len(runs) == 2 and all(r.error_kind == "code_timeout" for r in runs)


@pytest.mark.parametrize("arm", ARMS)
def test_the_runs_timeout_leaves_no_workerd_or_node_process(tmp_path, arm):
    """A synchronous loop never yields to Code Mode's own timer in workerd (its timeout is a Promise.race inside the
    isolate): the run's --timeout ends it, with workerd and Node."""
    before = agent_processes()
    _, frame = run(tmp_path, (arm,), "scripted:team", always(arm, "while (true) {}"),
                      task_ids=("customer-country",), timeout_s=6)
    # QuickJS's own limit is the run's time (the code limit is min(tool timeout, run timeout)): either may end it first
    ended_by = {"timeout"} if arm == "cloudflare-codemode" else {"timeout", "max_turns"}
    assert frame.iloc[0].error_type in ended_by
    deadline = time.monotonic() + 5
    while agent_processes() != before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert agent_processes() == before, os.linesep.join(agent_processes())


@pytest.mark.parametrize("arm", ARMS)
def test_the_next_user_turn_is_sent_after_the_earlier_ones(tmp_path, arm):
    """A conversation of two scripted turns: the command runs once per turn, and its second turn's first request
    holds the first turn's message and answer (text) before the new message; each turn's program is its own."""
    tool, field, namespace = CODE_TOOLS[ARMS[arm]]
    lookup = ScriptedReply(tool_calls=((tool, {field: f'return await {namespace}.get_customer({{customer_id: '
                                                      f'"C-0007"}});'}),))
    requests: list = []

    def policy(request):
        requests.append(request)
        return [lookup, ScriptedReply("IN"), ScriptedReply("IN")][min(request.call_index, 2)]

    suite = load_suite("smoke")
    turns = ("In which country is customer C-0007?", "Say that code again, please.")
    task = replace(next(t for t in suite.tasks if t.id == "customer-country"), prompt="",
                   user=UserScenario("", turns=turns), max_turns=10)
    config = RunConfig(suite=replace(suite, tasks=(task,)), model="scripted:team", arms=(arm,), out_dir=tmp_path,
                       run_id="r")
    asyncio.run(Runner(config, provider=policy_provider("scripted:team", lambda task, arm: policy)).run())
    path = tmp_path / "smoke" / "r.parquet"
    row = read_results([path]).iloc[0]
    assert row.success and row.answer == "IN" and row.error_type == "", row.error_message
    said = [(m["role"], m["content"]) for m in requests[2].messages if m["role"] in ("user", "assistant")]
    assert said == [("user", turns[0]), ("assistant", "IN"), ("user", turns[1])]
    assert len(read_trajectory(path, row.sample_id).code_runs) == 1
