"""The reference replay (`scripted:reference`): it obeys the run's limits when tracing, gives no answer where its
own calls failed and the trace's did not, and never answers with an error it was shown."""

import asyncio
import time
from pathlib import Path

import pytest
from fastmcp import FastMCP

from harness.mcp.registry import register_server
from harness.models.scripted import ScriptedReply, ScriptedRequest
from harness.run.reference import DIVERGED, TRACE_FAILED, ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from tests.registered import unregister_server

TASK = next(t for t in load_suite("smoke").tasks if t.id == "customer-country")
CALL = ("get_customer", {"customer_id": "C-0007"})


def request(*messages: dict) -> ScriptedRequest:
    return ScriptedRequest(({"role": "system", "content": "rules"}, {"role": "user", "content": TASK.prompt},
                            *messages), (), 0)


def code_reply(observation: str, trace: ReferenceTrace) -> str:
    policy = reference_policy(trace, TASK, "codemode")
    return policy(request({"role": "assistant", "content": "```python\ncode\n```"},
                          {"role": "user", "content": f"Output:\n{observation}"}))


def test_code_replay_answers_the_last_line_the_code_printed():
    assert code_reply("C-0007\nIN", ReferenceTrace("IN", "C-0007\nIN", (CALL,), {})) == \
        "```python\nfinal_answer('IN')\n```"


def test_code_replay_replies_with_nothing_after_a_sandbox_crash_it_was_shown():
    crash = "Error: CRASH: the sandbox process died (No response during execution); it was restarted"
    assert code_reply(crash, ReferenceTrace("IN", "IN", (CALL,), {})) == ""  # the loop ends the run as the crash


def test_code_replay_gives_no_answer_when_the_traced_reference_failed():
    trace = ReferenceTrace("", "", (CALL,), {}, error="TimeoutError: tool 'get_customer' did not answer")
    assert code_reply("Error: TimeoutError: tool 'get_customer' did not answer", trace) == \
        f"```python\nfinal_answer({TRACE_FAILED!r})\n```"


def test_files_replay_reads_the_files_of_the_tools_it_calls_then_imports_them_then_answers():
    trace = ReferenceTrace("IN", "IN", (CALL,), {}, call_servers=("crm",))
    policy = reference_policy(trace, TASK, "codemode-files")
    explore = policy(request())
    assert explore == ("```python\nimport os\nprint(os.listdir('servers/crm'))\n"
                       "print(open('servers/crm/get_customer.py').read())\n```")
    done = {"role": "assistant", "content": explore}
    code = policy(request(done, {"role": "user", "content": "Output:\ndef get_customer(customer_id: str) -> dict:"}))
    assert code == f"```python\nfrom servers.crm import get_customer\n{TASK.reference.strip()}\n```"
    answer = policy(request(done, {"role": "user", "content": "Output:\n..."}, {"role": "assistant", "content": code},
                            {"role": "user", "content": "Output:\nIN"}))
    assert answer == "```python\nfinal_answer('IN')\n```"


def direct_replies(trace: ReferenceTrace, observation: str,
                   arm: str = "direct") -> tuple[ScriptedReply, ScriptedReply]:
    """The replay's first reply, and its reply after a tool message showing `observation` (a native-call arm)."""
    policy = reference_policy(trace, TASK, arm)
    first = policy(request())
    after = policy(request({"role": "assistant", "content": "", "tool_calls": []},
                           {"role": "tool", "tool_call_id": "call_0", "content": observation}))
    return first, after


def test_code_tool_replay_runs_the_reference_as_one_code_call_then_answers_its_last_printed_line():
    first, after = direct_replies(ReferenceTrace("IN", "C-0007\nIN", (CALL,), {}), "C-0007\nIN", "hybrid")
    assert first.tool_calls == (("run_python", {"code": TASK.reference.strip()}),)
    assert after.tool_calls == (("final_answer", {"answer": "IN"}),)


def test_code_tool_replay_replies_with_nothing_after_a_sandbox_crash_it_was_shown():
    crash = "Error: CRASH: the sandbox process died (No response during execution); it was restarted"
    assert direct_replies(ReferenceTrace("IN", "IN", (CALL,), {}), crash, "hybrid")[1] == ""


def test_direct_replay_gives_no_answer_when_its_call_failed_and_the_traced_one_did_not():
    first, after = direct_replies(ReferenceTrace("IN", "IN", (CALL,), {}, failed_calls=(False,)),
                                  "Error: tool 'get_customer' did not answer within 2 s")
    assert first.tool_calls == (CALL,)
    assert after.tool_calls == (("final_answer", {"answer": DIVERGED}),)


def test_direct_replay_goes_on_after_a_call_that_failed_when_traced_too():
    _, after = direct_replies(ReferenceTrace("IN", "IN", (CALL,), {}, failed_calls=(True,)),
                              "Error: no customer has the id 'C-0007'")
    assert after.tool_calls == (("final_answer", {"answer": "IN"}),)


