"""`scripted:reference` through smolagents' own formats: its CodeAgent's code blocks (the reference code, then
final_answer() of what it printed, read from the execution logs the agent sent back) and its ToolCallingAgent's
native calls (whose results and errors come back in user messages); a run that raised where the trace did not gets
no answer, never the traced one."""

from harness.agents.bridges.smolagents_replay import replay_smol_code, replay_smol_tools
from harness.agents.replay import DIVERGED, ReferenceTrace
from harness.models.scripted import ScriptedReply, ScriptedRequest
from harness.tasks.task import Task

TASK = Task(id="t", prompt="Which country?", expected="IN", servers=("crm",),
            reference='print(get_customer(customer_id="C-0007")["country"])')
TRACE = ReferenceTrace(answer="IN", stdout="IN\n", tool_calls=(("get_customer", {"customer_id": "C-0007"}),),
                       end_state={}, failed_calls=(False,))


def request(*messages: dict) -> ScriptedRequest:
    return ScriptedRequest(messages=({"role": "system", "content": "You are an expert assistant..."},
                                     {"role": "user", "content": "New task:\nWhich country?"}, *messages),
                           output_fields=(), call_index=0)


def test_codeagent_gets_the_reference_in_its_code_tags_then_answers_what_the_logs_show():
    policy = replay_smol_code(TRACE, TASK, False)
    first = policy(request())
    assert first.startswith("Thought:") and f"<code>\n{TASK.reference}\n</code>" in first
    logs = {"role": "user", "content": "Observation:\nExecution logs:\nIN\nLast output from code snippet:\nNone"}
    assert policy(request({"role": "assistant", "content": first}, logs)).endswith(
        "<code>\nfinal_answer('IN')\n</code>")


def test_codeagent_whose_executor_raised_gets_no_answer():
    policy = replay_smol_code(TRACE, TASK, False)
    raised = {"role": "user", "content": "Call id: call_1\nError:\nCode execution failed due to: KeyError: 0\n"}
    assert f"final_answer({DIVERGED!r})" in policy(request({"role": "assistant", "content": policy(request())},
                                                           raised))


def test_toolcallingagent_ends_with_its_final_answer_tool_unless_a_call_raised_where_the_trace_did_not():
    for shown, answer in (("Observation:\n{\"country\": \"IN\"}", "IN"),
                          ("Error:\nArgument country is required\nNow let's retry", DIVERGED)):
        policy = replay_smol_tools(TRACE, TASK, False)
        assert policy(request()) == ScriptedReply(tool_calls=TRACE.tool_calls)
        called = {"role": "assistant", "content": "Calling tools:\n[...]"}
        assert policy(request(called, {"role": "user", "content": shown})) == ScriptedReply(
            tool_calls=(("final_answer", {"answer": answer}),))
