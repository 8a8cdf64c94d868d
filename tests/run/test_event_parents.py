"""Every event of a run names its parent as the run knew it (a tool call made from code that execution, the
execution and each LM call their step, a step the run), and what was running when a run ended (code, an LM call)
is kept, cut short, with the output the code had printed."""

import asyncio
import threading

import pytest

from harness.agents.hybrid import CODE_TOOL
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.trace.events import CodeEvent, ModelEvent, StepEvent, ToolEvent
from harness.trace.transcript import CODE_CUT_SHORT, RUN_ID
from harness.trace.transcript_file import read_transcript_files

GATHERED = ("import asyncio\n"
            "a, b = await asyncio.gather(get_customer(customer_id='C-0001'), get_customer(customer_id='C-0002'))\n"
            "print(a['country'], b['country'])")


def codes(*blocks: str):
    def policy_for(task, arm):
        replies = [f"```python\n{block}\n```" for block in blocks]
        return lambda request: replies.pop(0)
    return policy_for


def run(tmp_path, policy_for, pool=None, **options):
    config = RunConfig(suite=load_suite("smoke"), model="scripted:code", arms=("codemode",),
                       task_ids=("customer-country",), out_dir=tmp_path, run_id="r", **options)
    asyncio.run(Runner(config, provider=policy_provider("scripted:code", policy_for), pool=pool).run())
    row = read_results([tmp_path / "smoke" / "r.parquet"]).iloc[0]
    return row, read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)


@pytest.mark.sandbox
def test_every_event_of_a_code_run_with_gathered_calls_names_its_parent(tmp_path):
    row, trajectory = run(tmp_path, codes(GATHERED, "final_answer('IN')"))
    assert row.success
    events = trajectory.events
    assert len({e.id for e in events}) == len(events) and all(e.id > RUN_ID for e in events)
    steps = {e.step: e.id for e in trajectory.of(StepEvent)}
    assert all(e.parent == RUN_ID for e in trajectory.of(StepEvent))
    first_code = trajectory.of(CodeEvent)[0]
    assert first_code.parent == steps[0]
    gathered = trajectory.of(ToolEvent)
    assert len(gathered) == 2 and gathered[0].call.batch is not None
    assert {e.parent for e in gathered} == {first_code.id}  # made from that code: its children
    assert [e.parent for e in trajectory.of(ModelEvent)] == [steps[0], steps[1]]
    [written] = read_transcript_files(tmp_path / "smoke" / "r.transcripts")
    assert [(line["id"], line["parent"]) for line in written.events] == [(e.id, e.parent) for e in events]


@pytest.mark.sandbox
def test_code_running_when_the_run_timed_out_is_kept_cut_short_with_its_tool_calls(tmp_path):
    # the code's one tool call waits 3 s; the run's time limit (2 s) ends while the code is running
    row, trajectory = run(tmp_path, codes("print(get_customer(customer_id='C-0007')['country'])"),
                          tool_latency_s=3.0, tool_timeout_s=10.0, timeout_s=2.0)
    assert row.error_type == "timeout"
    [code] = trajectory.of(CodeEvent)
    assert code.execution.cut_short and code.execution.error == CODE_CUT_SHORT
    assert code.execution.code.startswith("print(get_customer(") and code.execution.duration_s > 1.0
    [call] = trajectory.of(ToolEvent)
    assert call.parent == code.id and code.execution.tool_calls == 1
    assert row.turns == 0  # the step never ended: no turn, but its code is kept


@pytest.mark.sandbox
def test_code_running_when_the_run_timed_out_keeps_the_lines_it_had_printed(tmp_path):
    # the program prints, then sleeps past the run's time limit (2 s) with no tool call to wait in
    program = "import time\nprint('looking up C-0007')\nprint('then waiting')\ntime.sleep(4)\nprint('too late')"
    row, trajectory = run(tmp_path, codes(program), timeout_s=2.0)
    assert row.error_type == "timeout"
    [code] = trajectory.of(CodeEvent)
    assert code.execution.cut_short and code.execution.error == CODE_CUT_SHORT
    assert code.execution.stdout == "looking up C-0007\nthen waiting\n"


def hybrid_code(block: str):
    def policy_for(task, arm):
        return lambda request: ScriptedReply(tool_calls=((CODE_TOOL, {"code": block}),))
    return policy_for


@pytest.mark.sandbox
@pytest.mark.parametrize("arm", ["codemode-files", "hybrid"])
def test_the_other_sandbox_arms_keep_the_output_of_code_cut_short_alike(tmp_path, arm):
    program = "import time\nprint('started')\ntime.sleep(4)"
    config = RunConfig(suite=load_suite("smoke"), model="scripted:code", arms=(arm,), task_ids=("customer-country",),
                       out_dir=tmp_path, run_id="r", timeout_s=2.0)
    policy_for = hybrid_code(program) if arm == "hybrid" else codes(program)
    asyncio.run(Runner(config, provider=policy_provider("scripted:code", policy_for)).run())
    row = read_results([tmp_path / "smoke" / "r.parquet"]).iloc[0]
    [code] = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id).of(CodeEvent)
    assert row.error_type == "timeout"
    assert code.execution.cut_short and code.execution.stdout == "started\n"


@pytest.mark.sandbox
def test_code_that_ended_records_its_whole_output_once(tmp_path):
    row, trajectory = run(tmp_path, codes("print('one')\nprint('two', end='')", "final_answer('IN')"))
    assert row.success
    first = trajectory.of(CodeEvent)[0].execution
    assert not first.cut_short and first.stdout == "one\ntwo"


def test_an_lm_call_out_when_the_run_timed_out_is_kept_cut_short_and_not_counted(tmp_path):
    release = threading.Event()

    def slow(task, arm):
        def reply(request):
            release.wait(10)  # the model is still thinking when the run's time runs out
            return ScriptedReply(tool_calls=(("final_answer", {"answer": "IN"}),))
        return reply

    config = RunConfig(suite=load_suite("smoke"), model="scripted:slow", arms=("direct",),
                       task_ids=("customer-country",), out_dir=tmp_path, run_id="r", timeout_s=1.0)
    try:
        asyncio.run(Runner(config, provider=policy_provider("scripted:slow", slow)).run())
    finally:
        release.set()
    row = read_results([tmp_path / "smoke" / "r.parquet"]).iloc[0]
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)
    assert row.error_type == "timeout"
    [call] = trajectory.lm_calls
    assert call.cut_short and call.output == "" and call.messages
    assert 0 < call.latency_s <= row.latency_s  # its time until the run ended (how much depends on the machine's load)
    assert row.llm_calls == 0  # no reply: in the transcript, not in the counts