OTHER = ("get_customer", {"customer_id": "C-0001"})
LAST = ("list_orders", {"customer_id": "C-0007"})
BATCHED = ReferenceTrace("IN", "IN", (CALL, OTHER, LAST), {}, failed_calls=(True, False, False),
                         call_batches=(4, 4, None))


def results(*texts: str) -> tuple[dict, ...]:
    return tuple({"role": "tool", "tool_call_id": f"call_{n}", "content": text} for n, text in enumerate(texts))


def test_with_parallel_calls_a_batch_the_reference_awaited_together_is_one_reply():
    policy = reference_policy(BATCHED, TASK, "direct", parallel=True)
    assert policy(request()).tool_calls == (CALL, OTHER)
    assert policy(request({"role": "assistant", "content": ""}, *results("Error: x", "{}"))).tool_calls == (LAST,)


def test_without_parallel_calls_the_batch_is_replayed_one_call_a_reply():
    policy = reference_policy(BATCHED, TASK, "direct")
    assert [policy(request()).tool_calls for _ in range(3)] == [(CALL,), (OTHER,), (LAST,)]


def test_a_replayed_batch_diverges_when_a_call_that_succeeded_in_the_trace_failed():
    policy = reference_policy(BATCHED, TASK, "direct", parallel=True)
    policy(request())
    after = policy(request({"role": "assistant", "content": ""}, *results("{}", "Error: x")))
    assert after.tool_calls == (("final_answer", {"answer": DIVERGED}),)


def test_react_replay_gives_no_answer_when_its_call_failed_and_the_traced_one_did_not():
    policy = reference_policy(ReferenceTrace("IN", "IN", (CALL,), {}, failed_calls=(False,)), TASK, "react")
    assert policy(request())["next_tool_name"] == "get_customer"
    trajectory = ("[[ ## trajectory ## ]]\n[[ ## thought_0 ## ]]\nI call get_customer.\n\n[[ ## observation_0 ## ]]\n"
                  "Error: tool 'get_customer' did not answer within 2 s\n\nRespond with the next fields.")
    after = policy(request({"role": "user", "content": trajectory}))
    assert after["next_tool_name"] == "final_answer" and after["next_tool_args"] == {"answer": DIVERGED}


SLOW_SUITE = """
suite: slow
servers: [slow]
tasks:
  - id: lookup
    category: fault
    prompt: "Call lookup and answer what it returns."
    expected: found
    scorer: exact
    reference: print(lookup())
"""
LOOKUPS = {"n": 0}


def slow_server(ref) -> FastMCP:
    """lookup answers at once the first time it is called in the process (the trace), then takes 120 s (more than
    the default tool timeout)."""
    mcp = FastMCP("slow")

    @mcp.tool
    async def lookup() -> str:
        """Finds it."""
        LOOKUPS["n"] += 1
        if LOOKUPS["n"] > 1:
            await asyncio.sleep(120)
        return "found"

    return mcp


@pytest.fixture
def slow_suite(tmp_path: Path):
    register_server("slow", slow_server, "a tool that is slow after its first call")
    path = tmp_path / "slow.yaml"
    path.write_text(SLOW_SUITE)
    LOOKUPS["n"] = 0
    yield load_suite(str(path))
    unregister_server("slow")


@pytest.mark.sandbox
def test_a_direct_run_whose_call_timed_out_does_not_replay_the_traced_answer(slow_suite, tmp_path):
    config = RunConfig(suite=slow_suite, model="scripted:reference", arms=("direct",), out_dir=tmp_path,
                       tool_timeout_s=0.5)
    row, = asyncio.run(Runner(config).run()).records
    assert row.tool_errors == 1 and not row.success and row.answer == DIVERGED


@pytest.mark.sandbox
def test_tracing_the_reference_obeys_the_runs_tool_timeout(slow_suite, tmp_path):
    LOOKUPS["n"] = 1  # every call is slow, the trace's too
    config = RunConfig(suite=slow_suite, model="scripted:reference", arms=("direct",), out_dir=tmp_path,
                       tool_timeout_s=0.5)
    started = time.perf_counter()
    row, = asyncio.run(Runner(config).run()).records
    assert time.perf_counter() - started < 45  # cut at 0.5 s in the trace and in the run (not the default 60 s)
    assert row.tool_errors == 1 and not row.success and row.answer == TRACE_FAILED


@pytest.mark.sandbox
async def test_a_reference_cut_short_by_its_time_limit_keeps_what_it_had_printed(sandbox_pool):
    from dataclasses import replace

    from harness.limits import Limits
    from harness.run.reference import run_reference

    smoke = load_suite("smoke")
    task = replace(next(t for t in smoke.tasks if t.id == "customer-country"),
                   reference="import time\nprint('looked up')\ntime.sleep(4)\nprint('IN')")
    trace = await run_reference(task, sandbox_pool, limits=Limits(timeout_s=2.0))
    assert trace.stdout == "looked up\n" and trace.error
