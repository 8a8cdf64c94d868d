"""The registry of replay protocols: each arm's or bridge's module registers the protocol it speaks, an arm names the
protocol and that module, and an unknown protocol is one line naming it and the registered ones."""

import pytest

from harness.agents.arm import replays
from harness.agents.arms import ARMS
from harness.agents.replay import REPLAY_PROTOCOLS, ReferenceTrace, register_replay
from harness.errors import UserError
from harness.models.scripted import ScriptedReply, ScriptedRequest
from harness.tasks.task import Task

TASK = Task(id="t", prompt="Which country?", expected="IN", servers=("crm",),
            reference='print(get_customer(customer_id="C-0007")["country"])')
TRACE = ReferenceTrace(answer="IN", stdout="IN\n", tool_calls=(("get_customer", {"customer_id": "C-0007"}),),
                       end_state={})
FIRST = ScriptedRequest(messages=({"role": "user", "content": "Which country?"},), output_fields=(), call_index=0)


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_every_arms_protocol_is_registered_by_the_module_it_names(arm):
    replay = ARMS[arm].replay
    replay.check()
    assert replay.protocol in REPLAY_PROTOCOLS


def test_an_unknown_protocol_is_one_line_naming_it_and_the_registered_ones():
    with pytest.raises(UserError) as raised:
        replays("tool_call", "harness.agents.direct").check()
    message = str(raised.value)
    assert "unknown replay protocol 'tool_call'" in message and "tool_calls" in message and "\n" not in message


def test_a_protocol_registered_outside_the_package_replays_through_the_arm_that_names_it():
    seen = []

    @register_replay("one-call-then-answer")
    def replay(trace: ReferenceTrace, task: Task, parallel: bool):
        seen.append((trace, task.id, parallel))
        return lambda request: ScriptedReply(tool_calls=trace.tool_calls)

    try:
        policy = replays("one-call-then-answer", __name__)(TRACE, TASK, True, None)
        assert policy(FIRST) == ScriptedReply(tool_calls=TRACE.tool_calls) and seen == [(TRACE, "t", True)]
    finally:
        REPLAY_PROTOCOLS.pop("one-call-then-answer")
