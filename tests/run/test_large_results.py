"""Large tool results and sandbox crashes, end to end through the runner in both arms: a 50 MB result works, one
over the run's limit is a tool error the agent sees and the row records, and a sandbox that dies is the row's
`sandbox_crash`, never its answer. One suite run (one sandbox boot) serves every test here."""

import asyncio

import pytest
from fastmcp import FastMCP

from harness.agents.scaffold import PLAIN
from harness.mcp.registry import register_server
from harness.models.scripted import ScriptedReply, ScriptedRequest, policy_provider
from harness.run.records import read_trajectory
from harness.run.reference import ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner
from harness.sandbox.interpreter import Interpreter
from harness.tasks.suite import load_suite
from tests.registered import unregister_server

pytestmark = pytest.mark.sandbox

LIMIT_MB = 50.5
SUITE_YAML = """
suite: bulk
servers: [bulk]
tasks:
  - id: big
    prompt: "How many characters does text(megabytes=50) return?"
    expected: 50000000
    scorer: numeric
  - id: over
    prompt: "Read text(megabytes=51)."
    expected: nothing
    scorer: exact
  - id: crash
    prompt: "Print something."
    expected: something
    scorer: exact
    reference: print("crash-here")
"""
CODE = {"big": "final_answer(len(text(megabytes=50)))",
        "over": "try:\n    text(megabytes=51)\nexcept ToolError as exc:\n    final_answer('refused: ' + str(exc))"}
CALLS = {"big": ("text", {"megabytes": 50}), "over": ("text", {"megabytes": 51})}


def bulk_server(ref) -> FastMCP:
    server = FastMCP("bulk")

    @server.tool(output_schema=None)
    def text(megabytes: float) -> str:
        """Lines of text, `megabytes` million characters in all."""
        size = int(megabytes * 1_000_000)
        return "abcdefghi\n" * (size // 10) + "x" * (size % 10)

    return server


def policy_for(task, arm: str):
    if task.id == "crash":  # the reference replay: its code, then final_answer() of the last line it printed
        return reference_policy(ReferenceTrace("", "", (), {}), task, arm)

    def policy(request: ScriptedRequest):
        if arm == "codemode":
            return f"```python\n{CODE[task.id]}\n```"
        if request.call_index == 0:
            return ScriptedReply(tool_calls=(CALLS[task.id],))
        return ScriptedReply(tool_calls=(("final_answer", {"answer": "read it"}),))

    return policy


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """Every row of one run of the suite through direct and codemode, by (task, arm), with its results file. The
    sandbox dies (its process killed) when it is given the crash task's code."""
    folder = tmp_path_factory.mktemp("bulk")
    (folder / "bulk.yaml").write_text(SUITE_YAML)
    original = Interpreter._in_thread_call

    def crashing(self, expression, timeout_s):
        if "crash-here" in expression:
            self._in_thread_start()
            self._python.deno_process.kill()
            self._python.deno_process.wait()
        return original(self, expression, timeout_s)

    register_server("bulk", bulk_server)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Interpreter, "_in_thread_call", crashing)
        config = RunConfig(suite=load_suite(str(folder / "bulk.yaml")), model="scripted:bulk",
                           arms=("direct", "codemode"), out_dir=folder / "out", run_id="r", scaffold=PLAIN,
                           max_tool_result_mb=LIMIT_MB)
        try:
            summary = asyncio.run(Runner(config, provider=policy_provider("scripted:bulk", policy_for)).run())
        finally:
            unregister_server("bulk")
    return {(r.task_id, r.arm): r for r in summary.records}, summary.path


def test_a_50_mb_result_reaches_code_whole(rows):
    row = rows[0][("big", "codemode")]
    assert row.success and row.answer == "50000000" and row.error_type == ""
    assert row.tool_calls == 1 and row.tool_errors == 0


def test_a_50_mb_result_reaches_the_direct_arm_as_its_tool_message(rows):
    by_key, path = rows
    row = by_key[("big", "direct")]
    assert row.error_type == "" and row.tool_calls == 1 and row.tool_errors == 0
    trajectory = read_trajectory(path, row.sample_id)
    assert trajectory.tool_calls[0].result_chars == 50_000_000
    assert trajectory.steps[0].observation.startswith("abcdefghi\n")


def test_a_result_over_the_limit_is_a_tool_error_code_can_catch(rows):
    row = rows[0][("over", "codemode")]
    assert row.answer.startswith(f"refused: tool 'text' returned 51.0 MB, over this run's limit of {LIMIT_MB:g} MB")
    assert row.tool_calls == 1 and row.tool_errors == 1 and row.error_type == ""


def test_a_result_over_the_limit_is_the_direct_arms_tool_message(rows):
    by_key, path = rows
    row = by_key[("over", "direct")]
    assert row.tool_errors == 1
    observation = read_trajectory(path, row.sample_id).steps[0].observation
    assert observation.startswith("Error: tool 'text' returned 51.0 MB, over this run's limit")


def test_every_row_records_the_runs_limit(rows):
    assert {row.max_tool_result_mb for row in rows[0].values()} == {LIMIT_MB}


def test_a_sandbox_crash_is_the_rows_error_and_never_its_answer(rows):
    by_key, path = rows
    row = by_key[("crash", "codemode")]
    assert row.error_type == "sandbox_crash" and row.answer == "" and not row.success
    assert row.error_message.startswith("CRASH: the sandbox process died")
    steps = read_trajectory(path, row.sample_id).steps
    assert steps[0].error_kind == "crash"  # the step's own error, as the model was shown it
